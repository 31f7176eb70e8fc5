"""HTTP: one request per tool call, on one pooled client, with bounded retries and a response size cap.

Guarantees:
- the host, scheme and base path always come from the configured base URL; path parameters are
  percent-encoded so no value can add a segment, a query or a fragment;
- every failure is an `isError` result with a bounded, secret-free message, never a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import email.utils
import functools
import http.cookiejar
import importlib.util
import json
import logging
import ssl
import sys
import urllib.request
import zlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
from mcp.types import CallToolResult
from pydantic import BaseModel

from .config import Settings
from .contracts import IDEMPOTENT_METHODS
from .credentials import Credentials, Outgoing
from .files import Upload, is_reference, resolve_body
from .params import encode_query, encode_simple, expand_path, jsonable
from .results import (
    UpstreamError,
    answer_failure,
    declared_status,
    error_result,
    http_error_message,
    no_content_result,
    provenance,
    success_result,
)
from .urls import origin
from .work import off_loop

logger = logging.getLogger(__name__)
# httpcore imports sniffio inside the functions of every request; when it is not installed, each of
# those imports searched the whole of sys.path again and failed (a tenth of a worker's CPU under
# load). Recording its absence once makes the same import fail at once (a None in sys.modules is the
# import system's documented mark of a module that is not there; typeshed types the values as modules).
if importlib.util.find_spec("sniffio") is None:
    sys.modules.setdefault("sniffio", None)  # type: ignore[arg-type]
# The request extension that carries query credentials past httpx2's logging: httpx2 logs each request
# URL at INFO, so an API key in the query is added only by the transport, on the wire. (The runtime
# never touches the importing application's logging configuration.)
SECRET_QUERY = "typed_mcp.secret_query"

RETRY_STATUSES = {429, 502, 503, 504}
# An error answer is read only as far as its excerpt needs: a hostile or broken upstream's 64 MiB
# error page costs neither memory nor the cap's worth of reading.
ERROR_BODY_BYTES = 16 * 1024


@dataclass
class Api(Settings, Credentials):
    """The upstream API: its settings, credentials and one shared HTTP client."""

    _tokens: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)  # oauth2: token, expiry
    _token_locks: dict[str, asyncio.Lock] = field(default_factory=dict, repr=False)  # oauth2: one refresh at a time
    _locks_loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)
    _client: httpx2.AsyncClient | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def client(self) -> httpx2.AsyncClient:
        # One pooled client per event loop: a direct caller may run several `asyncio.run`s.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._loop is not loop:
            self._loop = loop
            self._client = httpx2.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                headers={"user-agent": self.user_agent},
                cookies=_no_cookies(),
                transport=_SecretQueryTransport(),
            )
        return self._client

    async def call(
        self,
        method: str,
        path: str,
        *,
        path_params: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        headers: dict[str, Any] | None = None,
        cookies: dict[str, Any] | None = None,
        styles: dict[str, tuple[str | None, bool | None]] | None = None,
        json_body: Any = None,
        form_body: Any = None,
        multipart_body: Any = None,
        text_body: str | None = None,
        base64_body: Any = None,
        content_type: str | None = None,
        file_fields: tuple[str, ...] = (),
        security: tuple[tuple[str, ...], ...] = (),
        accept: str | None = None,
        returns: Any = None,
        wrap: bool = False,
        kind: str = "json",
        empty_statuses: tuple[str, ...] = (),
        on_mismatch: str = "error",
        credentials_required: bool = False,
        location: tuple[str, ...] | None = None,
    ) -> CallToolResult:
        """Send one request and build the tool result. Never raises. `location`: where the answer
        sits in structuredContent, for error messages (default: `result` when wrapped)."""
        source: dict[str, Any] = {"method": method}
        answer: bytes | None = None  # a 2xx answer's body, once read
        try:
            if file_fields or is_reference(base64_body):
                base64_body, multipart_body, content_type = await resolve_body(
                    self, base64_body, multipart_body, file_fields, content_type
                )
            body = _Body(json_body, form_body, multipart_body, text_body, base64_body, content_type)
            outgoing = await self.outgoing(security, credentials_required)
            request = self._build(
                method,
                path,
                path_params or {},
                query or {},
                headers or {},
                cookies or {},
                styles or {},
                body,
                outgoing,
                accept,
            )
            source["url"] = self._scrub(_public_url(request.url, request.extensions.get(SECRET_QUERY, [])))
            response = await self._send(request)
            source["status"] = response.status_code
            if response.status_code >= 400:
                message = http_error_message(method, path, response, response.content)
                if response.status_code in (401, 403) and not outgoing.credentialed:
                    message += f" ({self._unauthorized_hint(security)})"
                return error_result(self._scrub(message), provenance(source))
            if 300 <= response.status_code < 400 and response.status_code != 304:
                return error_result(
                    self._scrub(_redirect_error(method, path, request.url, response)), provenance(source)
                )
            if response.status_code == 202:  # accepted: where its status is, for `tasks.py` to follow
                source.update(_status_resource(response, request.url, security))
            if (
                kind == "json"
                and wrap
                and not response.content.strip()
                and declared_status(response.status_code, empty_statuses)
            ):
                return no_content_result(response.status_code, source)
            answer = response.content
            reading = (response, answer, returns, wrap, kind, source, on_mismatch, location, f"{method} {path}")
            what = "reading the upstream's answer"
            return await off_loop(what, self.timeout, success_result, *reading, size=len(answer))
        except UpstreamError as exc:
            # After a 2xx answer to a call that is not idempotent, the text says first that it was done.
            source.setdefault("status", exc.status)
            return error_result(
                self._scrub(answer_failure(method, path, source["status"], str(exc), answer)), provenance(source)
            )
        except Exception as exc:  # last line of defence: a tool call must never crash the server
            logger.warning("tool call failed: %s %s: %s", method, path, type(exc).__name__)
            return error_result(f"{method} {path} failed: unexpected {type(exc).__name__}", provenance(source))

    def _unauthorized_hint(self, security: tuple[tuple[str, ...], ...]) -> str:
        """For a 401 or 403 to a call sent without credentials: what to set."""
        if self.forward_authorization:
            return "the MCP client sent no Authorization header to forward"
        if any(alternative for alternative in security):
            return f"sent without credentials; {self.missing_credentials(security)}"
        return (
            f"sent without credentials, as the spec declares none for it; set {self.env_prefix}_HEADERS "
            "to 'Authorization: Basic ...' or whatever the API wants, or declare it in the config's [auth]"
        )

    # -- request ---------------------------------------------------------------------------------

    def _build(
        self,
        method: str,
        path: str,
        path_params: dict[str, Any],
        query: dict[str, Any],
        headers: dict[str, Any],
        cookies: dict[str, Any],
        styles: dict[str, tuple[str | None, bool | None]],
        body: _Body,
        outgoing: Outgoing,
        accept: str | None,
    ) -> httpx2.Request:
        """The request: the call's own parameters, then what `outgoing` (the one decision of what
        the server adds) holds, and nothing else (the base URL's user info is in `outgoing`)."""
        base = self.effective_base_url
        if not base:
            raise UpstreamError(f"no base URL for the upstream API: set {self.env_prefix}_BASE_URL or pass --base-url")
        base_url = _plain_base(base)
        query_pairs = [
            pair for name, value in query.items() for pair in encode_query(name, value, *styles.get(name, (None, None)))
        ]
        full_path = base_url.path.rstrip("/") + expand_path(path, path_params, styles)
        url = _with_path(method, path, base_url, full_path, query_pairs)
        header_pairs = {name: _header_value(name, value) for name, value in headers.items() if value is not None}
        cookie_pairs = {name: encode_simple(value) for name, value in cookies.items() if value is not None}
        if accept:
            header_pairs.setdefault("accept", accept)
        present = {name.lower() for name in header_pairs}
        header_pairs.update({k: v for k, v in outgoing.headers.items() if k.lower() not in present})
        for name, value in outgoing.credentials.items():
            Outgoing.put(header_pairs, name, value)
        cookie_pairs.update(outgoing.cookies)
        secret_query = list(outgoing.query)  # added by the transport, never in the logged URL
        encoded = body.encode(header_pairs)
        if cookie_pairs:
            cookie = "; ".join(f"{k}={quote(v, safe='')}" for k, v in cookie_pairs.items())
            given = [header_pairs.pop(name) for name in [n for n in header_pairs if n.lower() == "cookie"]]
            header_pairs["cookie"] = "; ".join([*given, cookie])  # one Cookie header (RFC 6265 5.4)
        try:
            request = httpx2.Request(
                method,
                url,
                headers=header_pairs,
                extensions={SECRET_QUERY: secret_query} if secret_query else None,
                **encoded,
            )
        except httpx2.InvalidURL as exc:  # its message names the URL part, never a value
            raise UpstreamError(f"{method} {path}: invalid request URL: {str(exc)[:120]}") from None
        except (ValueError, TypeError) as exc:
            raise UpstreamError(f"{method} {path}: invalid request ({type(exc).__name__})") from None
        # Defence in depth: nothing above may move the request off the configured API.
        if (request.url.scheme, request.url.host, request.url.port) != (base_url.scheme, base_url.host, base_url.port):
            raise UpstreamError(f"{method} {path}: refusing a request outside the configured base URL")
        return request

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        """Send, retrying idempotent methods on 429/502/503/504 and connection errors, with
        exponential backoff that honours Retry-After, bounded in count and in total time."""
        attempts = self.retries + 1 if request.method in IDEMPOTENT_METHODS else 1
        waited = 0.0
        for attempt in range(attempts):
            response: httpx2.Response | None = None
            try:
                response = await self._send_once(request)
            except UpstreamError as exc:
                if not exc.retryable:
                    raise
                error = exc
            if response is not None and response.status_code not in RETRY_STATUSES:
                return response
            retry_after = response.headers.get("retry-after") if response is not None else None
            delay = _retry_after(retry_after, 0.5 * 2**attempt)
            if attempt == attempts - 1 or waited + delay > self.retry_budget:
                if response is not None:
                    return response  # the last answer, an error status the caller reports
                raise error
            waited += delay
            await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _send_once(self, request: httpx2.Request) -> httpx2.Response:
        timeout = self.timeout
        try:
            # httpx2's timeout bounds each network read, so an upstream sending one byte a second never
            # trips it: the whole exchange, headers and body, gets the same timeout as a deadline.
            with anyio.fail_after(timeout):
                status, headers, body = await self._exchange(request)
        except (httpx2.TimeoutException, TimeoutError):
            raise UpstreamError(f"upstream {request.method} timed out after {timeout:g}s") from None
        except httpx2.ConnectError as exc:
            refused = _refused_certificate(exc)
            if refused is not None:  # not a passing fault: trying again would be refused the same way
                raise UpstreamError(
                    f"the upstream API at {origin(request.url)} presented a certificate this server does not "
                    f"trust ({refused}); if a private CA signs it, give its certificate with SSL_CERT_FILE"
                ) from None
            raise UpstreamError(
                f"could not connect to the upstream API at {origin(request.url)}", retryable=True
            ) from None
        except (httpx2.ReadError, httpx2.WriteError, httpx2.RemoteProtocolError) as exc:
            raise UpstreamError(
                f"the upstream connection was closed or reset before the answer was complete ({type(exc).__name__})"
            ) from None
        except httpx2.HTTPError as exc:
            raise UpstreamError(f"upstream request failed: {type(exc).__name__}") from None
        return httpx2.Response(status, headers=headers, content=body, request=request)

    async def _exchange(self, request: httpx2.Request) -> tuple[int, list[tuple[str, str]], bytes]:
        """Status, headers and the decoded body (capped; only an excerpt's worth of an error answer)."""
        limit = self.max_response_bytes
        response = await self.client().send(request, stream=True)
        try:
            if not 200 <= response.status_code < 300:
                body = await _read_capped(response, min(limit, ERROR_BODY_BYTES), truncate=True)
            else:
                declared = response.headers.get("content-length", "")
                try:
                    if declared.isdigit() and int(declared) > limit:
                        raise UpstreamError(f"upstream response is {declared} bytes, over the {limit} byte cap")
                    body = await _read_capped(response, limit)
                except UpstreamError as exc:
                    exc.status = response.status_code  # a success too big to give is still a success
                    raise
        finally:
            await response.aclose()
        # The body is already decoded: the headers no longer describe an encoding or a length.
        headers = [(k, v) for k, v in response.headers.multi_items() if k not in ("content-encoding", "content-length")]
        return response.status_code, headers, body


async def _read_capped(response: httpx2.Response, limit: int, *, truncate: bool = False) -> bytes:
    """The body decoded (every Content-Encoding httpx2 decodes: gzip, deflate, br, zstd), reading
    stopped as soon as the decoded bytes pass `limit`: the cap counts what is held in memory, so a
    small compressed body cannot expand without bound. With `truncate`, the first `limit` bytes
    instead of an error."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding in _ZLIB_WBITS:
        return await _inflate_capped(response, encoding, limit, truncate)
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            return _past_limit(chunks, limit, truncate)
    return b"".join(chunks)


def _past_limit(chunks: list[bytes], limit: int, truncate: bool) -> bytes:
    """Reading stops past `limit`: the first `limit` bytes with `truncate`, else the cap's error."""
    if not truncate:
        raise UpstreamError(f"upstream response is over the {limit} byte cap (decoded)")
    return b"".join(chunks)[:limit]


_ZLIB_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


async def _inflate_capped(response: httpx2.Response, encoding: str, limit: int, truncate: bool) -> bytes:
    """gzip or deflate decoded here, zlib never asked for more than the cap allows (`max_length`):
    even one small network read of a bomb cannot expand past the cap in memory."""
    decoder, first = zlib.decompressobj(_ZLIB_WBITS[encoding]), True
    chunks: list[bytes] = []
    size = 0
    async for data in response.aiter_raw():
        while data and not decoder.eof:
            try:
                out = decoder.decompress(data, limit - size + 1)
            except zlib.error:
                if first and encoding == "deflate":  # raw deflate, without the zlib wrapper (as httpx2 reads it)
                    decoder, first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                if truncate:  # an error answer's excerpt: what decoded is enough
                    return b"".join(chunks)
                raise UpstreamError(f"upstream response is not valid {encoding}") from None
            first = False
            size += len(out)
            chunks.append(out)
            if size > limit:
                return _past_limit(chunks, limit, truncate)
            data = decoder.unconsumed_tail
    return b"".join(chunks)


def _no_cookies() -> http.cookiejar.CookieJar:
    """A cookie jar that keeps nothing: the client is shared by every caller of the server, so an
    upstream's Set-Cookie must not become state (one caller's session sent with another's request,
    or a jar that grows with each answer of an upstream that sets a new cookie every time). Cookies
    a request sends are its parameters and credentials, put on it by `_build`."""
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


@functools.lru_cache(maxsize=16)  # parsed on every call, of the one or two base URLs a server has
def _plain_base(base: str) -> httpx2.URL:
    """The base URL without its user info (which `Credentials.outgoing` sends as a header)."""
    return httpx2.URL(base).copy_with(username=None, password=None)


def _with_path(
    method: str, path: str, base_url: httpx2.URL, full_path: str, query: list[tuple[str, str]]
) -> httpx2.URL:
    """The base URL with the expanded path and the query; a URL httpx2 cannot send (too long) is an
    error result."""
    try:
        return base_url.copy_with(path=full_path, params=query or None)
    except httpx2.InvalidURL as exc:
        raise UpstreamError(f"{method} {path}: invalid request URL: {str(exc)[:120]}") from None


def _redirect_error(method: str, path: str, sent: httpx2.URL, response: httpx2.Response) -> str:
    """A 3xx answer: never followed (another origin would get the request and its credentials, and
    the same origin may move it off the base path), so an error saying where it pointed."""
    message = f"{method} {path} failed: HTTP {response.status_code} {response.reason_phrase}".rstrip()
    location = response.headers.get("location", "").strip()
    if not location:
        return f"{message}: a redirect without a Location, not followed"
    try:
        target = sent.join(location)
    except (httpx2.InvalidURL, ValueError):
        return f"{message}: a redirect to an invalid Location, not followed"
    if origin(target) != origin(sent):
        where = f"{origin(target)} (another origin)"
    else:
        where = target.path
    return f"{message}: a redirect to {where[:200]}, not followed (set the base URL to where the API answers)"


def _status_resource(
    response: httpx2.Response, sent: httpx2.URL, security: tuple[tuple[str, ...], ...]
) -> dict[str, Any]:
    """A 202 answer's status resource (`Operation-Location`, else `Location`), resolved against the
    request's URL, its Retry-After, and the credentials the request went with (to poll it alike)."""
    where = response.headers.get("operation-location", "").strip() or response.headers.get("location", "").strip()
    if not where:
        return {}
    try:
        url = str(sent.join(where))
    except (httpx2.InvalidURL, ValueError):
        return {}
    found: dict[str, Any] = {"location": url, "security": [list(alternative) for alternative in security]}
    retry_after = response.headers.get("retry-after")
    if retry_after:
        found["retry_after"] = _retry_after(retry_after, 1.0)
    return found


def _header_value(name: str, value: Any) -> str:
    """A header parameter's value; a control character (CR and LF above all: a second header, or a
    second request) is refused, naming the parameter."""
    text = encode_simple(value)
    if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in text):
        raise UpstreamError(f"header parameter {name!r} may not contain control characters (CR, LF...)")
    if not text.isascii():  # httpx2 sends header text as ASCII; other bytes would mean what the API guesses
        raise UpstreamError(f"header parameter {name!r} must be ASCII text (HTTP header values are)")
    return text


