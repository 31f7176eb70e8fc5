"""Parameter serialization: OpenAPI's style/explode rules for path, query, header and cookie values."""

from __future__ import annotations

import datetime
import enum
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from .results import UpstreamError


def encode_simple(value: Any) -> str:
    """One value as text: JSON spelling for booleans and null, comma-joined arrays."""
    value = _jsonable(value)
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
    """A path segment that cannot become more than one segment: `/`, `?`, `#`, `%` and dot
    segments are all percent-encoded."""
    text = quote(encode_simple(value), safe="-_~!$&'()*+,;=:@")
    if text in (".", ".."):
        text = text.replace(".", "%2E")
    return text


def expand_path(template: str, values: dict[str, Any], styles: dict[str, tuple[str | None, bool | None]]) -> str:
    out = template
    for name, value in values.items():
        style, explode = styles.get(name, (None, None))
        if value is None:
            raise UpstreamError(f"path parameter {name!r} is required")
        if style == "label":
            text = "." + encode_segment(value)
        elif style == "matrix":
            text = f";{quote(name, safe='')}={encode_segment(value)}"
        else:
            text = encode_segment(value)
        out = out.replace("{" + name + "}", text)
    return out


def encode_query(name: str, value: Any, style: str | None, explode: bool | None) -> list[tuple[str, str]]:
    value = _jsonable(value)
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


def _jsonable(value: Any) -> Any:
    """Models as the JSON they were given: only fields that were set, by their wire names."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    return value
