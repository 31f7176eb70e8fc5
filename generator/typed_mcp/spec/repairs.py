"""Repairs to a spec's schemas before model generation: what the code generator would otherwise
turn into models that refuse valid data or cannot validate at all.

1. Narrowed properties in `allOf` inheritance. A base schema says `result: anyOf [object, string],
   nullable` and the schema that extends it with `allOf` says `result: {type: object}`. JSON Schema
   means both apply: `result` is an object. The code generator merges the two into
   `dict[str, dict | str | None]` (a map whose values must be objects, strings or null), which refuses
   real answers such as `{"id": 1}`. Such a narrowing property is written as the intersection itself:
   the branches of the inherited union that have the property's `type`, each with the property's own
   keywords, and not null unless the property says so.
2. Defaults their own schema refuses, e.g. `enum: [edge]`, nullable, with `default: ""`; the model
   validates defaults, so every call that left the field out failed. Such a default says nothing
   true about the API and is dropped.
3. `deprecated` on a schema that becomes a RootModel (such as a string enum): pydantic makes a
   deprecated field read-only, and a RootModel's only field, `root`, is set when it is built, so
   building one raised AttributeError: every call of a tool whose body had such a field failed.
   The flag is dropped there (the description still says so).
4. Keywords that do not apply to the declared type (`maxLength` on an array), which the code
   generator applies anyway.
5. `allOf: [X, {nullable: true}]`, written as `anyOf: [X], nullable`.
6. Discriminators whose branches do not already pin the property (the code generator would make
   the branch models require it, also where they are used alone).
7. Patterns (and the names of `patternProperties`) written in the form every engine reads alike
   (`patterns.portable_pattern`; normalize's shapes dropped those without one).
8. `minProperties` / `maxProperties` on an object with declared properties, which the code
   generator drops (see PROPERTY_COUNT).
9. `required` beside a `oneOf`/`anyOf` that declares no properties of its own, which the code
   generator drops (`_require_in_branches`).
10. A property that an `allOf` part declares with structure (items, a map's values, a `$ref`) over
   an inherited declaration without any (`{}`, `type: object`): the code generator keeps the
   inherited type and drops the new structure (`_override`).
11. A schema without `type` whose keywords all apply to one type (`pattern` and `maxLength`: a
   string), which the code generator makes `Any`, dropping them (`implied_type`).
12. `allOf: [{$ref: X}, {description: ...}]`, written as `allOf: [{$ref: X}]` with the annotations
   beside it (`_ref_with_annotations`).
13. Keywords whose value has the wrong type, such as `pattern: 0` (`_drop_malformed`).

Each is where a real spec broke a tool; see the functions for how.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typed_mcp.spec.patterns import portable_pattern

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
    return isinstance(schema.get("properties"), dict) or (
        schema.get("type") == "object" and not isinstance(schema.get("additionalProperties"), dict)
    )


def _walk(node: Any, resolve: Callable[[str], Any], depth: int) -> Any:
    if depth > 64:
        return node
    if isinstance(node, list):
        return [_walk(item, resolve, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    # Values (examples, defaults, enums) are data, not schemas: left as they are. A map of schemas
    # (`properties`) is not a schema itself: its keys are names (a property may be called `pattern`).
    out = {
        key: value
        if key in _DATA
        else _walk_map(value, resolve, depth, key == "patternProperties")
        if key in _MAPS
        else _walk(value, resolve, depth + 1)
        for key, value in node.items()
    }
    if "default" in out and not _admits(out, out["default"]):
        del out["default"]
    if (implied := implied_type(out)) is not None:
        out["type"] = implied
    _drop_malformed(out)
    _drop_inapplicable(out)
    if isinstance(out.get("properties"), dict) and out["properties"]:
        for keyword, carrier in PROPERTY_COUNT.items():
            if isinstance(out.get(keyword), int) and not isinstance(out[keyword], bool):
                out[carrier] = out.pop(keyword)
    if isinstance(out.get("pattern"), str):
        out["pattern"] = portable_pattern(out["pattern"])
        if out["pattern"] is None:
            del out["pattern"]
    parts = out.get("allOf")
    if isinstance(parts, list) and any(_only_nullable(p) for p in parts):
        return _nullable_all_of(out, parts)
    if isinstance(parts, list) and _annotated_ref(parts):
        return _ref_with_annotations(out, parts)
    if isinstance(parts, list) and len(parts) > 1:
        out["allOf"] = _narrow_parts(parts, resolve)
    discriminator = out.get("discriminator")
    if (
        isinstance(discriminator, dict)
        and isinstance(discriminator.get("propertyName"), str)
        and not _pinned(out, resolve)
    ):
        del out["discriminator"]
    if isinstance(out.get("required"), list) and "properties" not in out:
        _require_in_branches(out, resolve, depth)
    return out


_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def _walk_map(node: Any, resolve: Callable[[str], Any], depth: int, patterns: bool = False) -> Any:
    """A map of schemas; `patterns`: its names are patterns (`patternProperties`), written in their common form."""
    if not isinstance(node, dict):
        return _walk(node, resolve, depth + 1)
    return {
        (portable_pattern(name) or name) if patterns else name: _walk(schema, resolve, depth + 1)
        for name, schema in node.items()
    }


def _require_in_branches(schema: dict[str, Any], resolve: Callable[[str], Any], depth: int) -> None:
    """`required` beside a union with no properties of its own applies to each branch (e.g.
    `oneOf: [url_target], required: [target, constraint]`); the code generator drops it, so `{}`
    passed. Each object branch gets the names it declares (a `$ref`'d one as a copy)."""
    for key in _UNIONS:
        branches = schema.get(key)
        if not isinstance(branches, list):
            continue
        names = [n for n in schema["required"] if isinstance(n, str)]
        widened = []
        for branch in branches:
            target = _deref(branch, resolve)
            declared = target.get("properties") if isinstance(target, dict) else None
            missing = [
                n
                for n in names
                if isinstance(declared, dict) and n in declared and n not in (target.get("required") or [])
            ]
            if missing:
                copy = _walk(target, resolve, depth + 1) if "$ref" in branch else dict(branch)
                branch = {**copy, "required": [*(copy.get("required") or []), *missing]}
            widened.append(branch)
        schema[key] = widened


_DATA = ("example", "examples", "default", "enum", "const", "x-examples")

# minProperties / maxProperties of an object with declared properties (e.g. minProperties 1) are
# dropped by the code generator, so `{}` was published as valid. Carried under these keys, which it
# writes into the class's config (models/rewrite.py makes that the runtime's PropertyCount: published,
# and checked).
PROPERTY_COUNT = {"minProperties": "x-typed-mcp-min-properties", "maxProperties": "x-typed-mcp-max-properties"}
_ANNOTATIONS = ("description", "title", "example", "examples", "deprecated", "readOnly", "writeOnly")

# Keywords that only constrain one kind of value (JSON Schema ignores them for others). The code
# generator applies them anyway: `errors: {type: array, maxLength: 0}` became a list that must be
# empty, refusing every answer with an error in it.
_APPLIES_TO = {
    **dict.fromkeys(("minLength", "maxLength", "pattern"), ("string",)),
    **dict.fromkeys(("minItems", "maxItems", "uniqueItems"), ("array",)),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), ("integer", "number")
    ),
    **dict.fromkeys(("minProperties", "maxProperties"), ("object",)),
}