class _SecretQueryTransport(httpx2.AsyncBaseTransport):
    """Sends each request with its query credentials (the SECRET_QUERY extension) added to the URL,
    directly (`wire.py`), or through the proxy the environment names for that URL (as httpx2 would)."""

    def __init__(self) -> None:
        self._transports: dict[str | None, httpx2.AsyncBaseTransport] = {}
        # The proxy of each (scheme, host), read from the environment once, as httpx2 reads it once per
        # client: reading it on every request was a scan of the whole environment per call.
        self._proxies: dict[tuple[str, str], str | None] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        secret = request.extensions.get(SECRET_QUERY)
        if secret:
            url = request.url.copy_with(params=[*request.url.params.multi_items(), *secret])
            request = httpx2.Request(
                request.method, url, headers=request.headers, stream=request.stream, extensions=request.extensions
            )
        key = (request.url.scheme, request.url.host)
        if key not in self._proxies:
            self._proxies[key] = _environment_proxy(request.url)
        proxy = self._proxies[key]
        if proxy not in self._transports:
            self._transports[proxy] = httpx2.AsyncHTTPTransport(proxy=proxy) if proxy else _direct()
        return await self._transports[proxy].handle_async_request(request)

    async def aclose(self) -> None:
        for transport in self._transports.values():
            await transport.aclose()


