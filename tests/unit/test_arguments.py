"""The argument check's two validators (runtime/arguments.py): jsonschema-rs says whether a call's
arguments are valid and jsonschema, only when they are not, what is wrong. The fast one must never
accept what the slow one refuses, must read nothing outside the schema, and must not change a word of
what a refused call is told."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from support import REPO, HttpServer, Reply
from typed_mcp.runtime import arguments
from typed_mcp.runtime.arguments import ArgumentCheck, LinearValidator
from typed_mcp.runtime.contracts import unpack_catalog

# Keywords where engines differ most: regexes (the linear engine, Unicode classes), integers written
# as floats and past 64 bits, multipleOf on floats, unevaluatedProperties (only jsonschema-rs checks
# it), recursion through $defs, formats (hints for both), tuples, uniqueness and conditionals.
HAND_WRITTEN: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "email": {"type": "string", "pattern": r"^\w+([\.-]?\w+)*@\w+([\.-]?\w+)*(\.\w{2,3})+$"},
            "code": {"type": "string", "pattern": "^[A-Z]{2}-\\d+$", "minLength": 4, "maxLength": 8},
            "when": {"type": "string", "format": "date-time"},
        },
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
            "ratio": {"type": "number", "multipleOf": 0.1},
            "big": {"type": "integer", "maximum": 2**70},
        },
        "required": ["count"],
        "unevaluatedProperties": False,
    },
    {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["name"],
            }
        },
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
    },
    {
        "type": "object",
        "properties": {
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
            "tags": {"type": "array", "items": {"enum": ["a", "b", 1, None]}, "uniqueItems": True, "maxItems": 3},
            "choice": {"oneOf": [{"type": "string", "const": "x"}, {"type": "integer"}, {"type": "null"}]},
            "kind": {"anyOf": [{"type": "object", "required": ["k"]}, {"type": "boolean"}]},
        },
        "dependentRequired": {"pair": ["tags"]},
        "if": {"required": ["kind"]},
        "then": {"required": ["choice"]},
    },
]


def shipped_schemas() -> list[dict[str, Any]]:
    """Every inputSchema of the packages in the repository: the demo and the golden records."""
    schemas = []
    for catalog in sorted(
        [REPO / "generated/weather-mcp/src/weather_mcp/catalog.json", *REPO.glob("tests/golden/*/src/*/catalog.json")]
    ):
        tools, _, _ = unpack_catalog(json.loads(catalog.read_text()))
        schemas += [tool["inputSchema"] for tool in tools]
    return schemas


SCHEMAS = HAND_WRITTEN + shipped_schemas()
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63, max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def slow_refusal(schema: dict[str, Any], value: Any) -> list[str]:
    return [error.message for error in LinearValidator(schema).iter_errors(value)]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_what_the_fast_validator_accepts_the_slow_one_accepts(index, data):
    """Drawn both from the schema (mostly valid, on its edges) and as any JSON (mostly invalid): the
    fast validator's yes is never the slow one's no."""
    schema = SCHEMAS[index]
    fast = arguments._fast(schema)
    assert fast is not None, "jsonschema-rs refused a schema the packages publish"
    value = data.draw(st.one_of(st.dictionaries(st.text(max_size=8), JSON, max_size=5), JSON))
    if data.draw(st.booleans()):
        try:
            value = data.draw(from_schema(schema))
        except Exception:  # noqa: BLE001  # recursion it cannot draw: the JSON drawn above
            pass
    try:
        accepted = fast.is_valid(value)
    except Exception:  # a value it cannot read: the slow check decides alone
        return
    if accepted:
        assert slow_refusal(schema, value) == [], (schema, value)


def test_a_schema_that_refers_outside_itself_is_never_fetched():
    """A $ref to another document: nothing is fetched (the fast validator refuses the schema, the
    slow one cannot resolve it), and the arguments go to the SDK's own model, as before."""
    with HttpServer() as server:
        server.default = Reply(200, {"type": "integer"})
        schema = {"type": "object", "properties": {"n": {"$ref": f"{server.url}/schema.json"}}}
        assert arguments._fast(schema) is None
        assert ArgumentCheck().refusal("remote", schema, {"n": "not an integer"}) is None
        assert server.seen == []


@pytest.mark.parametrize("index", range(len(HAND_WRITTEN)))
def test_a_refusal_says_what_the_slow_validator_alone_says(index, monkeypatch):
    """Refused arguments get the slow validator's words, field by field, with or without the fast one."""
    value = {"code": "ab", "x-1": "one", "other": 1, "count": 10.5, "ratio": 0.3, "tree": {"kids": [{}]}, "pair": [1]}
    with_fast = ArgumentCheck().refusal("t", HAND_WRITTEN[index], value)
    monkeypatch.setattr(arguments, "_fast", lambda schema: None)
    assert with_fast == ArgumentCheck().refusal("t", HAND_WRITTEN[index], value)
    assert with_fast is not None and with_fast.startswith("invalid arguments for tool 't': ")