def implied_type(schema: dict[str, Any]) -> str | None:
    """The type a schema without `type` means by its keywords, when they all apply to one type:
    `{pattern: ..., maxLength: 99}` is a string, `{minimum: 1}` a number. JSON Schema lets such a
    schema accept any other type, but no API writes a pattern for a number; with a type, the keywords
    are published and checked, and the tool sends what the API expects. None when the schema has a
    type or says anything more."""
    if "type" in schema or any(
        k in schema for k in (*_SHAPE, "properties", "items", "additionalProperties", "enum", "const")
    ):
        return None
    kinds = {_APPLIES_TO[k] for k in schema if k in _APPLIES_TO}
    if len(kinds) != 1:
        return None
    return {"string": "string", "array": "array", "object": "object"}.get(next(iter(kinds))[0], "number")


_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_FLAGS = ("uniqueItems", "nullable", "readOnly", "writeOnly", "deprecated")


def _drop_malformed(schema: dict[str, Any]) -> None:
    """Keywords whose value has the wrong type (`pattern: 0`, `maxLength: "10"`): they say nothing a
    reader can act on, and the code generator refused the whole spec over one of them."""
    for keyword in _COUNTS:
        value = schema.get(keyword)
        if keyword in schema and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            del schema[keyword]
    for keyword in _NUMBERS:
        value = schema.get(keyword)
        flag = keyword.startswith("exclusive") and isinstance(value, bool)  # 3.0's form: a flag
        if keyword in schema and not (flag or _number(value)):
            del schema[keyword]
    for keyword in _FLAGS:
        if keyword in schema and not isinstance(schema[keyword], bool):
            del schema[keyword]
    for keyword in ("pattern", "format"):
        if keyword in schema and not isinstance(schema[keyword], str):
            del schema[keyword]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _drop_inapplicable(schema: dict[str, Any]) -> None:
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    if not (isinstance(types, list) and types and all(isinstance(t, str) for t in types)):
        return
    for keyword, applies in _APPLIES_TO.items():
        if keyword in schema and not set(types) & set(applies):
            del schema[keyword]


