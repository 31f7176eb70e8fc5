"""The data-tool profile (`typed-mcp generate --profile data-tools`): every tool's `structuredContent`
is `{"sources": [...], "data": <the API's JSON>, "table": [[header...], [row...], ...]}`, for
platforms that render tables and charts from it and register only tools that declare their sources.

- `sources`: the request URL as shown to clients (no user info, query credentials REDACTED: the
  `_meta["io.github.typed-mcp/source"]` URL), then the URLs the answer declares at its top level: `self`,
  `url`, `next`, `prev`, `previous`, `first`, `last` (a string or `{"href": ...}`), the same names
  under `links` or `_links` (HAL); relative ones resolved against the request URL, user info removed;
- `data`: the API's JSON, validated strictly with the response model (a mismatch is an `isError`
  result naming the field under `data.`); null for answers without a JSON schema;
- `table`: only for a tabular answer (a list of objects, or an object holding one): the declared
  columns in schema order, then one row per item.

Copied into a package only in this profile; the default profile's runtime does not import it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

import httpx2
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError
from pydantic.json_schema import SkipJsonSchema

from .contracts import SOURCE as PROVENANCE_KEY
from .http import Api
from .results import answer_failure, error_result, format_validation_error, type_name, validate_strict

T = TypeVar("T")
LINK_NAMES = ("self", "url", "next", "prev", "previous", "first", "last")
LINK_HOLDERS = ("links", "_links")
ROWS_SHOWN = 3  # rows repeated in `content`
CELL_CHARS = 40  # a cell longer than this is cut in `content`
DATA_CHARS = 1000  # a non-tabular answer's JSON shown in `content`


class DataResult(BaseModel, Generic[T]):
    """A data tool's structuredContent (and so its outputSchema): open, like every generated model."""

    model_config = ConfigDict(extra="allow")
    sources: list[str]
    data: T
    # Absent when the answer is not tabular (never null: SkipJsonSchema keeps null out of the schema).
    table: list[list[JsonValue]] | SkipJsonSchema[None] = None


async def data_call(
    api: Api,
    method: str,
    path: str,
    *,
    returns: Any = None,
    table: tuple[Sequence[str], Sequence[str]] | None = None,
    on_mismatch: str = "error",
    **kwargs: Any,
) -> CallToolResult:
    """`api.call`, its answer put in the data-tool envelope; `table`: (keys from the answer to the
    rows, declared columns). Failures stay the `isError` results `api.call` gives."""
    json_answer = returns is not None
    # Validated here, for the `data.` location; a value JSON cannot hold is refused there, named alike.
    result = await api.call(method, path, wrap=True, location=("data",), **kwargs)
    if result.is_error:
        return result
    source = (result.meta or {}).get(PROVENANCE_KEY, {})
    url = source.get("url", "")
    data = (result.structured_content or {}).get("result") if json_answer else None
    notes: list[str] = []
    if json_answer and data is not None:
        try:
            validate_strict(returns, json.dumps(data).encode())
        except ValidationError as exc:
            message = format_validation_error(exc, type_name(returns), ("data",), f"{method} {path}")
            if on_mismatch != "text":
                answer = json.dumps(data, ensure_ascii=False).encode()
                text = answer_failure(method, path, source.get("status"), message, answer)
                return error_result(text, result.meta)
            notes.append(f"warning: {message}")
    envelope: dict[str, Any] = {"sources": sources(url, data), "data": data}
    rows = _table(data, table) if table is not None else None
    if rows is not None:
        envelope["table"] = rows
    content = result.content if not json_answer else []
    text = "\n".join([*notes, summary(envelope)])
    return CallToolResult(
        content=[*content, TextContent(type="text", text=text)], structured_content=envelope, _meta=result.meta
    )


def sources(url: str, data: Any) -> list[str]:
    """The request URL, then the answer's own links, each once, in that order."""
    found = [url] if url else []
    if isinstance(data, dict):
        candidates = [data.get(name) for name in LINK_NAMES]
        for holder in LINK_HOLDERS:
            links = data.get(holder)
            if isinstance(links, dict):
                candidates += [links.get(name) for name in LINK_NAMES]
        for value in candidates:
            link = _link(url, value)
            if link is not None and link not in found:
                found.append(link)
    return found


def _link(base: str, value: Any) -> str | None:
    """An http(s) URL from a link value (a string or a HAL `{"href": ...}`), user info removed."""
    if isinstance(value, dict):
        value = value.get("href")
    if not isinstance(value, str) or not value:
        return None
    try:
        link = httpx2.URL(base).join(value) if base else httpx2.URL(value)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return None
    if link.scheme not in ("http", "https") or not link.host:
        return None
    return str(link.copy_with(username=None, password=None))


def _table(data: Any, table: tuple[Sequence[str], Sequence[str]]) -> list[list[JsonValue]] | None:
    keys, columns = table
    rows = data
    for key in keys:
        rows = rows.get(key) if isinstance(rows, dict) else None
    if not isinstance(rows, list) or not columns:
        return None
    return [list(columns), *([row.get(c) for c in columns] if isinstance(row, dict) else [] for row in rows)]


def summary(envelope: dict[str, Any]) -> str:
    """The key figures in words: rows and columns (and the first rows) or the fields, and the source."""
    table, data = envelope.get("table"), envelope["data"]
    source = envelope["sources"][0] if envelope["sources"] else "unknown"
    if table is not None:
        header, rows = table[0], table[1:]
        lines = [f"{len(rows)} row{'' if len(rows) == 1 else 's'}; columns: {', '.join(header)}; source: {source}"]
        lines += [" | ".join(_cell(value) for value in row) for row in rows[:ROWS_SHOWN]]
        if len(rows) > ROWS_SHOWN:
            lines.append(f"... and {len(rows) - ROWS_SHOWN} more rows")
        return "\n".join(lines)
    if isinstance(data, dict):
        head = f"object with {len(data)} field{'' if len(data) == 1 else 's'}: {', '.join(map(str, data))}"
    elif isinstance(data, list):
        head = f"list of {len(data)} item{'' if len(data) == 1 else 's'}"
    elif data is None:
        head = "no data"
    else:
        head = f"value {_cell(data)}"
    text = json.dumps(data, ensure_ascii=False)
    shown = text if len(text) <= DATA_CHARS else text[:DATA_CHARS] + "…"
    return f"{head}; source: {source}" + (f"\n{shown}" if data is not None else "")


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"
