"""Argument names keep the API's parameter names wherever Python and the SDK's argument model accept
them (`model_id` is fine; `model_config` and a keyword are not), and an argument that had to be
renamed says the API's name in its description. Checked through the MCP Python SDK client against
a generated server run with every warning an error, and a scripted upstream that records the query."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from mcp.client import Client

from support import HttpServer, Reply, generate, package_stdio

SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Models API", "version": "1.0.0"},
    "paths": {
        "/models/{id}/versions": {
            "get": {
                "operationId": "list_model_versions",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "id", "in": "query", "schema": {"type": "string"}, "description": "A version id."},
                    {"name": "model_id", "in": "query", "schema": {"type": "string"}, "description": "The model_id."},
                    {"name": "model_config", "in": "query", "schema": {"type": "string"}},
                    {"name": "model_fields", "in": "query", "schema": {"type": "string"}},
                    {"name": "json", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "class", "in": "query", "schema": {"type": "string"}, "description": "A class."},
                ],
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {}}}}},
            }
        }
    },
}


@pytest.mark.anyio
async def test_arguments_keep_the_apis_names_and_say_them_when_renamed(tmp_path: Path):
    out = tmp_path / "models-mcp"
    generate(SPEC, out, "models-mcp")
    with HttpServer() as upstream:
        upstream.default = Reply(200, {"ok": True})
        params = package_stdio(out, "models_mcp")
        # Any warning (pydantic's "shadows an attribute", "protected namespace") ends the server.
        params.env = {**params.env, "MODELS_MCP_BASE_URL": upstream.url, "PYTHONWARNINGS": "error::UserWarning"}
        async with Client(params) as client:
            (tool,) = (await client.list_tools()).tools
            properties = tool.input_schema["properties"]
            assert set(properties) == {
                "id_path",
                "id_query",
                "model_id",
                "model_config_",
                "model_fields_",
                "json",
                "class_",
            }
            # Kept as the API says it: no note. Renamed: the description says the API's name.
            assert properties["model_id"]["description"] == "The model_id."
            assert "is the API's" not in str(properties["json"])
            assert properties["model_config_"]["description"] == (
                "(`model_config_` is the API's query parameter `model_config`.)"
            )
            assert properties["class_"]["description"] == "A class. (`class_` is the API's query parameter `class`.)"
            assert properties["id_query"]["description"] == (
                "A version id. (`id_query` is the API's query parameter `id`.)"
            )
            assert "the API's path parameter `id`" in properties["id_path"]["description"]
            arguments = {
                "id_path": "m1",
                "id_query": "v2",
                "model_id": "m1",
                "model_config_": "c",
                "model_fields_": "f",
                "json": True,
                "class_": "k",
            }
            result = await client.call_tool(tool.name, arguments)
            assert not result.is_error, result.content
    request = urlsplit(upstream.seen[-1].raw_path)
    assert request.path == "/models/m1/versions"
    assert dict(parse_qsl(request.query)) == {
        "id": "v2",
        "model_id": "m1",
        "model_config": "c",
        "model_fields": "f",
        "json": "true",
        "class": "k",
    }
