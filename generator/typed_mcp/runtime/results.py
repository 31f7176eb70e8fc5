"""Tool results: the upstream answer as an MCP `CallToolResult`, validated as strict clients validate it."""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any, get_origin

import httpx2
from mcp.types import BlobResourceContents, CallToolResult, EmbeddedResource, ImageContent, TextContent
from pydantic import JsonValue, TypeAdapter, ValidationError

from .contracts import IDEMPOTENT_METHODS, SOURCE
from .formats import NAIVE_DATE_TIME_ERROR

PROVENANCE_KEY = SOURCE  # the _meta key of an answer's provenance (the runtime exports it)

EXCERPT_CHARS = 500
MAX_ERRORS_SHOWN = 10


class UpstreamError(Exception):
    """A failure whose message is safe to show to the MCP client."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status: int | None = None  # the upstream's status, when it answered before the failure


def answer_failure(method: str, path: str, status: int | None, problem: str, answer: bytes | None) -> str:
    """The error text of a call whose answer cannot be given as the tool promises (`problem`: not the
    model, not JSON, over the size cap...). When the call is not idempotent and the upstream answered
    2xx, the operation was done: the result is still an `isError` (a tool with an outputSchema may
    not answer without structuredContent otherwise, and data that contradicts that schema is refused
    by strict clients), so its text leads with what an agent must know, that a retry would do it
    again, then the status and the answer as text."""
    if method in IDEMPOTENT_METHODS or status is None or not 200 <= status < 300:
        return problem
    lead = (
        f"{method} {path} SUCCEEDED upstream (HTTP {status}): the operation took effect. "
        "Do NOT retry this call: a retry would do it again. "
        f"Only its answer could not be returned as this tool's result: {problem}"
    )
    if answer is None:
        return lead
    return f"{lead}\nThe upstream answer (HTTP {status}), as text:\n{answer.decode('utf-8', 'replace')}"


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def adapter(annotation: Any) -> TypeAdapter[Any]:
    found = _ADAPTERS.get(annotation)
    if found is None:
        found = _ADAPTERS[annotation] = TypeAdapter(annotation)
    return found


def provenance(source: dict[str, Any]) -> dict[str, Any]:
    """A result's `_meta`: where its answer came from (the request sent, the status)."""
    return {PROVENANCE_KEY: source}