def _only_nullable(part: Any) -> bool:
    """An `allOf` part that only says `nullable` (as in `allOf: [{$ref: X}, {nullable: true}]`)."""
    return isinstance(part, dict) and part.get("nullable") is True and set(part) <= {"nullable", *_ANNOTATIONS}


def _nullable_all_of(schema: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    """`allOf: [X, {nullable: true}]` as `anyOf: [X], nullable`: what it means, and what the code
    generator reads right (it made such a field an object, refusing its string branch)."""
    rest = [p for p in parts if not _only_nullable(p)]
    out = {k: v for k, v in schema.items() if k != "allOf"}
    out["anyOf"] = rest if len(rest) == 1 else [{"allOf": rest}]
    out["nullable"] = True
    return out


def _annotated_ref(parts: list[Any]) -> bool:
    """`allOf: [{$ref: X}, {description: ...}]`: one reference, and parts that only annotate it."""
    refs = [p for p in parts if isinstance(p, dict) and set(p) == {"$ref"}]
    rest = [p for p in parts if p not in refs]
    return (
        len(refs) == 1 and bool(rest) and all(isinstance(p, dict) and p and set(p) <= set(_ANNOTATIONS) for p in rest)
    )


def _ref_with_annotations(schema: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    """`allOf: [{$ref: X}, {description: d}]` as `allOf: [{$ref: X}], description: d` (the schema's own
    annotations first). The code generator named the first form's site after its property, for the
    whole run, and then refused that name to the component X when X came later in the document (AWS
    specs write every property so, named like its component); it also dropped the description."""
    out = {k: v for k, v in schema.items() if k != "allOf"}
    for part in parts:
        if set(part) == {"$ref"}:
            out["allOf"] = [part]
        else:
            out.update({k: v for k, v in part.items() if k not in out})
    return out


def _pinned(schema: dict[str, Any], resolve: Callable[[str], Any]) -> bool:
    """Each branch of a discriminated union already requires the discriminating property with one
    value. Otherwise the code generator writes that requirement into the branch models, which are
    also used alone: a branch model returned by another operation came out requiring the
    discriminator's value, which the spec does not; such a discriminator is dropped (a union
    without one validates the same values)."""
    name = schema["discriminator"].get("propertyName")
    branches = schema.get("oneOf") or schema.get("anyOf")
    if not isinstance(name, str) or not isinstance(branches, list):
        return False
    for branch in branches:
        required = _required(branch, resolve, set())
        prop = _deref(_properties(branch, resolve, set()).get(name), resolve)
        values = prop.get("enum") if isinstance(prop, dict) else None
        if (
            name not in required
            or not isinstance(prop, dict)
            or not ("const" in prop or (isinstance(values, list) and len(values) == 1))
        ):
            return False
    return True


def _required(schema: Any, resolve: Callable[[str], Any], seen: set[str]) -> set[str]:
    for _ in range(32):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            break
        if schema["$ref"] in seen:
            return set()
        seen = seen | {schema["$ref"]}
        schema = resolve(schema["$ref"])
    if not isinstance(schema, dict):
        return set()
    found = {n for n in schema.get("required") or [] if isinstance(n, str)}
    for part in schema.get("allOf") or []:
        found |= _required(part, resolve, seen)
    return found


def _narrow_parts(parts: list[Any], resolve: Callable[[str], Any]) -> list[Any]:
    inherited: dict[str, Any] = {}  # property -> its latest schema in earlier parts
    result = []
    for part in parts:
        if isinstance(part, dict) and "$ref" not in part and isinstance(part.get("properties"), dict):
            narrowed = {}
            for name, prop in part["properties"].items():
                parent = inherited.get(name)
                narrowed[name] = (
                    (_intersection(parent, prop, resolve) or _override(parent, prop, resolve))
                    if parent is not None
                    else None
                )
            if any(value is not None for value in narrowed.values()):
                part = {
                    **part,
                    "properties": {
                        n: narrowed[n] if narrowed[n] is not None else p for n, p in part["properties"].items()
                    },
                }
        inherited.update(_properties(part, resolve, set()))
        result.append(part)
    return result


# What an inherited declaration may say and still be overridden as a whole: nothing about its values'
# structure, only annotations, a type and nullability.
_BARE = {*_ANNOTATIONS, "type", "nullable", "items", "additionalProperties"}
OVERRIDE = "x-typed-mcp-override"
_STRUCTURE = ("items", "additionalProperties", "properties", "patternProperties", "$ref", *_UNIONS, "allOf")


def _override(parent: Any, child: Any, resolve: Callable[[str], Any]) -> dict[str, Any] | None:
    """The property marked as a new declaration (OVERRIDE), or None to leave it as it is. The code
    generator reads a property that an `allOf` part declares again as a narrowing of the inherited
    one and keeps the inherited type, dropping what the new declaration adds when that is structure.
    E.g. `allOf: [response-envelope, {properties: {result: {items: {...}}}}]` over
    `result: {type: array, items: {}}` came out as `list[Any]` (answers published as arrays of
    anything); a map over a property that the base only requires (declared as `{}`, see
    normalize.declare_required) came out as `Any`, so any value was sent. An extension keyword the
    code generator does not know makes it read the declaration as a new one. Only where the inherited
    declaration has no structure, so the child's schema is the whole intersection (null stays allowed
    only if both allow it)."""
    parent = _deref(parent, resolve)
    if not (
        isinstance(child, dict)
        and isinstance(parent, dict)
        and set(parent) <= _BARE
        and any(k in child for k in _STRUCTURE)
    ):
        return None
    if any(not _bare(parent[k]) for k in ("items", "additionalProperties") if k in parent):
        return None
    kinds = (parent.get("type"), child.get("type"))
    if all(isinstance(k, str) for k in kinds) and kinds[0] != kinds[1] and kinds != ("number", "integer"):
        return None  # types that do not meet (or a child wider than its parent): not a narrowing
    out = {**child, OVERRIDE: True}
    if "type" in parent and parent.get("nullable") is not True:
        out.pop("nullable", None)
    return out


def _bare(schema: Any) -> bool:
    """A schema that accepts anything (`true`, `{}`, annotations only)."""
    return schema is True or (isinstance(schema, dict) and set(schema) <= set(_ANNOTATIONS))


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
    union_key = (
        next((k for k in _UNIONS if isinstance(parent.get(k), list)), None) if isinstance(parent, dict) else None
    )
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
