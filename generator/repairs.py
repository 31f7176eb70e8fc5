"""Repairs to a spec's schemas before model generation: what the code generator would otherwise
turn into models that refuse valid data or cannot validate at all.

1. Narrowed properties in `allOf` inheritance. Cloudflare's envelopes say `result: anyOf [object,
   string], nullable` in a base schema and `result: {type: object}` in the schema that extends it
   with `allOf`. JSON Schema means both apply: `result` is an object. The code generator merges the
   two into `dict[str, dict | str | None]` (a map whose values must be objects, strings or null),
   which refuses real answers such as `{"id": 1}`. Such a narrowing property is written as the
   intersection itself: the branches of the inherited union that have the property's `type`, each
   with the property's own keywords, and not null unless the property says so.
2. Defaults their own schema refuses. Cloudflare's `logpush_kind` is `enum: [edge]`, nullable, with
   `default: ""`; the model validates defaults, so every call that left the field out failed. Such
   a default says nothing true about the API and is dropped.
3. `deprecated` on a schema that becomes a RootModel (Cloudflare's `logpush_frequency`, a string
   enum): pydantic makes a deprecated field read-only, and a RootModel's only field, `root`, is
   set when it is built, so building one raised AttributeError: every call of a tool whose body
   had such a field failed. The flag is dropped there (the description still says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_UNIONS = ("anyOf", "oneOf")
_SHAPE = ("$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else")


def repair(schemas: dict[str, Any], resolve: Callable[[str], Any]) -> dict[str, Any]:
    """`schemas` (name -> schema) with the repairs made; the input is not changed (repaired schemas
    are copies). `resolve` maps a `$ref` to its schema."""
    repaired = {name: _walk(schema, resolve, 0) for name, schema in schemas.items()}
    for name, schema in repaired.items():
        if isinstance(schema, dict) and "deprecated" in schema and not _is_object(schema):
            repaired[name] = {k: v for k, v in schema.items() if k != "deprecated"}
    return repaired


def _is_object(schema: dict[str, Any]) -> bool:
    """A schema the code generator makes a class with fields (not a RootModel)."""
    return isinstance(schema.get("properties"), dict) or (schema.get("type") == "object" and not isinstance(schema.get("additionalProperties"), dict))


def _walk(node: Any, resolve: Callable[[str], Any], depth: int) -> Any:
    if depth > 64:
        return node
    if isinstance(node, list):
        return [_walk(item, resolve, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _walk(value, resolve, depth + 1) for key, value in node.items()}
    if "default" in out and not _admits(out, out["default"]):
        del out["default"]
    parts = out.get("allOf")
    if isinstance(parts, list) and len(parts) > 1:
        out["allOf"] = _narrow_parts(parts, resolve)
    return out


def _narrow_parts(parts: list[Any], resolve: Callable[[str], Any]) -> list[Any]:
    inherited: dict[str, Any] = {}  # property -> its latest schema in earlier parts
    result = []
    for part in parts:
        if isinstance(part, dict) and "$ref" not in part and isinstance(part.get("properties"), dict):
            narrowed = {}
            for name, prop in part["properties"].items():
                parent = inherited.get(name)
                narrowed[name] = _intersection(parent, prop, resolve) if parent is not None else None
            if any(value is not None for value in narrowed.values()):
                part = {**part, "properties": {n: narrowed[n] if narrowed[n] is not None else p for n, p in part["properties"].items()}}
        inherited.update(_properties(part, resolve, set()))
        result.append(part)
    return result


def _properties(schema: Any, resolve: Callable[[str], Any], seen: set[str]) -> dict[str, Any]:
    """Properties a schema declares, also through `$ref` and its own `allOf` (later ones win)."""
    found: dict[str, Any] = {}
    for _ in range(32):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            break
        if schema["$ref"] in seen:
            return found
        seen = seen | {schema["$ref"]}
        schema = resolve(schema["$ref"])
    if not isinstance(schema, dict):
        return found
    for part in schema.get("allOf") or []:
        found.update(_properties(part, resolve, seen))
    if isinstance(schema.get("properties"), dict):
        found.update(schema["properties"])
    return found


def _intersection(parent: Any, child: Any, resolve: Callable[[str], Any]) -> dict[str, Any] | None:
    """The rewritten property, or None to leave it as it is: only a child with a plain `type` that
    narrows an inherited union with at least one branch of that type."""
    if not isinstance(child, dict) or not isinstance(child.get("type"), str) or any(k in child for k in _SHAPE):
        return None
    parent = _deref(parent, resolve)
    union_key = next((k for k in _UNIONS if isinstance(parent.get(k), list)), None) if isinstance(parent, dict) else None
    if union_key is None:
        return None
    branches = [_deref(b, resolve) for b in parent[union_key]]
    keep = [b for b in branches if isinstance(b, dict) and b.get("type") == child["type"]]
    if not keep:
        return None
    annotations = {k: v for k, v in child.items() if k in ("description", "title", "example", "examples", "deprecated")}
    narrowed = [{**branch, **{k: v for k, v in child.items() if k not in annotations}} for branch in keep]
    return {union_key: narrowed, "nullable": child.get("nullable") is True, **annotations}


def _deref(schema: Any, resolve: Callable[[str], Any]) -> Any:
    for _ in range(32):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        schema = resolve(schema["$ref"])
    return schema


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _admits(schema: dict[str, Any], value: Any) -> bool:
    """What the schema's own `type` and `enum` say of `value` (`nullable`/`x-nullable` admit null);
    anything else about it is not judged here."""
    if value is None and (schema.get("nullable") is True or schema.get("x-nullable") is True):
        return True
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return False
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    if isinstance(types, list) and types and all(t in _TYPES for t in types):
        return any(_TYPES[t](value) for t in types)
    return True
