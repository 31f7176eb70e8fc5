"""What the TypeScript SDK's 2.x line checks that 1.x does not, against generated packages.

The 2.x client (`@modelcontextprotocol/client`) validates with AJV 2020-12 (draft-07 in 1.x), so it
enforces `prefixItems`, `unevaluatedProperties`, `dependentRequired`, `dependentSchemas` and
`minContains`, which 1.x ignores; array-form `items` does not compile there; one AJV instance serves
every tool (a `$id` names one schema for all of them) and a `$schema` it does not know does not compile;
and it takes any JSON value as structuredContent, where 1.x wants an object. A spec that uses those
keywords must still give a package that no line refuses: the published schemas stay looser than the
spec (open models: with `additionalProperties: true` an `unevaluatedProperties` has nothing left to
refuse), never stricter than what the server checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.node_tools import INVALID_PARAMS, INVALID_REQUEST, STRICT_CLIENT_PARAMS, ajv_accepts, run_ts_client
from support import HttpServer, Reply, generate

pytestmark = pytest.mark.needs("node")


def test_the_2x_line_enforces_what_the_1x_line_ignores():
    """The control of the line switch: each case passes 1.x's draft-07 AJV and fails 2.x's 2020-12 one."""
    cases = [
        ({"type": "array", "prefixItems": [{"type": "integer"}]}, ["x"]),
        ({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "b": 2}),
        ({"type": "object", "dependentRequired": {"a": ["b"]}}, {"a": 1}),
        ({"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}}, {"a": 1}),
        ({"type": "array", "contains": {"type": "integer"}, "minContains": 2}, [1, "a"]),
    ]
    assert ajv_accepts(cases, line=1) == [True] * len(cases)
    assert ajv_accepts(cases, line=2) == [False] * len(cases)


def answer(schema: str) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": schema}}}}}


KEYWORDS = {  # the spec's own 2020-12 keywords (OpenAPI 3.1), each with an upstream answer breaking it
    "Tuple": ({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False}, ["a", 1]),
    "Pair": (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "dependentRequired": {"a": ["b"]},
        },
        {"a": "x"},
    ),
    "Closed": (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False},
        {"a": 1, "z": 2},
    ),
    "Contains": ({"type": "array", "items": {}, "contains": {"type": "integer"}, "minContains": 2}, [1, "a"]),
    "DepSchemas": (
        {"type": "object", "properties": {"a": {"type": "string"}}, "dependentSchemas": {"a": {"required": ["b"]}}},
        {"a": "x"},
    ),
    "WithDefs": (
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/components/schemas/WithDefs/$defs/X"}},
            "$defs": {"X": {"type": "integer"}},
        },
        {"x": 3},
    ),
    "ItemList": ({"type": "array", "items": [{"type": "integer"}, {"type": "string"}]}, [1, "a"]),  # 2.x: no compile
    "Ided": (  # two schemas of one `$id` would share one validator in 2.x's single AJV instance
        {
            "$id": "https://example.com/ided",
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
        },
        {"n": 1},
    ),
    "Ided2": (
        {"$id": "https://example.com/ided", "type": "object", "properties": {"n": {"type": "string"}}},
        {"n": "1"},
    ),
}
SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Keywords", "version": "1"},
    "paths": {
        f"/{name.lower()}": {"get": {"operationId": f"get{name}", "responses": answer(f"#/components/schemas/{name}")}}
        for name in KEYWORDS
    },
    "components": {"schemas": {name: schema for name, (schema, _) in KEYWORDS.items()}},
}


@pytest.fixture(scope="module")
def keywords_package(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("keywords") / "keywords"
    generate(SPEC, out, "kw-mcp")
    return out


def walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


@pytest.mark.parametrize("client", STRICT_CLIENT_PARAMS)
def test_a_spec_of_2020_12_keywords_passes_every_strict_client(keywords_package, client):
    """Every tool lists and compiles in the client's own AJV, and each answer that breaks the spec's
    2020-12 keyword comes back as structuredContent the client accepts (an object, for 1.x), or as an
    error result: never a -32602 or -32600."""
    calls = [
        {"name": t, "arguments": {}}
        for t in sorted(json.loads((keywords_package / "typed-mcp.json").read_text())["tools"])
    ]
    with HttpServer() as upstream:
        for name, (_, body) in KEYWORDS.items():
            upstream.routes[f"/{name.lower()}"] = Reply(200, body)
        command = [sys.executable, "-m", "kw_mcp", "--base-url", upstream.url]
        env = {"PYTHONPATH": str(keywords_package / "src")}
        listed = run_ts_client(command, env, [], list_only=True, dump_tools=True, compile_schemas=True, client=client)
        run = run_ts_client(command, env, calls, client=client)
    tools = listed["tool_list"]
    assert listed["schemas"] == {"compiled": 2 * len(KEYWORDS), "failures": []}
    nodes = list(walk(tools))
    assert all(node["$ref"].startswith("#/") for node in nodes if "$ref" in node)  # local only
    assert not [node for node in nodes if "$id" in node or "$schema" in node]
    refused = [
        (r["name"], r["errorCode"], r["error"])
        for r in run["results"]
        if r["errorCode"] in (INVALID_PARAMS, INVALID_REQUEST)
    ]
    assert refused == []
    assert all(r["ok"] and not r["isError"] for r in run["results"]), [(r["name"], r["text"]) for r in run["results"]]
    assert all(isinstance(r["structuredContent"], dict) for r in run["results"])
    got = {r["name"]: r["structuredContent"] for r in run["results"]}
    assert got["get_tuple"] == {"result": ["a", 1]} and got["get_closed"] == {"a": 1, "z": 2}


def test_only_the_2x_line_refuses_a_2020_12_keyword_the_server_does_not_check(keywords_package, tmp_path):
    """The negative control of the test above: the same package, its catalog edited to publish the
    spec's `dependentRequired: {a: [b]}` (which the model does not check), answers `{"a": "x"}`: 1.x
    ignores the keyword and accepts, 2.x refuses with -32602."""
    import shutil

    from harness.node_tools import TS1, TS2_MODERN

    edited = tmp_path / "edited"
    shutil.copytree(keywords_package, edited)
    catalog_path = next((edited / "src").glob("*/catalog.json"))
    catalog = json.loads(catalog_path.read_text())
    pair = next(tool for tool in catalog["tools"] if tool["name"] == "get_pair")
    pair["outputSchema"]["dependentRequired"] = KEYWORDS["Pair"][0]["dependentRequired"]
    catalog_path.write_text(json.dumps(catalog))
    codes = {}
    with HttpServer() as upstream:
        upstream.routes["/pair"] = Reply(200, KEYWORDS["Pair"][1])
        command = [sys.executable, "-m", "kw_mcp", "--base-url", upstream.url]
        for client in (TS1, TS2_MODERN):
            run = run_ts_client(command, {"PYTHONPATH": str(edited / "src")}, [{"name": "get_pair"}], client=client)
            codes[client.id] = run["results"][0]["errorCode"]
    assert codes == {"ts1": None, "ts2-2026-07-28": INVALID_PARAMS}
