"""One bad schema never sinks the spec (issue 17, class 2): a malformed schema, parameter or response
costs its own operation at most. What can be read in one well-defined way is (a list of item
schemas: every item matches one of them), the rest degrades to an open schema or skips the one
operation, each with its reason in `typed-mcp.json`; `--strict` refuses both."""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from support import generate, run_cli
from typed_mcp.models.build import build_models
from typed_mcp.plan.build import plan
from typed_mcp.spec.load import LoadedSpec
from typed_mcp.spec.normalize import normalize

pytestmark = pytest.mark.anyio


def _json(schema: Any) -> dict:
    return {"content": {"application/json": {"schema": schema}}}


def _spec() -> dict:
    """A small valid API: the victim is GET /items/{id}; the other operations must never notice."""
    item = {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "tags": {"type": "array"}}}
    victim = {
        "type": "object",
        "required": ["item"],
        "properties": {
            "item": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
            },
        },
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Fuzzed", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/items": {
                "get": {
                    "operationId": "list_items",
                    "responses": {
                        "200": {
                            "description": "ok",
                            **_json({"type": "array", "items": {"$ref": "#/components/schemas/Item"}}),
                        }
                    },
                },
                "post": {
                    "operationId": "create_item",
                    "requestBody": _json({"$ref": "#/components/schemas/Item"}),
                    "responses": {"201": {"description": "ok", **_json({"$ref": "#/components/schemas/Item"})}},
                },
            },
            "/items/{id}": {
                "get": {
                    "operationId": "get_item",
                    "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "ok", **_json(victim)}},
                }
            },
        },
        "components": {"schemas": {"Item": item}},
    }


VICTIM = ("paths", "/items/{id}", "get")
SCHEMA = (*VICTIM, "responses", "200", "content", "application/json", "schema")
INNER = (*SCHEMA, "properties", "item")


def _put(doc: dict, path: tuple, value: Any) -> None:
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


# (what, where, the value put there, how the victim comes out: "degraded" with a note naming
# the place, or "skipped"). Schemas degrade; an operation whose own structure is broken is skipped.
CORRUPTIONS = [
    ("items a list of one schema", (*INNER, "properties", "tags", "items"), [{"type": "string"}], "degraded"),
    (
        "items a list of two",
        (*INNER, "properties", "tags", "items"),
        [{"type": "string"}, {"type": "integer"}],
        "degraded",
    ),
    ("items a string", (*INNER, "properties", "tags", "items"), "string", "degraded"),
    ("items a list of strings", (*INNER, "properties", "tags", "items"), ["string"], "degraded"),
    ("properties a list", (*INNER, "properties"), [{"name": {"type": "string"}}], "degraded"),
    ("a property a string", (*INNER, "properties", "name"), "string", "degraded"),
    ("required a string", (*SCHEMA, "required"), "item", "degraded"),
    ("required with a number", (*SCHEMA, "required"), ["item", 3], "degraded"),
    ("required true (draft 3)", (*INNER, "properties", "name", "required"), True, "degraded"),
    ("enum a string", (*INNER, "properties", "name", "enum"), "a,b", "degraded"),
    ("allOf an object", (*INNER, "allOf"), {"type": "object"}, "degraded"),
    ("allOf with a string", (*INNER, "allOf"), ["Item"], "degraded"),
    ("oneOf a number", (*INNER, "oneOf"), 5, "degraded"),
    ("the schema a string", SCHEMA, "Item", "degraded"),
    ("the schema a list", SCHEMA, [{"type": "object"}], "degraded"),
    ("a dangling $ref", (*INNER, "properties", "name"), {"$ref": "#/components/schemas/Nope"}, "degraded"),
    ("a $ref not a string", INNER, {"$ref": 7}, "degraded"),
    ("a $ref to the document", INNER, {"$ref": "#"}, "degraded"),
    ("an unknown type", (*INNER, "type"), "strnig", "degraded"),
    ("a type number", (*INNER, "properties", "name", "type"), 1, "degraded"),
    ("additionalProperties a string", (*INNER, "additionalProperties"), "yes", "degraded"),
    ("discriminator a string", (*INNER, "discriminator"), "kind", "degraded"),
    ("minimum a string", (*INNER, "properties", "name", "minLength"), "3", "degraded"),
    ("pattern a number", (*INNER, "properties", "name", "pattern"), 5, "degraded"),
    ("description a list", (*INNER, "description"), ["a"], "degraded"),
    ("nullable a string", (*INNER, "nullable"), "yes", "degraded"),
    ("parameters an object", (*VICTIM, "parameters"), {"id": {"in": "path"}}, "skipped"),
    ("a parameter without a name", (*VICTIM, "parameters", 0), {"in": "path", "schema": {}}, "skipped"),
    ("a parameter a string", (*VICTIM, "parameters", 0), "id", "skipped"),
    ("a dangling parameter $ref", (*VICTIM, "parameters", 0), {"$ref": "#/components/parameters/nope"}, "skipped"),
    ("responses a list", (*VICTIM, "responses"), [{"description": "ok"}], "skipped"),
    ("a response a list", (*VICTIM, "responses", "200"), ["ok"], "skipped"),
    ("content a list", (*VICTIM, "responses", "200", "content"), ["application/json"], "skipped"),
    ("a media type a list", (*VICTIM, "responses", "200", "content", "application/json"), [1], "skipped"),
    ("a dangling response $ref", (*VICTIM, "responses", "200"), {"$ref": "#/components/responses/nope"}, "skipped"),
    ("requestBody a list", (*VICTIM, "requestBody"), [{"content": {}}], "skipped"),
    ("requestBody content a string", (*VICTIM, "requestBody"), {"content": "json"}, "skipped"),
    ("the operation a string", VICTIM, "get it", "skipped"),
    ("the operation a dangling $ref", VICTIM, {"$ref": "#/x-ops/nope"}, "skipped"),
]