def _direct() -> httpx2.AsyncBaseTransport:
    """The transport of direct connections, loaded with the first request (aiohttp takes a tenth of a
    second to import: a server that only lists its tools never pays it)."""
    from .wire import AiohttpTransport

    return AiohttpTransport()


def _refused_certificate(exc: BaseException) -> str | None:
    """Why the TLS handshake refused the upstream's certificate (expired, self-signed, another host's
    name...), when that is what `exc` came from; else None."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or "certificate verify failed"
        seen = seen.__cause__ or seen.__context__
    return None


def _environment_proxy(url: httpx2.URL) -> str | None:
    """The proxy HTTP(S)_PROXY / ALL_PROXY name for `url`, unless NO_PROXY exempts its host."""
    if urllib.request.proxy_bypass(url.host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(url.scheme) or proxies.get("all")


def _retry_after(value: str | None, default: float) -> float:
    """Retry-After in seconds, or as an HTTP date; the default when absent or unreadable."""
    if not value:
        return default
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds(), 0.0)


@dataclass(frozen=True)
class _Body:
    """The request body in one of the encodings a tool can declare (at most one is set)."""

    json: Any = None
    form: Any = None
    multipart: Any = None
    text: str | None = None
    base64: str | bytes | None = None  # bytes: a referenced file's, read already
    content_type: str | None = None

    def encode(self, headers: dict[str, str]) -> dict[str, Any]:
        """The body as `httpx2.Request` arguments, its content type put in `headers` (httpx2 sets a
        multipart one itself, boundary included)."""
        if self.multipart is not None:
            return {"files": multipart_parts(self._multipart_fields())}
        return {"content": self._content(headers)}

    def _multipart_fields(self) -> dict[str, Any]:
        fields = (
            self.multipart.model_dump(by_alias=True, exclude_unset=True)
            if isinstance(self.multipart, BaseModel)
            else self.multipart
        )
        return fields if isinstance(fields, dict) else {}

    def _content(self, headers: dict[str, str]) -> bytes | None:
        if self.json is not None:
            headers["content-type"] = "application/json"
            return json.dumps(jsonable(self.json), ensure_ascii=False, separators=(",", ":")).encode()
        if self.form is not None:
            headers["content-type"] = "application/x-www-form-urlencoded"
            fields = jsonable(self.form)
            # OpenAPI's default for a form field is style form, explode true: an array is one
            # `name=value` pair per item (`event=a&event=b`).
            pairs: list[tuple[str, Any]] = [
                (k, encode_simple(item))
                for k, v in (fields.items() if isinstance(fields, dict) else [])
                for item in (v if isinstance(v, list) else [v])
                if item is not None
            ]
            return str(httpx2.QueryParams(pairs)).encode()
        if self.text is not None:
            headers["content-type"] = self.content_type or "text/plain"
            return self.text.encode()
        if self.base64 is not None:
            headers["content-type"] = self.content_type or "application/octet-stream"
            if isinstance(self.base64, bytes):
                return self.base64
            try:
                return base64.b64decode(self.base64, validate=True)
            except ValueError:
                raise UpstreamError("the request body is not valid base64") from None
        return None


def multipart_parts(fields: dict[str, Any]) -> list[tuple[str, tuple[str | None, bytes, str | None]]]:
    """multipart/form-data parts for httpx2 (`files=`), in field order, as OpenAPI encodes them by
    default: bytes as a file part, an object (or an array holding objects) as one JSON part, any other
    array as one part per item, anything else as a text part."""
    parts: list[tuple[str, tuple[str | None, bytes, str | None]]] = []
    for name, value in fields.items():
        for item in value if isinstance(value, list) and not any(isinstance(v, dict) for v in value) else [value]:
            if item is None:
                continue
            if isinstance(item, bytes):
                parts.append((name, (name, item, "application/octet-stream")))
            elif isinstance(item, Upload):
                parts.append((name, (item.filename, item.data, item.mime_type)))
            elif isinstance(item, (dict, list, BaseModel)):
                parts.append((name, (None, json.dumps(jsonable(item)).encode(), "application/json")))
            else:
                parts.append((name, (None, encode_simple(item).encode(), None)))
    return parts


def encode_multipart(fields: dict[str, Any]) -> tuple[bytes, str]:
    """The multipart body httpx2 sends for `fields`, and its content type (boundary included)."""
    request = httpx2.Request("POST", "http://multipart.invalid/", files=multipart_parts(fields))
    return request.read(), request.headers["content-type"]


def _public_url(url: httpx2.URL, secret: list[tuple[str, str]]) -> str:
    """The request URL as shown to clients: no user info, query credentials as REDACTED."""
    if not secret and not url.userinfo:  # as built (`_plain_base`): nothing to take out
        return str(url)
    params = [*url.params.multi_items(), *((name, "REDACTED") for name, _ in secret)]
    return str(url.copy_with(username=None, password=None, params=params or None))
