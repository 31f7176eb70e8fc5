"""Nested multi-file specs (issue 17, class 1): a Redocly-style split, where a `$ref` resolves
relative to the file that holds it, at any depth (`tests/data/nested-spec/`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support import REPO, generate, tree_digest
from typed_mcp.errors import SpecError
from typed_mcp.spec.load import load
from typed_mcp.spec.normalize import normalize

pytestmark = pytest.mark.anyio

NESTED = REPO / "tests" / "data" / "nested-spec"
# Every operation of the fixture: operation files, a path-item file (JSON), path items by fragment.
TOOLS = {
    "droplets_list",
    "droplets_create",
    "droplets_get",
    "droplets_destroy",
    "images_get",
    "volumes_list",
    "volumes_create",
    "regions_list",
}


def _resolved(schema: dict, node: dict) -> dict:
    """`node` with its local `$ref` (into `schema`'s `$defs`) and a nullable `anyOf` followed."""
    while True:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
        elif "anyOf" in node and {"type": "null"} in node["anyOf"]:
            node = next(part for part in node["anyOf"] if part != {"type": "null"})
        else:
            return node


def _at(schema: dict, *path: str) -> dict:
    """The schema at a path of property names (`[]` for an array's items), through refs."""
    node = _resolved(schema, schema)
    for part in path:
        node = _resolved(schema, node["items"] if part == "[]" else node["properties"][part])
    return node


@pytest.fixture(scope="module")
def nested_package(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("nested") / "nested-cloud-mcp"
    generate(NESTED / "openapi.yaml", out, "nested-cloud-mcp")
    return out


async def test_every_operation_of_a_nested_spec_is_a_tool_with_its_output_schema(nested_package):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nested_cloud_mcp"],
        env={**os.environ, "PYTHONPATH": str(nested_package / "src")},
    )
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    manifest = json.loads((nested_package / "typed-mcp.json").read_text())
    assert manifest["skipped"] == [] and "notes" not in manifest
    assert tools["droplets_destroy"].output_schema is None  # 204
    assert all(tools[name].output_schema for name in TOOLS - {"droplets_destroy"})

    listing = tools["droplets_list"].output_schema
    droplet = _at(listing, "droplets", "[]")  # resources/droplets/models/droplet.yml, from responses/
    assert droplet["required"] == ["id", "name", "status", "image", "region"]
    assert _at(listing, "droplets", "[]", "image", "distribution")["enum"][0] == "Arch Linux"  # ../../images/
    assert _at(listing, "droplets", "[]", "image", "regions", "[]")["enum"][0] == "ams3"  # ../../../shared/
    # Back up to the root file's own Region, and `#/definitions/...` inside network.yml meaning its own.
    assert _at(listing, "droplets", "[]", "region", "slug")["description"] == "The region's slug (root file)."
    assert _at(listing, "droplets", "[]", "networks", "v4", "[]", "ip_address")["format"] == "ipv4"
    # pages.yml#/pagination -> #/page_links, inside pages.yml
    assert set(_at(listing, "links", "pages")["properties"]) == {"next", "last"}
    assert _at(listing, "meta", "total")["type"] == "integer"  # allOf of three files
    arguments = tools["droplets_list"].input_schema["properties"]
    assert (arguments["per_page"]["maximum"], arguments["per_page"]["default"]) == (200, 20)
    assert set(arguments) == {"per_page", "page", "tag_name"}

    assert tools["droplets_get"].input_schema["properties"]["droplet_id"]["minimum"] == 1  # parameters.yml#/
    assert _at(tools["droplets_get"].output_schema, "droplet", "status")["enum"] == ["active", "archive", "new", "off"]
    assert tools["images_get"].input_schema["required"] == ["image_id"]  # a path item's parameter, in JSON
    assert _at(tools["images_get"].output_schema, "image", "tags", "[]")["maxLength"] == 255
    body = _resolved(tools["droplets_create"].input_schema, tools["droplets_create"].input_schema["properties"]["body"])
    assert body["required"] == ["name", "region", "image"]  # models/droplet_create.json
    volume = _at(tools["volumes_create"].output_schema, "volume")  # `#/components/...` of volumes.yml
    assert _at(tools["volumes_create"].output_schema, "volume", "region")["enum"][-1] == "tor1"
    assert volume["required"] == ["name", "size_gigabytes"]

    # One model per schema file, however many paths reach it: droplet.yml by three, image.yml by two.
    models = {p.stem for p in (nested_package / "src" / "nested_cloud_mcp" / "models").glob("*.py")}
    assert {"droplet", "image", "region", "region_slug"} <= models
    assert not {m for m in models if m.startswith(("droplet_", "image_", "region_")) and m[-1].isdigit()}


def test_the_bundle_places_each_file_once_and_keeps_fragments_per_file():
    data = normalize(load(str(NESTED / "openapi.yaml"))).data
    schemas = data["components"]["schemas"]
    # The root's Droplet *is* droplet.yml (no alias beside a copy); Region stays the root's own;
    # the shared error keeps its name apart from the root's Error; image.yml is there once.
    assert schemas["Droplet"]["properties"]["image"] == {"$ref": "#/components/schemas/image"}
    assert schemas["Droplet"]["properties"]["region"] == {"$ref": "#/components/schemas/Region"}
    assert schemas["Error"]["properties"] == {"root_error_only": {"type": "string"}}
    assert schemas["error"]["required"] == ["id", "message"]
    assert sorted(schemas) == sorted(
        "Droplet Region Error image region_slug tag networks network_v4 pagination page_links meta error"
        " droplet_create volume".split()
    )
    assert "x-typed-mcp-external" not in data  # path items and operations are copied in place
    assert data["paths"]["/droplets"]["get"]["operationId"] == "droplets_list"
    assert data["paths"]["/volumes"]["post"]["operationId"] == "volumes_create"


def test_generation_does_not_depend_on_where_the_spec_lives(nested_package, tmp_path):
    moved = tmp_path / "somewhere" / "else"
    shutil.copytree(NESTED, moved)
    # Two files named tag.yml make a hashed schema name: its hash must not see the absolute path.
    (moved / "resources" / "droplets" / "models" / "tag.yml").write_text("type: string\nmaxLength: 64\n")
    create = moved / "resources" / "droplets" / "models" / "droplet_create.json"
    create.write_text(create.read_text().replace("../../../shared/models/tag.yml", "tag.yml"))
    first, second = tmp_path / "a" / "pkg", tmp_path / "b" / "pkg"
    generate(moved / "openapi.yaml", first, "nested-cloud-mcp")
    elsewhere = tmp_path / "other" / "place"
    shutil.copytree(moved, elsewhere)
    generate(elsewhere / "openapi.yaml", second, "nested-cloud-mcp", "--no-cache")
    assert tree_digest(first) == tree_digest(second)
    hashed = [p.stem for p in (first / "src" / "nested_cloud_mcp" / "models").glob("tag_*.py")]
    assert len(hashed) == 1 and re.fullmatch(r"tag_[0-9a-f]{6}", hashed[0]), hashed


def _write(root: Path, files: dict[str, object]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))


