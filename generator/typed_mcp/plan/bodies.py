"""An operation's request body: the media type the tool sends, how its argument is encoded (JSON,
form, multipart, text or base64 bytes), the argument's name, and the model of a structured body
(its request view, without readOnly properties)."""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Iterator
from typing import Any

from typed_mcp import names
from typed_mcp.plan.content import is_json, media_map, schema_key
from typed_mcp.plan.ir import Body, BodyEncoding, Draft
from typed_mcp.plan.parameters import declared_parameters
from typed_mcp.plan.reading import Unsupported, nonblank
from typed_mcp.plan.variants import Views
from typed_mcp.spec.normalize import Document


def _body_names() -> Iterator[str]:
    """The body argument's name: `body`, or the first of `request_body`, `request_body_2`... that
    no parameter took."""
    yield from ("body", "request_body")
    yield from (f"request_body_{n}" for n in itertools.count(2))


def _declared_content_type(doc: Document, path_item: dict[str, Any], op: dict[str, Any]) -> str | None:
    """A fixed media type from a `Content-Type` header parameter (one `enum` value, `const` or
    `default`). OpenAPI says to ignore such a parameter, but some specs (Docker's `POST /build`:
    an `application/octet-stream` body, a `Content-Type` of `application/x-tar`) put the real type
    of a raw body there, and servers and mocks check it; for JSON, form and multipart bodies the
    request body's own media type always wins."""
    declared = None  # the operation's own parameter overrides the path item's
    for param in declared_parameters(doc, path_item, op):
        if not (
            isinstance(param, dict)
            and param.get("in") == "header"
            and str(param.get("name", "")).lower() == "content-type"
        ):
            continue
        schema, _ = doc.deref(param.get("schema") or {}, "#")
        if not isinstance(schema, dict):
            continue
        enum = schema.get("enum")
        value = schema.get("const", enum[0] if isinstance(enum, list) and len(enum) == 1 else schema.get("default"))
        if isinstance(value, str) and re.fullmatch(r"[\w.+-]+/[\w.+-]+", value):
            declared = value
    return declared


def request_body(
    doc: Document,
    path_item: dict[str, Any],
    op: dict[str, Any],
    tool: str,
    result: Draft,
    taken: set[str],
    arg_names: set[str],
    views: Views,
) -> Body | None:
    """The operation's request body, None when it has none; the schema of a structured body, under its
    request view, is added to `result.schemas`."""
    raw = op.get("requestBody")
    if raw is None:
        return None
    body, _ = doc.deref(raw, "#")
    if not isinstance(body, dict):
        raise Unsupported("the request body is not an object")
    content = media_map(body.get("content"), "the request body")
    if not content:
        return None
    arg_name = next(name for name in _body_names() if name not in arg_names)
    required = body.get("required") is True
    description = nonblank(body.get("description"))
    media_type, encoding = _body_encoding(content)
    raw_schema, _ = doc.deref((content[media_type] or {}).get("schema") or {}, "#")
    base64_text = encoding == "base64" and isinstance(raw_schema, dict) and raw_schema.get("format") == "byte"
    if base64_text:
        encoding = "text"  # the wire format is base64 text already: send the argument as it is
    if encoding in ("text", "base64"):
        media_type = _declared_content_type(doc, path_item, op) or media_type
        what = "base64-encoded bytes" if encoding == "base64" or base64_text else "text"
        note = f"Request body ({media_type}), as {what}."
        if encoding == "base64":
            note = f"Request body ({media_type}): base64-encoded bytes, or {FILE_NOTE}."
        text = f"{description}\n\n{note}" if description else note
        return Body(
            arg_name, required, None, media_type, encoding, text, base64_argument=encoding == "base64" or base64_text
        )
    schema = views.view((content[media_type] or {}).get("schema", {}), "request")  # without readOnly properties
    file_fields: tuple[str, ...] = ()
    if encoding == "multipart":
        schema, file_fields = _file_fields(doc, schema)
    key = schema_key(doc, schema, names.pascal_case(tool) + "Request", result, taken)
    return Body(arg_name, required, key, media_type, encoding, description, file_fields=file_fields)


# What a file argument may also be: a reference the server reads (`_runtime/files.py`, whose
# FileReference model is this schema's counterpart for raw bodies).
FILE_SCOPE = "(from the folders and hosts its operator allows)"
FILE_NOTE = (
    f'a file the server reads itself: {{"uri": "file:///path" or "https://...", "mimeType": "..."}} {FILE_SCOPE}'
)
FILE_REFERENCE = {
    "type": "object",
    "description": f"A file the server reads itself, by URI {FILE_SCOPE}.",
    "properties": {
        "uri": {"type": "string", "minLength": 1, "description": "file:///absolute/path or an http(s) URL"},
        "mimeType": {"type": "string", "description": "The file's media type; guessed from its name when not given"},
    },
    "required": ["uri"],
    "additionalProperties": False,
}


def _is_binary(schema: Any) -> bool:
    """A string of raw bytes: `format: binary` (OpenAPI 3.0), or a `contentMediaType` without a
    `contentEncoding` (3.1's way of saying a multipart part is a file)."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and (schema.get("format") == "binary" or ("contentMediaType" in schema and "contentEncoding" not in schema))
    )


def _file_fields(doc: Document, schema: Any) -> tuple[Any, tuple[str, ...]]:
    """A multipart body's schema whose file properties (its own, by wire name) also take a file
    reference, and their names; the schema as it is when it has none."""
    resolved, _ = doc.deref(schema, "#")
    properties = resolved.get("properties") if isinstance(resolved, dict) else None
    if not isinstance(properties, dict):
        return schema, ()
    files = tuple(name for name, prop in properties.items() if _is_binary(doc.deref(prop, "#")[0]))
    if not files:
        return schema, ()
    replaced = {name: _file_property(doc, prop) if name in files else prop for name, prop in properties.items()}
    return {**resolved, "properties": replaced}, files


def _file_property(doc: Document, prop: Any) -> dict[str, Any]:
    """A file property that also takes a reference, its description saying both."""
    described = nonblank(doc.deref(prop, "#")[0].get("description"))
    lead = f"{described}\n\n" if described else ""
    return {
        "anyOf": [prop, copy.deepcopy(FILE_REFERENCE)],
        "description": f"{lead}The file's text (sent as its UTF-8 bytes), or {FILE_NOTE}.",
    }


def _body_encoding(content: dict[str, Any]) -> tuple[str, BodyEncoding]:
    """The media type the tool sends, in order of preference, and how its argument is encoded."""
    for media_type in content:
        if is_json(media_type):
            return media_type, "json"
    forms: tuple[tuple[str, BodyEncoding], ...] = (
        ("application/x-www-form-urlencoded", "form"),
        ("multipart/form-data", "multipart"),
    )
    for media_type, encoding in forms:
        if media_type in content:
            return media_type, encoding
    media_type = next(iter(content))
    return media_type, "text" if media_type.startswith("text/") else "base64"
