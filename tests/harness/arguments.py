"""Valid arguments for a tool, made from its published inputSchema alone: what the strict-client
runs (tests, `typed-mcp corpus`, the benchmark) send to every tool of a spec."""

from __future__ import annotations

from typing import Any

from harness.instances import draw

FORMATS = {
    "date-time": "2026-11-30T09:00:00Z",
    "date": "2026-11-30",
    "time": "09:00:00Z",
    "email": "abc@example.com",
    "uri": "https://example.com/abc",
    "uri-reference": "https://example.com/abc",
    "url": "https://example.com/abc",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
    "byte": "YWJj",
}


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    seen = set()
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/") or ref in seen:
            raise ValueError(f"cannot resolve {ref!r}")
        seen.add(ref)
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema if isinstance(schema, dict) else {}


def synthesize(
    schema: Any, root: dict[str, Any], depth: int = 0, required_only: bool = False, text_first: bool = False
) -> Any:
    """A value valid for `schema` (a tool's inputSchema or a part of it; `$ref`s into its `$defs`).
    Objects get their required properties, and their optional ones too near the top (unless
    `required_only`). For a `oneOf`, the first candidate that matches exactly one branch."""
    schema = _resolve(schema, root)
    if depth > 12:
        raise ValueError("schema nests too deep to synthesize")
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if isinstance(schema.get("oneOf"), list) and schema["oneOf"]:
        base = {k: v for k, v in schema.items() if k != "oneOf"}
        branches = [b for b in schema["oneOf"] if _resolve(b, root).get("type") != "null"] or schema["oneOf"]
        candidates = [
            synthesize({**base, **_resolve(branch, root)}, root, depth + 1, required_only=only)
            for branch in branches
            for only in (False, True)
        ]
        if text_first:
            # A path, query or header value travels as text: `1` for `oneOf [integer, string]` reads as
            # both branches there (GitHub's workflow_id), a non-numeric string as one only.
            candidates.sort(key=lambda c: not isinstance(c, str))
        return next((c for c in candidates if _matches_one(c, schema["oneOf"], root)), candidates[0])
    for key in ("anyOf",):
        if key in schema:
            branches = [b for b in schema[key] if _resolve(b, root).get("type") != "null"] or schema[key]
            if text_first:  # as for oneOf: `int | str` (GitHub's workflow_id) is unambiguous on the wire as a word
                branches.sort(key=lambda b: _resolve(b, root).get("type") != "string")
            return synthesize(
                {**{k: v for k, v in schema.items() if k != key}, **_resolve(branches[0], root)}, root, depth + 1
            )
    if "allOf" in schema:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve(part, root)
            merged.setdefault("properties", {}).update(part.get("properties", {}))
            merged["required"] = sorted(set(merged.get("required", [])) | set(part.get("required", [])))
            for k, v in part.items():
                merged.setdefault(k, v)
        return synthesize(merged, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "string":
        value = "YWJj" if schema.get("contentEncoding") == "base64" else FORMATS.get(schema.get("format", ""), "abc")
        if isinstance(schema.get("pattern"), str) and schema.get("format") not in FORMATS:
            value = _matching(schema["pattern"], schema.get("minLength"), schema.get("maxLength")) or value
        return value.ljust(schema.get("minLength", 0), "a")[: schema.get("maxLength", len(value) + 1000)]
    if kind in ("integer", "number"):
        value: float = 1 if kind == "integer" else 1.5
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        if "exclusiveMinimum" in schema and not isinstance(schema["exclusiveMinimum"], bool):
            value = max(value, schema["exclusiveMinimum"] + 1)
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        return [synthesize(schema.get("items", {}), root, depth + 1)] * max(1, schema.get("minItems", 1))
    properties = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    # Required names a schema does not declare as properties (Box's revoke: `grant_type`) are required all the same.
    names = (
        [*properties, *(n for n in required if n not in properties)] if depth <= 2 and not required_only else required
    )
    # Deeper, a property that can hold one value only is sent too: it tells the branches of a union
    # apart (Box's taxonomy source `{"type": "file"}`; `{}` matched both of its oneOf branches).
    names += [n for n in properties if n not in names and _single_valued(properties[n], root)]
    optional = [n for n in properties if n not in names and n not in required]
    low, high = schema.get("minProperties"), schema.get("maxProperties")
    if isinstance(low, int) and len(names) < low:
        names += optional[: low - len(names)]
    if isinstance(high, int) and len(names) > high:
        names = [n for n in names if n in required] + [n for n in names if n not in required][
            : max(0, high - len(required))
        ]
    return {name: synthesize(properties.get(name, {}), root, depth + 1) for name in names}


def _single_valued(schema: Any, root: dict[str, Any]) -> bool:
    """`schema` (an optional property's: the value or null) admits one value besides null."""
    schema = _resolve(schema, root)
    values = [_resolve(b, root) for b in schema["anyOf"]] if isinstance(schema.get("anyOf"), list) else [schema]
    values = [v for v in values if v.get("type") != "null"]
    return len(values) == 1 and (
        "const" in values[0] or (isinstance(values[0].get("enum"), list) and len(values[0]["enum"]) == 1)
    )


def _matches_one(value: Any, branches: list[Any], root: dict[str, Any]) -> bool:
    """`value` is valid for exactly one of the `oneOf` branches (refs resolved in `root`)."""
    from jsonschema import Draft202012Validator

    defs = {key: root[key] for key in ("$defs", "definitions") if isinstance(root.get(key), dict)}
    matching = 0
    for branch in branches:
        try:
            matching += Draft202012Validator({**defs, **branch} if isinstance(branch, dict) else branch).is_valid(value)
        except Exception:  # an unreadable branch counts as not matching
            continue
    return matching == 1


BODY_ARGUMENTS = ("body", "request_body")  # the names a tool gives its request body argument


def synthesize_calls(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": t["name"], "arguments": synthesize_arguments(t["inputSchema"])} for t in tools]


def synthesize_arguments(input_schema: dict[str, Any], required_only: bool = False) -> dict[str, Any]:
    """Arguments for a tool: every argument but the body is a parameter, sent as text."""
    properties = input_schema.get("properties") or {}
    names = list(input_schema.get("required", [])) if required_only else list(properties)
    return {
        name: synthesize(properties.get(name, {}), input_schema, 1, text_first=name not in BODY_ARGUMENTS)
        for name in names
    }


def _matching(pattern: str, min_length: Any = None, max_length: Any = None) -> str | None:
    """A string matching `pattern` (an ECMA-262 regex, as JSON Schema means it), drawn
    deterministically by hypothesis-jsonschema; None when it finds none."""

    schema: dict[str, Any] = {"type": "string", "pattern": pattern}
    for key, value in (("minLength", min_length), ("maxLength", max_length)):
        if isinstance(value, int):
            schema[key] = value
    try:
        found = draw(schema, 1)
    except Exception:  # an unreadable pattern, or none found in time: the caller keeps its default
        return None
    return found[0] if found and isinstance(found[0], str) else None