def _loaded(doc: dict) -> LoadedSpec:
    return LoadedSpec(doc, json.dumps(doc).encode(), "fuzzed.json", None, None, "json")


def _plan_and_models(doc: dict):
    document = normalize(_loaded(doc))
    api = plan(document, package_name="fuzzed-mcp", module="fuzzed_mcp")
    return api, build_models(document, api)


def test_the_valid_spec_is_clean():
    api, _ = _plan_and_models(_spec())
    assert not api.skipped and not api.degraded and len(api.operations) == 3


@pytest.mark.parametrize(("what", "where", "value", "outcome"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_one_corrupt_operation_costs_only_itself(what, where, value, outcome):
    doc = _spec()
    _put(doc, where, copy.deepcopy(value))
    api, models = _plan_and_models(doc)
    tools = {op.tool_name: op for op in api.operations}
    for healthy in ("list_items", "create_item"):  # untouched: a typed answer, a model for it
        assert tools[healthy].response.schema_key in models.class_of
    if outcome == "skipped":
        assert [(s.key, bool(s.reason)) for s in api.skipped] == [("GET /items/{id}", True)], api.skipped
        assert not api.degraded
    else:
        assert not api.skipped and "get_item" in tools
        assert api.degraded and all(note.startswith("#/paths/~1items~1{id}/get/") for note in api.degraded)
        key = tools["get_item"].response.schema_key  # None: the whole schema became "any value"
        assert key is None or key in models.class_of


SWAGGER_ITEM = {"type": "object", "properties": {"id": {"type": "integer"}}}


def _swagger() -> dict:
    ok = {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Item"}}}
    listed = {"200": {"description": "ok", "schema": {"type": "array", "items": [{"$ref": "#/definitions/Item"}]}}}
    return {
        "swagger": "2.0",
        "info": {"title": "Chat", "version": "1"},
        "host": "127.0.0.1:9",
        "paths": {
            "/items": {"get": {"operationId": "list_items", "responses": listed}},
            "/items/{id}": {
                "get": {
                    "operationId": "get_item",
                    "parameters": [{"name": "id", "in": "path", "type": "integer"}],
                    "responses": ok,
                },
                "post": {
                    "operationId": "broken_upload",
                    "parameters": [
                        {"name": "id", "in": "path", "type": "integer"},
                        {"name": "a", "in": "body", "schema": {}},
                        {"name": "b", "in": "formData", "type": "string"},
                    ],
                    "responses": ok,
                },
            },
        },
        "definitions": {"Item": SWAGGER_ITEM, "Broken": {"properties": [{"x": {}}]}},
    }


async def test_a_swagger_spec_with_items_as_a_list_generates_and_lists(tmp_path):
    """The chat platform's case: `items: [{...}]` had ended the whole run ("cannot convert Swagger
    2.0: ...items: must be an object, got list"). Now the list reads as its one item schema, a
    broken operation is skipped alone, and a broken unused definition is a note."""
    out = tmp_path / "chat-mcp"
    generate(_swagger(), out, "chat-mcp")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chat_mcp"], env={**os.environ, "PYTHONPATH": str(out / "src")}
    )
    manifest = json.loads((out / "typed-mcp.json").read_text())
    assert manifest["skipped"] == [
        {
            "operation": "POST /items/{id}",
            "reason": "#/paths/~1items~1{id}/post: an operation cannot have both body and formData parameters",
        }
    ]
    assert manifest["notes"] == [
        "#/components/schemas/Broken/properties: must be an object, got a list: dropped",
        "#/paths/~1items/get/responses/200/content/application~1json/schema/items:"
        " a list of 1 schema(s): read as every item matching one",
    ]
    async with Client(params) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"list_items", "get_item"}
    listed = tools["list_items"].output_schema
    assert listed["properties"]["result"]["items"] == {"$ref": "#/$defs/Item"}  # typed, not list[Any]
    assert tools["get_item"].output_schema["properties"]["id"]["anyOf"][0] == {"type": "integer"}


def test_strict_refuses_a_degraded_schema_and_a_skipped_operation_in_one_line(tmp_path):
    spec = tmp_path / "fuzzed.json"
    for where, value, expected in (
        (
            (*INNER, "properties", "tags", "items"),
            [{"type": "string"}],
            "part(s) of the spec would be read in a degraded way",
        ),
        ((*VICTIM, "responses"), [{"description": "ok"}], "operation(s) would be skipped"),
    ):
        doc = _spec()
        _put(doc, where, value)
        spec.write_text(json.dumps(doc))
        out = tmp_path / "out"
        proc = run_cli("generate", str(spec), "--out", str(out), "--no-snapshot", "--strict")
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 5 and len(lines) == 1 and expected in lines[0], proc.stderr
        assert "#/paths/~1items~1{id}/get" in lines[0] or "GET /items/{id}" in lines[0]
        assert not out.exists()