def _spec_with_path_file(path_file: str, schema_ref: str) -> dict[str, object]:
    """A root whose one path item lives in `path_file`, answering with the schema `schema_ref`."""
    content = {"application/json": {"schema": {"$ref": schema_ref}}}
    return {
        "openapi.json": {
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": {"/p": {"$ref": path_file}},
        },
        path_file: {"get": {"responses": {"200": {"description": "ok", "content": content}}}},
    }


def test_nested_files_keep_the_ref_containment(tmp_path):
    """A ref three folders down still may not leave the spec's folder, by `..` or by a symlink."""
    (tmp_path / "secret.json").write_text(json.dumps({"type": "object", "description": "TOPSECRET"}))
    folder = tmp_path / "api"
    _write(folder, _spec_with_path_file("a/b/p.json", "../../inside.json"))
    _write(folder, {"inside.json": {"type": "object"}})
    assert normalize(load(str(folder / "openapi.json"))).data["components"]["schemas"] == {"inside": {"type": "object"}}
    (folder / "link.json").symlink_to(tmp_path / "secret.json")  # inside by name, outside for real
    for target in ("../../../secret.json", "../../link.json", "../%2E%2E/../../secret.json"):
        _write(folder, _spec_with_path_file("a/b/p.json", target))
        with pytest.raises(SpecError, match="leaves the spec's folder"):
            normalize(load(str(folder / "openapi.json")))
    # --ref-root widens it, for nested files too.
    _write(folder, _spec_with_path_file("a/b/p.json", "../../../secret.json"))
    data = normalize(load(str(folder / "openapi.json")), ref_root=tmp_path).data
    assert data["components"]["schemas"]["secret"]["description"] == "TOPSECRET"


def test_refs_between_files_may_be_cyclic(tmp_path):
    """A recursive schema across two files ends (each file placed once, by its real path)."""
    _write(
        tmp_path,
        {
            "openapi.json": {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {"/n": {"$ref": "p/n.json"}},
            },
            "p/n.json": {
                "get": {
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "../m/a.json"}}},
                        }
                    }
                }
            },
            "m/a.json": {"type": "object", "properties": {"b": {"$ref": "b.json"}}},
            "m/b.json": {"type": "object", "properties": {"a": {"$ref": "./../m/a.json"}}},
        },
    )
    schemas = normalize(load(str(tmp_path / "openapi.json"))).data["components"]["schemas"]
    assert schemas == {
        "a": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/b"}}},
        "b": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/a"}}},
    }