def error_result(message: str, meta: dict[str, Any] | None = None) -> CallToolResult:
    """A result the model reads as a failure: `message` its only text, nothing structured."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True, _meta=meta)


def _excerpt(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def http_error_message(method: str, path: str, response: httpx2.Response, body: bytes) -> str:
    message = f"{method} {path} failed: HTTP {response.status_code} {response.reason_phrase}".rstrip()
    excerpt = _excerpt(body)
    return f"{message}: {excerpt}" if excerpt else message


def format_validation_error(
    exc: ValidationError, what: str, prefix: tuple[str, ...] = (), operation: str | None = None
) -> str:
    """Each error located by its path in structuredContent (so `result.0.humidity` when wrapped).
    Date-times without a timezone are named as the class of problem they are, with the one-line fix
    (`operation`: "METHOD /path", for the per-operation form)."""
    lines = []
    for error in exc.errors(include_url=False)[:MAX_ERRORS_SHOWN]:
        location = ".".join(str(part) for part in (*prefix, *error["loc"])) or "(root)"
        lines.append(f"{location}: {error['msg']}")
    more = exc.error_count() - len(lines)
    if more > 0:
        lines.append(f"... and {more} more")
    message = f"upstream response does not match {what}: " + "; ".join(lines)
    if any(error["type"] == NAIVE_DATE_TIME_ERROR for error in exc.errors(include_url=False)):
        where = f' (or under [operations."{operation}"] for this operation alone)' if operation else ""
        message += (
            ". The API sends date-times without a timezone where its spec says `format: date-time`:"
            f' to accept them, set naive_datetimes = "accept" in the typed-mcp config{where} and regenerate'
        )
    return message


def _is_json_type(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def success_result(
    response: httpx2.Response,
    body: bytes,
    returns: Any,
    wrap: bool,
    kind: str,
    source: dict[str, Any],
    on_mismatch: str = "error",
    location: tuple[str, ...] | None = None,
    operation: str | None = None,
) -> CallToolResult:
    """The tool result of a 2xx answer; `location`: where the answer sits in structuredContent, for
    error messages (default: under `result` when wrapped); `operation`: "METHOD /path"."""
    content_type = response.headers.get("content-type", "")
    location = location if location is not None else ("result",) if wrap else ()
    if kind == "empty":
        text = f"{source['method']} succeeded: HTTP {response.status_code}"
        return CallToolResult(content=[TextContent(type="text", text=text)], _meta=provenance(source))
    if kind == "json":
        if not body.strip() and returns is JsonValue:
            # JSON without a schema that came empty: nothing was promised about it, so it is a
            # success without content.
            return no_content_result(response.status_code, source)
        if not body.strip():
            raise UpstreamError(
                f"upstream returned HTTP {response.status_code} with an empty body where JSON was promised"
            )
        if returns is str and wrap and content_type and not _is_json_type(content_type):
            # A string response filed under `*/*` that comes as text: the text is the string.
            data = body.decode(response.encoding or "utf-8", "replace")
            text = json.dumps({"result": data}, ensure_ascii=False)
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content={"result": data},
                _meta=provenance(source),
            )
        if content_type and not _is_json_type(content_type) and "text/plain" not in content_type:
            raise UpstreamError(
                f"upstream returned {content_type.split(';')[0]} where JSON was promised: {_excerpt(body)[:200]}"
            )
        data = parse_json(body, location)
        if returns is not None:
            try:
                validate_strict(returns, body)
            except ValidationError as exc:
                message = format_validation_error(exc, type_name(returns), location, operation)
                if on_mismatch != "text":
                    raise UpstreamError(message) from None
                # The `text` policy (the tool publishes no outputSchema): the data as it came, as
                # text, after one warning line naming what does not match; no structuredContent.
                text = body.decode(response.encoding or "utf-8", "replace")
                return CallToolResult(
                    content=[TextContent(type="text", text=f"warning: {message}\n{text}")], _meta=provenance(source)
                )
        structured = {"result": data} if wrap else data
        text = json.dumps(structured, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured, _meta=provenance(source)
        )
    media = content_type.split(";")[0].strip() or "application/octet-stream"
    if kind == "text" or media.startswith("text/") or _is_json_type(media):  # JSON: another 2xx answer (a 202 note)
        text = body.decode(response.encoding or "utf-8", "replace")
        return CallToolResult(content=[TextContent(type="text", text=text)], _meta=provenance(source))
    data64 = base64.b64encode(body).decode()
    if media.startswith("image/"):
        return CallToolResult(
            content=[ImageContent(type="image", data=data64, mime_type=media)], _meta=provenance(source)
        )
    resource = BlobResourceContents(uri=source.get("url", "upstream:response"), mime_type=media, blob=data64)
    return CallToolResult(content=[EmbeddedResource(type="resource", resource=resource)], _meta=provenance(source))


class _NotJson:
    """A value Python's json module reads but JSON has not (RFC 8259 section 6): NaN, Infinity,
    -Infinity, or a number past a double (1e400), which would be read as infinity."""

    def __init__(self, text: str) -> None:
        self.text = text


def parse_json(body: bytes | str, location: tuple[str, ...] = ()) -> Any:
    """An upstream body as JSON, strictly: what is not JSON is an UpstreamError, and a value JSON
    cannot hold is one naming where it sits (`location`, then the path in the answer). No NaN or
    infinity gets into a result: a JSON encoder would write it as null, or as no JSON at all, and
    the published schema would be broken."""
    found: list[_NotJson] = []

    def constant(text: str) -> _NotJson:
        found.append(_NotJson(text))
        return found[-1]

    def number(text: str) -> float | _NotJson:
        value = float(text)
        return value if math.isfinite(value) else constant(text)

    try:
        data = json.loads(body, parse_constant=constant, parse_float=number)
    except (ValueError, RecursionError):
        raise UpstreamError(f"upstream returned invalid JSON: {_excerpt(_bytes(body))[:200]}") from None
    if found:
        path = _path_of(data, found[0]) or []
        where = ".".join(str(part) for part in (*location, *path)) or "(root)"
        raise UpstreamError(f"upstream returned invalid JSON: {where}: {found[0].text[:40]} is not a JSON number")
    return data


def _path_of(data: Any, target: _NotJson) -> list[str | int] | None:
    """Where `target` sits in `data` (keys and indexes), breadth-first without recursion."""
    queue: list[tuple[Any, list[str | int]]] = [(data, [])]
    for value, path in queue:
        if value is target:
            return path
        if isinstance(value, dict):
            queue += [(item, [*path, key]) for key, item in value.items()]
        elif isinstance(value, list):
            queue += [(item, [*path, index]) for index, item in enumerate(value)]
    return None


def _bytes(body: bytes | str) -> bytes:
    return body.encode() if isinstance(body, str) else body


def declared_status(status: int, statuses: tuple[str, ...]) -> bool:
    return str(status) in statuses or f"{str(status)[0]}XX" in statuses


def no_content_result(status: int, source: dict[str, Any]) -> CallToolResult:
    """A success the spec declares without a body (a 204 beside a 200 with JSON): structured
    result null, which the tool's published `{"result": Model | null}` schema allows."""
    text = f"{source['method']} succeeded: HTTP {status}, no content"
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={"result": None}, _meta=provenance(source)
    )


def validate_strict(returns: Any, body: bytes) -> None:
    """Validate upstream JSON as a strict client would see it.

    Strict mode, because lax mode would accept "42" for an integer or a Unix time for a date-time,
    and a strict client (AJV) would then reject the untouched upstream JSON. One exception: JSON
    Schema, and so AJV, counts a whole number written as a float (22.0) as an integer, which
    pydantic's strict mode does not; such a body is validated again with those numbers as integers
    (the body itself, in structuredContent, stays as it came). Any other failure stands as it was.
    """
    try:
        adapter(returns).validate_json(body, strict=True)
        return
    except ValidationError as exc:
        original = exc
    whole: list[bool] = []

    def parse_float(text: str) -> float | int:
        value = float(text)
        if value.is_integer() and abs(value) < 2**53:
            whole.append(True)
            return int(value)
        return value

    converted = json.dumps(json.loads(body, parse_float=parse_float))
    if not whole:
        raise original
    try:
        adapter(returns).validate_json(converted, strict=True)
    except ValidationError:
        raise original from None


_QUALIFIED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")


def type_name(annotation: Any) -> str:
    """`Item`, `int`, and `list[Item]` or `Item | None` in full (a generic's own `__name__` is just
    `list`), each name without its module."""
    if get_origin(annotation) is None:
        name: str | None = getattr(annotation, "__name__", None)
        if name:
            return name
    return _QUALIFIED.sub("", str(annotation))
