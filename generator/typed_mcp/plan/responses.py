"""An operation's primary response: which success status answers, in which media type, what kind
of result it gives (JSON with its model, text, image, binary or empty), and whether it may be null."""

from __future__ import annotations

import re
from typing import Any

from typed_mcp import names
from typed_mcp.plan.content import is_json, media_map, schema_key
from typed_mcp.plan.ir import Draft, Response, ResponseKind
from typed_mcp.plan.reading import Unsupported
from typed_mcp.plan.variants import Views
from typed_mcp.spec.normalize import Document

_STATUS_ORDER = ("200", "201", "202", "203", "206", "2XX", "204", "205", "default")
_NO_BODY = ("204", "205")


def primary_response(
    doc: Document, op: dict[str, Any], tool: str, result: Draft, taken: set[str], views: Views, naive: bool = False
) -> Response:
    """The operation's primary response (a success with a body if one has one); the schema it answers
    with, under its response view, is added to `result.schemas`. `naive`: its date-times may come
    without a timezone (the "naive" view)."""
    responses = op.get("responses") or {}
    if not isinstance(responses, dict):
        raise Unsupported("'responses' is not an object")
    codes = [c for c in _STATUS_ORDER if c in responses]
    codes += sorted(c for c in responses if c.startswith("2") and c not in codes)
    if len(codes) > 1 and "default" in codes:
        codes.remove("default")  # `default` is the success response only when no 2xx is declared
    if not codes:
        return Response(status="2XX", kind="empty", media_type=None)
    # The primary response: the first 2xx with a body (JSON, if it offers it), in status order: a
    # screenshot's `200 image/png` before its `202` JSON "in progress" note (Cloudflare's urlscanner).
    # HTTP gives 204 and 205 no body, whatever content a spec declares for them (Zoom declares JSON).
    contents = {code: {} if code in _NO_BODY else _content(doc, responses[code], code) for code in codes}
    status = next((c for c in codes if contents[c]), codes[0])
    content = contents[status]
    if not content:
        return Response(status=status, kind="empty", media_type=None)
    media_type = _json_media(content)
    if media_type is not None:
        schema = views.view((content[media_type] or {}).get("schema"), "response")  # without writeOnly properties
        if naive:
            schema = views.view(schema, "naive")
        key = schema_key(doc, schema, names.pascal_case(tool) + "Response", result, taken) if schema else None
        # Other 2xx answers the spec declares without a body (GitHub's "201 created / 204
        # updated"): a success too, whose structured result is null.
        empty = tuple(c for c in codes if not contents[c] and c != "default")
        return Response(
            status=status,
            kind="json",
            media_type=media_type,
            schema_key=key,
            nullable=_nullable(doc, schema),
            empty_statuses=empty,
        )
    media_type = next((m for m in content if _MEDIA_TYPE.fullmatch(m)), None)
    if media_type is None:
        # Not a media type at all (Cloudflare files script content under `string`): nothing to ask
        # for in `Accept`, which servers and mocks refuse; the answer's own Content-Type decides.
        return Response(status=status, kind="binary", media_type=None)
    kind: ResponseKind
    if media_type.startswith("text/"):
        kind = "text"
    elif media_type.startswith("image/"):
        kind = "image"
    else:
        kind = "binary"
    # Another 2xx answer in JSON (the screenshot's 202) is asked for too, after the primary type:
    # asking for the image alone, such an answer would be refused (406).
    json_also = next((m for c in codes if c != status and (m := _json_media(contents[c])) and m != "*/*"), None)
    return Response(status=status, kind=kind, media_type=media_type, json_also=json_also)


_MEDIA_TYPE = re.compile(r"[\w.+-]+/[\w.+*-]+(?:\s*;.*)?", re.ASCII)


def _nullable(doc: Document, schema: Any) -> bool:
    """The response schema itself admits `null` (`nullable`, `x-nullable`, or a type list with
    "null"), also through `$ref`s: GitHub's `issue-type` is a nullable object, and a model class
    alone would refuse the `null` the API may send."""
    for _ in range(16):
        if not isinstance(schema, dict):
            return False
        if schema.get("nullable") is True or schema.get("x-nullable") is True:
            return True
        types = schema.get("type")
        if isinstance(types, list) and "null" in types:
            return True
        if not isinstance(schema.get("$ref"), str):
            return False
        schema = doc.resolve_pointer(schema["$ref"])
    return False


def _content(doc: Document, raw: Any, status: str = "") -> dict[str, Any]:
    response, _ = doc.deref(raw, "#")
    if not isinstance(response, dict):
        raise Unsupported(f"response {status} is not an object")
    return media_map(response.get("content"), f"response {status}")


def _json_media(content: dict[str, Any]) -> str | None:
    media_type = next((m for m in content if is_json(m)), None)
    if media_type is None and "*/*" in content and isinstance((content["*/*"] or {}).get("schema"), dict):
        media_type = "*/*"
    return media_type
