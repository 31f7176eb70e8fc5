"""readOnly properties leave request inputs, writeOnly properties leave outputs, at every depth."""

from __future__ import annotations

import anyio
from mcp import Client

from support import REPO, generate, import_server


def test_read_only_and_write_only_views(tmp_path):
    out = tmp_path / "rw"
    generate(REPO / "tests" / "data" / "readonly.json", out, "rw-views")

    async def tools():
        async with Client(import_server(out, "rw_views")) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    listed = anyio.run(tools)
    create = listed["create_pet"]
    body = create.input_schema["$defs"]["PetRequest"]
    assert "id" not in body["properties"] and body["required"] == ["name", "password"]
    owner_in = create.input_schema["$defs"]["OwnerRequest"]
    assert "oid" not in owner_in["properties"]  # nested readOnly removed too
    output = create.output_schema
    assert "password" not in output["properties"] and output["required"] == ["id", "name"]
    assert "oid" in output["$defs"]["OwnerResponse"]["properties"]
    assert output["$defs"]["OwnerResponse"]["properties"]["pets"]["anyOf"][0]["items"] == {"$ref": "#/$defs/PetResponse"}
    listing = listed["list_pets"].output_schema
    assert listing["properties"]["result"]["items"] == {"$ref": "#/$defs/PetResponse"}
    import importlib

    models = importlib.import_module("rw_views.models")
    # A schema without such properties stays one shared class, not renamed into views.
    assert "Plain" in models.__all__ and not {"PlainRequest", "PlainResponse"} & set(models.__all__)
    assert listed["plain"].output_schema == models.Plain.model_json_schema()


def test_path_parameters_are_never_null(tmp_path):
    spec = {"openapi": "3.1.0", "info": {"title": "p", "version": "1"}, "paths": {"/t/{a}/{b}": {"get": {
        "operationId": "get_t", "parameters": [
            {"name": "a", "in": "path", "required": True, "schema": {}},
            {"name": "b", "in": "path", "required": True, "schema": {"type": ["integer", "null"]}}],
        "responses": {"200": {"description": "ok"}}}}}}
    out = tmp_path / "p"
    generate(spec, out, "path-params")

    async def schema():
        async with Client(import_server(out, "path_params")) as client:
            return (await client.list_tools()).tools[0].input_schema

    properties = anyio.run(schema)["properties"]
    assert properties["a"]["type"] == "string" and properties["b"]["type"] == "integer"
