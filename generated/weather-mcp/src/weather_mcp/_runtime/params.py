"""Parameter serialization: OpenAPI's style/explode rules for path, query, header and cookie values."""

from __future__ import annotations

import datetime
import enum
from typing import Any
from urllib.parse import quote, unquote

from pydantic import BaseModel

from .results import UpstreamError


def encode_simple(value: Any) -> str:
    """One value as text: JSON spelling for booleans and null, comma-joined arrays."""
    value = jsonable(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(encode_simple(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k},{encode_simple(v)}" for k, v in value.items())
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        # A `number` argument given as 1 arrives as 1.0; the API gets `page=1`, which any number
        # parser reads, where `page=1.0` fails an integer one (specs often type page numbers as numbers).
        return str(int(value))
    return str(value)


def encode_segment(value: Any) -> str:
    """A path value that stays inside its segment: every character that is not unreserved (RFC 3986
    ALPHA, DIGIT, `-`, `.`, `_`, `~`) is percent-encoded, `;` `/` `?` `#` `%` included; an array or
    object keeps its literal `,` separators (OpenAPI's simple style)."""
    value = jsonable(value)
    if isinstance(value, list):
        return ",".join(_quote_all(encode_simple(v)) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{_quote_all(str(k))},{_quote_all(encode_simple(v))}" for k, v in value.items())
    return _quote_all(encode_simple(value))


def _quote_all(text: str) -> str:
    return quote(text, safe="")


def _decoded(text: str) -> str:
    """`text` percent-decoded until it no longer changes (at most 8 times)."""
    for _ in range(8):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def _is_dot_segment(text: str) -> bool:
    """`.` or `..` in any percent-encoding (`%2e`, `%2E%2e`, `%252e`...): what a server that
    decodes (even twice) before it normalizes would read as a dot segment."""
    return _decoded(text) in (".", "..")


def _holds_dot_segment(text: str) -> bool:
    """A value that, decoded, has a `.` or `..` part between `/` or `\\` (`..%2f..%2fadmin`, `\\..`):
    encoded it is one segment, but a server that decodes `%2F` (or reads `\\` as `/`, as IIS does)
    before it normalizes walks up the path."""
    return any(part in (".", "..") for part in _decoded(text).replace("\\", "/").split("/"))


def expand_path(template: str, values: dict[str, Any], styles: dict[str, tuple[str | None, bool | None]]) -> str:
    out = template
    for name, value in values.items():
        style, explode = styles.get(name, (None, None))
        if value is None:
            raise UpstreamError(f"path parameter {name!r} is required")
        if _holds_dot_segment(encode_simple(value)):
            # Refused rather than encoded: some servers decode %2E, %2F or `\` before they normalize the path.
            raise UpstreamError(
                f"path parameter {name!r} may not hold a '.' or '..' segment (between '/' or '\\'), in any encoding"
            )
        if style == "label":
            text = "." + encode_segment(value)
        elif style == "matrix":
            text = f";{quote(name, safe='')}={encode_segment(value)}"
        else:
            text = encode_segment(value)
        out = out.replace("{" + name + "}", text)
    template_dots = {segment for segment in template.split("/") if _is_dot_segment(segment)}
    if any(_is_dot_segment(segment) and segment not in template_dots for segment in out.split("/")):
        raise UpstreamError("path parameters may not make a '.' or '..' segment")
    return out


def encode_query(name: str, value: Any, style: str | None, explode: bool | None) -> list[tuple[str, str]]:
    value = jsonable(value)
    if value is None:
        return []
    style = style or "form"
    explode = (style == "form") if explode is None else explode
    if isinstance(value, list):
        if not value:
            return []
        if style == "form" and explode:
            return [(name, encode_simple(v)) for v in value]
        separator = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(style, ",")
        return [(name, separator.join(encode_simple(v) for v in value))]
    if isinstance(value, dict):
        if style == "deepObject":
            return [(f"{name}[{k}]", encode_simple(v)) for k, v in value.items() if v is not None]
        if explode:
            return [(k, encode_simple(v)) for k, v in value.items() if v is not None]
        return [(name, encode_simple(value))]
    return [(name, encode_simple(value))]


def jsonable(value: Any) -> Any:
    """Models as the JSON they were given: only fields that were set, by their wire names."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    return value
