"""Tool annotations from what an operation does, overridable per operation, recorded with their
reasons; and the boolean form of `x-mcp`. Checked through the MCP Python SDK client against
generated servers (stdio), with `typed-mcp.json` and the semantic diff read as a user reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.client import Client

from support import HttpServer, Reply, generate, package_stdio, run_cli

JSON_OK = {"200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}}
BODY = {"content": {"application/json": {"schema": {"type": "object", "properties": {"names": {"type": "array"}}}}}}


def fastapi_post(function: str, path: str) -> dict:
    """A POST as FastAPI writes it: the operationId is the function, the route and the method."""
    route = "".join(c if c.isalnum() else "_" for c in path)
    return {"post": {"operationId": f"{function}{route}_post", "requestBody": BODY, "responses": JSON_OK}}


# Shaped like dstack's server API (0.22.5): every operation a POST, read or write said only by the
# route's last word and the function's name; the title is FastAPI's default.
DSTACK_ROUTES = {
    "/api/users/list": "list_users",
    "/api/users/get_my_user": "get_my_user",
    "/api/users/create": "create_user",
    "/api/users/delete": "delete_users",
    "/api/projects/list": "list_projects",
    "/api/projects/delete": "delete_projects",
    "/api/project/{project_name}/runs/list": "list_runs",
    "/api/project/{project_name}/runs/get": "get_run",
    "/api/project/{project_name}/runs/get_plan": "get_plan",
    "/api/project/{project_name}/runs/apply": "apply_plan",
    "/api/project/{project_name}/runs/submit": "submit_run",
    "/api/project/{project_name}/runs/stop": "stop_runs",
    "/api/project/{project_name}/runs/delete": "delete_runs",
    "/api/project/{project_name}/fleets/delete_instances": "delete_fleet_instances",
    "/api/project/{project_name}/volumes/list": "list_volumes",
    "/api/project/{project_name}/volumes/delete": "delete_volumes",
    "/api/project/{project_name}/gateways/set_default": "set_default_gateway",
    "/api/project/{project_name}/gateways/get_or_create": "get_or_create_gateway",
    "/api/project/{project_name}/logs/poll": "poll_logs",
    "/api/project/{project_name}/secrets/get": "get_secret",
    "/api/project/{project_name}/secrets/create_or_update": "create_or_update_secret",
}
READ = {"list_users", "get_my_user", "list_projects", "list_runs", "get_run", "get_plan", "list_volumes"}
READ |= {"poll_logs", "get_secret"}
DESTRUCTIVE = {"delete_users", "delete_projects", "delete_runs", "delete_fleet_instances", "delete_volumes"}


def dstack_spec() -> dict:
    paths = {path: fastapi_post(function, path) for path, function in DSTACK_ROUTES.items()}
    for path, item in paths.items():
        if "{project_name}" in path:
            item["post"]["parameters"] = [
                {"name": "project_name", "in": "path", "required": True, "schema": {"type": "string"}}
            ]
    return {"openapi": "3.1.0", "info": {"title": "FastAPI", "version": "0.1.0"}, "paths": paths}


@pytest.fixture(scope="module")
def dstack(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dstack") / "dstack-mcp"
    generate(dstack_spec(), out, "dstack-mcp")
    return out


def hints(tool) -> tuple[bool, bool, bool]:
    a = tool.annotations
    return a.read_only_hint, a.destructive_hint, a.idempotent_hint


@pytest.mark.anyio
async def test_an_all_post_api_gets_its_hints_from_what_operations_say(dstack: Path):
    async with Client(package_stdio(dstack, "dstack_mcp")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(DSTACK_ROUTES.values())
    for name, tool in tools.items():
        assert tool.annotations.destructive_hint is not None and tool.annotations.open_world_hint is True
        if name in READ:
            assert hints(tool) == (True, False, True), name
        elif name in DESTRUCTIVE:
            assert hints(tool) == (False, True, False), name
        else:  # create, apply, submit, stop, set, get_or_create, create_or_update: writes, not destructive
            assert hints(tool) == (False, False, False), name
    # Every hint is recorded with its reason.
    recorded = json.loads((dstack / "typed-mcp.json").read_text())["annotations"]
    assert set(recorded) == set(tools)
    assert recorded["delete_runs"] == (
        "readOnlyHint false, destructiveHint true: its name delete_runs says delete; idempotentHint false: POST, and"
        " nothing in its name or summary says it only reads or destroys; openWorldHint true: it calls an API over"
        " the network"
    )
    assert recorded["list_runs"].startswith(
        "readOnlyHint true, idempotentHint true: a POST, and its name list_runs says list (and nothing there writes);"
    )
    assert "readOnlyHint false" in recorded["get_or_create_gateway"]


@pytest.mark.anyio
async def test_read_only_serves_the_list_and_get_tools_of_an_all_post_api(dstack: Path):
    with HttpServer() as upstream:
        upstream.default = Reply(200, {"runs": []})
        params = package_stdio(dstack, "dstack_mcp", "--read-only")
        params.env = {**params.env, "DSTACK_MCP_BASE_URL": upstream.url}
        async with Client(params) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == READ
            result = await client.call_tool("list_runs", {"project_name": "main", "body": {"names": []}})
            assert not result.is_error and result.structured_content == {"runs": []}
            refused = await client.call_tool("delete_runs", {"project_name": "main", "body": {"names": ["a"]}})
            assert refused.is_error and "--read-only" in refused.content[0].text
    assert [(seen.method, seen.raw_path) for seen in upstream.seen] == [("POST", "/api/project/main/runs/list")]


ITEMS = {
    "openapi": "3.1.0",
    "info": {"title": "Items", "version": "1"},
    "paths": {
        "/items/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {"operationId": "getItem", "summary": "Get an item", "responses": JSON_OK},
            "put": {
                "operationId": "replaceItem",
                "summary": "Replace an item",
                "requestBody": BODY,
                "responses": JSON_OK,
            },
            "patch": {"operationId": "editItem", "summary": "Edit an item", "requestBody": BODY, "responses": JSON_OK},
            "delete": {"operationId": "deleteItem", "responses": JSON_OK},
        },
        "/stars/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "put": {
                "operationId": "starItem",
                "summary": "Star an item",
                "responses": JSON_OK,
                # The API's owner knows starring only adds: not destructive, and says so.
                "x-mcp": {"annotations": {"destructiveHint": False, "title": "Star it"}},
            },
            "patch": {
                "operationId": "touchStar",
                "responses": JSON_OK,
                "x-mcp": {"annotations": {"destructiveHint": "no", "colour": "red"}},  # refused: a note
            },
        },
    },
}


@pytest.mark.anyio
async def test_put_and_patch_are_destructive_unless_the_spec_or_the_config_says_otherwise(tmp_path: Path):
    config = tmp_path / "typed-mcp.toml"
    config.write_text(
        "[operations.editItem]\nannotations = {destructiveHint = false, idempotentHint = true}\n"
        "[operations.starItem]\nannotations = {openWorldHint = false}\n"
        '[operations."GET /items/{id}"]\nannotations = {title = "Read one item"}\n'
    )
    plain, curated = tmp_path / "plain" / "items-mcp", tmp_path / "curated" / "items-mcp"
    plain.parent.mkdir(), curated.parent.mkdir()
    generate(ITEMS, plain, "items-mcp")
    generate(ITEMS, curated, "items-mcp", "--config", str(config))
    async with Client(package_stdio(plain, "items_mcp")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert hints(tools["get_item"]) == (True, False, True)
    assert hints(tools["replace_item"]) == (False, True, True)  # PUT replaces: destructive, idempotent
    assert hints(tools["edit_item"]) == (False, True, False)  # PATCH changes in place: destructive
    assert hints(tools["delete_item"]) == (False, True, True)
    assert hints(tools["star_item"]) == (False, False, True)  # x-mcp annotations
    assert tools["star_item"].annotations.title == "Star it" and tools["star_item"].title == "Star an item"
    assert hints(tools["touch_star"]) == (False, True, False)  # its x-mcp annotations were refused
    notes = json.loads((plain / "typed-mcp.json").read_text())["notes"]
    assert "PATCH /stars/{id}: x-mcp annotations.destructiveHint: Input should be a valid boolean: ignored" in notes

    async with Client(package_stdio(curated, "items_mcp")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert hints(tools["edit_item"]) == (False, False, True)
    assert tools["star_item"].annotations.open_world_hint is False
    assert hints(tools["star_item"]) == (False, False, True)  # the config adds to x-mcp's
    assert tools["get_item"].annotations.title == "Read one item" and tools["get_item"].title == "Get an item"
    manifest = json.loads((curated / "typed-mcp.json").read_text())
    assert manifest["annotations"]["edit_item"] == (
        "readOnlyHint false: PATCH changes what it names in place; destructiveHint false, idempotentHint true:"
        " config operations.editItem.annotations; openWorldHint true: it calls an API over the network"
    )
    assert {
        "operation": "PATCH /items/{id}",
        "action": "annotations: destructiveHint false, idempotentHint true",
        "rule": "config operations.editItem.annotations",
    } in manifest["curation"]
    assert {
        "operation": "PUT /stars/{id}",
        "action": 'annotations: destructiveHint false, title "Star it"',
        "rule": "x-mcp annotations",
    } in manifest["curation"]

    # A tool that becomes destructive is a breaking change for the semantic diff.
    diff = run_cli("diff", str(curated), str(plain), "--format", "json", "--fail-on", "breaking")
    assert diff.returncode == 1, diff.stderr
    changes = {(c["tool"], c["kind"], c["breaking"]) for c in json.loads(diff.stdout)["changes"]}
    assert ("edit_item", "became_destructive", True) in changes


def test_a_bad_annotations_key_in_the_config_is_one_line(tmp_path: Path):
    config = tmp_path / "typed-mcp.toml"
    config.write_text("[operations.editItem]\nannotations = {readonlyHint = true}\n")
    spec = tmp_path / "items.json"
    spec.write_text(json.dumps(ITEMS))
    proc = run_cli("generate", str(spec), "--out", str(tmp_path / "o"), "--config", str(config), "--no-snapshot")
    assert proc.returncode == 1 and not (tmp_path / "o").exists()
    assert proc.stderr.strip() == f"error: {config}: operations.editItem.annotations.readonlyHint: unknown key"


# openapi-mcp-generator's `x-mcp` filtering, as its README documents it (harsha-iiiv/openapi-mcp-generator,
# README.md, "Filtering Endpoints with OpenAPI Extensions"): `x-mcp: true | false` at the root, path and
# operation levels, "operation > path > root (first non-undefined wins)", the strings "true"/"false" in
# any case too. Its example, with each operation of the shape it shows:
#
#     x-mcp: true              # Optional root-level default
#     paths:
#       /pets:
#         x-mcp: false         # exclude all ops under /pets
#         get:
#           x-mcp: true        # include this operation anyway
#       /users/{id}:
#         get:                 # no x-mcp -> included by default
def readme_example(root: object) -> dict:
    user = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "x-mcp": root,
        "paths": {
            "/pets": {
                "x-mcp": False,
                "get": {"operationId": "listPets", "x-mcp": True, "responses": JSON_OK},
                "post": {"operationId": "createPet", "responses": JSON_OK},
            },
            "/users/{id}": {"get": {"operationId": "getUser", "parameters": [user], "responses": JSON_OK}},
            "/admin/flags": {"get": {"operationId": "listFlags", "x-mcp": "FALSE", "responses": JSON_OK}},
        },
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("root", "served"),
    [
        (True, {"list_pets", "get_user"}),  # the README's example as written
        (False, {"list_pets"}),  # `--default-include false`'s spelling in the spec: only what says true
    ],
)
async def test_x_mcp_boolean_form_at_root_path_and_operation(tmp_path: Path, root: bool, served: set[str]):
    out = tmp_path / "pets-mcp"
    generate(readme_example(root), out, "pets-mcp")
    async with Client(package_stdio(out, "pets_mcp")) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == served
    curation = json.loads((out / "typed-mcp.json").read_text())["curation"]
    assert {"operation": "POST /pets", "action": "excluded", "rule": "x-mcp false (path)"} in curation
    assert {"operation": "GET /admin/flags", "action": "excluded", "rule": "x-mcp false (operation)"} in curation
    if not root:
        assert {"operation": "GET /users/{id}", "action": "excluded", "rule": "x-mcp false (root)"} in curation
