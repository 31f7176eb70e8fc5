"""Runtime of a typed-mcp package: turns a tool call into one HTTP request and the response into
an MCP tool result. Copied verbatim into every generated package (no templating), so it is plain,
tested Python.

Guarantees:
- the host, scheme and base path always come from the configured base URL; path parameters are
  percent-encoded so no value can add a segment, a query or a fragment;
- a 2xx JSON body is validated with the response model, and `structuredContent` is that body
  itself (wrapped as {"result": ...} where the MCP SDK's rules say so), never a re-serialization;
- every failure is an `isError` result with a bounded, secret-free message, never a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import datetime
import email.utils
import enum
import json
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address
from typing import Annotated, Any
from urllib.parse import quote
from uuid import UUID

import httpx
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    ToolAnnotations,
)
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, JsonValue, TypeAdapter, ValidationError, WithJsonSchema, model_validator
from pydantic import AwareDatetime as _AwareDatetime

logger = logging.getLogger(__name__)
# httpx logs every request URL at INFO, and a URL can carry an API key in its query: keep it quiet
# whatever level the MCP SDK configures.
logging.getLogger("httpx").setLevel(logging.WARNING)

PROVENANCE_KEY = "typed-mcp/source"
EXCERPT_CHARS = 500
MAX_ERRORS_SHOWN = 10


# --- models -------------------------------------------------------------------------------------------


def _drop_titles(schema: dict[str, Any], cls: type) -> None:
    # Titles repeat the class and property names ("Html Url" for html_url): about 14% of a big
    # catalog for nothing a client uses. Descriptions, which say something, stay.
    schema.pop("title", None)
    for prop in (schema.get("properties") or {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)


# The `email` format as the strict MCP clients check it: ajv-formats' full-mode regex (ASCII, any
# case). Email fields are validated with it, so the server never returns one that such a client
# would refuse, and the format stays in the schemas, where models and clients can see it.
_EMAIL = re.compile(
    r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?",
    re.ASCII | re.IGNORECASE,
)


def _email(value: str) -> str:
    if not _EMAIL.fullmatch(value):
        raise ValueError("value is not an email address of the `email` format")
    return value


EmailStr = Annotated[str, AfterValidator(_email), WithJsonSchema({"type": "string", "format": "email"})]


# The other formats strict clients check (ajv-formats 3, full mode, as the TypeScript SDK sets it
# up), ported so the server never accepts a value such a client refuses: pydantic's own parsers
# also take `10:00:00` for a `time` (AJV wants a timezone), `1 day` for a `duration`, a UUID
# without hyphens, `2024-01-01T00:00Z` or "1700000000" for a `date-time`. Each typed field is
# checked both ways: AJV's rule on the JSON text first, then pydantic's type.
_DATE = re.compile(r"(\d\d\d\d)-(\d\d)-(\d\d)", re.ASCII)
_TIME = re.compile(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?", re.ASCII | re.IGNORECASE)
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_FORMAT_PATTERNS = {
    "duration": re.compile(r"P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)", re.ASCII),
    "uuid": re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", re.ASCII | re.IGNORECASE),
    "ipv4": re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)", re.ASCII),
    "ipv6": re.compile(
        r"((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))", re.ASCII | re.IGNORECASE
    ),
}


# `uri` fields: real APIs put relative references there (Twilio's `uri`: "/2010-04-01/Accounts.json"),
# which the `uri` format refuses, so they are published and checked as `uri-reference`, absolute or
# relative, by ajv-formats' own regex.
_URI_REFERENCE = re.compile(
    r'''(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?''',
    re.ASCII | re.IGNORECASE,
)


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if not match:
        return False
    year, month, day = (int(g) for g in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(text: str) -> bool:
    match = _TIME.fullmatch(text)
    if not match:
        return False
    hour, minute, second = int(match[1]), int(match[2]), float(match[3])
    zone, sign = match[4], -1 if match[5] == "-" else 1
    zone_hours, zone_minutes = int(match[6] or 0), int(match[7] or 0)
    if zone_hours > 23 or zone_minutes > 59 or not zone:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    utc_minute = minute - zone_minutes * sign  # a leap second: 23:59:60 UTC only
    utc_hour = hour - zone_hours * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def _is_date_time(text: str) -> bool:
    parts = re.split(r"t|\s", text, flags=re.IGNORECASE)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


STRICT_FORMATS: dict[str, Callable[[str], bool]] = {
    "uri-reference": lambda text: _URI_REFERENCE.fullmatch(text) is not None,
    "date-time": _is_date_time,
    "date": _is_date,
    "time": _is_time,
    **{name: (lambda text, pattern=pattern: pattern.fullmatch(text) is not None) for name, pattern in _FORMAT_PATTERNS.items()},
}


def _strict_format(name: str, kind: Any, parsed: bool = True) -> Any:
    """`kind` (a datetime, a UUID...) read from a string that passes AJV's `name` rule. The string is
    parsed here (`parsed`), as pydantic's lax mode does: the type behind this validator then sees an
    instance, which its strict mode wants (strict mode parses only strings straight from JSON; the
    IP address types are the exception, and take the string)."""
    check, parse = STRICT_FORMATS[name], TypeAdapter(kind)

    def validate(value: Any) -> Any:
        if not isinstance(value, str):
            return value  # a number for a date-time: the strict type refuses it
        if not check(value):
            raise ValueError(f"value is not a `{name}` as strict MCP clients check the format")
        return parse.validate_python(value) if parsed else value

    return Annotated[kind, BeforeValidator(validate)]


# What the generated models use in place of the code generator's types (see generator/models.py).
AwareDatetime = _strict_format("date-time", _AwareDatetime)
Date = _strict_format("date", datetime.date)
Time = _strict_format("time", datetime.time)
Duration = _strict_format("duration", datetime.timedelta)
Uuid = _strict_format("uuid", UUID)
IPv4 = _strict_format("ipv4", IPv4Address, parsed=False)
IPv6 = _strict_format("ipv6", IPv6Address, parsed=False)


def _uri_reference(value: str) -> str:
    if not _URI_REFERENCE.fullmatch(value):
        raise ValueError("value is not a `uri-reference` as strict MCP clients check the format")
    return value


UriReference = Annotated[str, AfterValidator(_uri_reference), WithJsonSchema({"type": "string", "format": "uri-reference"})]


class OpenModel(BaseModel):
    """Base of every generated model: unknown fields are kept (an API that adds a field must never
    break a client), and the JSON schema, which is the published outputSchema, has no titles."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_drop_titles)


class PropertyCount:
    """How many properties an object with declared properties may have (the schema's minProperties
    and maxProperties), as a model's `json_schema_extra`: published in its JSON schema, and checked
    by CountedModel, so a client is told that `{}` is refused and the server refuses it too."""

    def __init__(self, low: int | None, high: int | None) -> None:
        self.low, self.high = low, high

    def __call__(self, schema: dict[str, Any], cls: type) -> None:
        _drop_titles(schema, cls)
        if self.low is not None:
            schema["minProperties"] = self.low
        if self.high is not None:
            schema["maxProperties"] = self.high

    def check(self, data: dict[str, Any]) -> None:
        if self.low is not None and len(data) < self.low:
            raise ValueError(f"at least {self.low} propert{'y' if self.low == 1 else 'ies'} required, got {len(data)}")
        if self.high is not None and len(data) > self.high:
            raise ValueError(f"at most {self.high} propert{'y' if self.high == 1 else 'ies'} allowed, got {len(data)}")


class CountedModel(OpenModel):
    """A model whose schema limits its number of properties (see PropertyCount)."""

    @model_validator(mode="before")
    @classmethod
    def _property_count(cls, data: Any) -> Any:
        count = cls.model_config.get("json_schema_extra")
        if isinstance(count, PropertyCount) and isinstance(data, dict):
            count.check(data)
        return data


# --- configuration ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scheme:
    """A securityScheme: how a credential from the environment goes on the request."""

    kind: str  # "bearer", "basic", "apiKey" or "oauth2" (client credentials)
    env: tuple[str, ...]
    location: str | None = None  # apiKey: header, query or cookie
    name: str | None = None  # apiKey: header, query or cookie name
    token_url: str | None = None  # oauth2: where client credentials are exchanged for a token
    client_env: tuple[str, ...] = ()  # oauth2: client id and secret variables

    def configured(self) -> bool:
        if self.kind == "oauth2" and all(os.environ.get(var) for var in self.client_env):
            return True
        return all(os.environ.get(var) for var in self.env)

    def needs(self) -> str:
        """The environment variables to set, for an error message."""
        names = " + ".join(self.env)
        return f"{names} (or {' + '.join(self.client_env)})" if self.client_env else names


@dataclass
class Api:
    """The upstream API: base URL, credentials and one shared HTTP client."""

    env_prefix: str
    default_base_url: str | None
    schemes: dict[str, Scheme] = field(default_factory=dict)
    user_agent: str = "typed-mcp"
    base_url: str | None = None  # set by --base-url; wins over the environment
    forward_authorization: bool = False  # send the MCP client's own Authorization header upstream
    _tokens: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)  # oauth2: token, expiry
    _client: httpx.AsyncClient | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    @property
    def effective_base_url(self) -> str | None:
        return self.base_url or os.environ.get(f"{self.env_prefix}_BASE_URL") or self.default_base_url

    @property
    def timeout(self) -> float:
        return _env_float(f"{self.env_prefix}_TIMEOUT", 30.0)

    @property
    def retries(self) -> int:
        return int(_env_float(f"{self.env_prefix}_RETRIES", 2))

    @property
    def retry_budget(self) -> float:
        return _env_float(f"{self.env_prefix}_RETRY_MAX_SECONDS", 10.0)

    @property
    def max_response_bytes(self) -> int:
        return int(_env_float(f"{self.env_prefix}_MAX_RESPONSE_BYTES", 16 * 1024 * 1024))

    def client(self) -> httpx.AsyncClient:
        # One pooled client per event loop: a direct caller may run several `asyncio.run`s.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._loop is not loop:
            self._loop = loop
            self._client = httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False, headers={"user-agent": self.user_agent}
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
        base64_body: str | None = None,
        content_type: str | None = None,
        security: tuple[tuple[str, ...], ...] = (),
        accept: str | None = None,
        returns: Any = None,
        wrap: bool = False,
        kind: str = "json",
        empty_statuses: tuple[str, ...] = (),
    ) -> CallToolResult:
        """Send one request and build the tool result. Never raises."""
        source: dict[str, Any] = {"method": method}
        try:
            body = _Body(json_body, form_body, multipart_body, text_body, base64_body, content_type)
            credentials = await self._credentials(security)
            request = self._build(
                method, path, path_params or {}, query or {}, headers or {}, cookies or {}, styles or {}, body, credentials, accept
            )
            source["url"] = _public_url(request.url, self._secret_query_names())
            response = await self._send(request)
            source["status"] = response.status_code
            if response.status_code >= 400:
                return _error(_http_error(method, path, response, response.content), source)
            if kind == "json" and wrap and not response.content.strip() and _declared(response.status_code, empty_statuses):
                return _no_content(response.status_code, source)
            return _success(response, response.content, returns, wrap, kind, source)
        except UpstreamError as exc:
            return _error(str(exc), source)
        except Exception as exc:  # last line of defence: a tool call must never crash the server
            logger.warning("tool call failed: %s %s: %s", method, path, type(exc).__name__)
            return _error(f"{method} {path} failed: unexpected {type(exc).__name__}", source)

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
        credentials: list[tuple[Scheme, list[str]]],
        accept: str | None,
    ) -> httpx.Request:
        base = self.effective_base_url
        if not base:
            raise UpstreamError(
                f"no base URL for the upstream API: set {self.env_prefix}_BASE_URL or pass --base-url"
            )
        base_url = httpx.URL(base)
        url = base_url.copy_with(path=base_url.path.rstrip("/") + expand_path(path, path_params, styles))
        query_pairs = [pair for name, value in query.items() for pair in encode_query(name, value, *styles.get(name, (None, None)))]
        header_pairs = {name: encode_simple(value) for name, value in headers.items() if value is not None}
        cookie_pairs = {name: encode_simple(value) for name, value in cookies.items() if value is not None}
        if accept:
            header_pairs.setdefault("accept", accept)
        for scheme, values in credentials:
            _apply_scheme(scheme, values, header_pairs, query_pairs, cookie_pairs)
        content = body.encode(header_pairs)
        if cookie_pairs:
            header_pairs["cookie"] = "; ".join(f"{k}={quote(v, safe='')}" for k, v in cookie_pairs.items())
        try:
            request = httpx.Request(method, url.copy_with(params=query_pairs or None), headers=header_pairs, content=content)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise UpstreamError(f"{method} {path}: invalid request ({type(exc).__name__})") from None
        # Defence in depth: nothing above may move the request off the configured API.
        if (request.url.scheme, request.url.host, request.url.port) != (base_url.scheme, base_url.host, base_url.port):
            raise UpstreamError(f"{method} {path}: refusing a request outside the configured base URL")
        return request

    def _secret_query_names(self) -> set[str]:
        return {s.name for s in self.schemes.values() if s.kind == "apiKey" and s.location == "query" and s.name}

    async def _credentials(self, alternatives: tuple[tuple[str, ...], ...]) -> list[tuple[Scheme, list[str]]]:
        """The credentials for the first alternative that is fully configured (fetching an OAuth2
        token when needed), or none when the operation needs none."""
        forwarded = FORWARDED_AUTHORIZATION.get() if self.forward_authorization else None
        if forwarded:
            return [(Scheme("header", ("",), location="header", name="authorization"), [forwarded])]
        if not alternatives:
            return []
        for alternative in alternatives:
            schemes = [self.schemes.get(name) for name in alternative]
            if alternative and all(s is not None and s.configured() for s in schemes):
                return [(scheme, await self._values(name, scheme)) for name, scheme in zip(alternative, schemes)]  # type: ignore[arg-type]
        if any(len(alternative) == 0 for alternative in alternatives):
            return []  # authentication is optional for this operation
        needed = [" + ".join(self.schemes[name].needs() for name in alt if name in self.schemes) for alt in alternatives]
        needed = [n for n in needed if n]
        if not needed:
            raise UpstreamError("this operation needs a credential type typed-mcp cannot send")
        raise UpstreamError(f"missing credentials: set {' or '.join(needed)}")

    async def _values(self, name: str, scheme: Scheme) -> list[str]:
        if scheme.kind != "oauth2" or all(os.environ.get(var) for var in scheme.env):
            return [os.environ[var] for var in scheme.env]
        token, expires = self._tokens.get(name, ("", 0.0))
        if not token or time.monotonic() >= expires:
            token, expires = await self._fetch_token(name, scheme)
            self._tokens[name] = (token, expires)
        return [token]

    async def _fetch_token(self, name: str, scheme: Scheme) -> tuple[str, float]:
        """OAuth2 client credentials: exchange the client id and secret for an access token."""
        client_id, secret = (os.environ[var] for var in scheme.client_env)
        url = os.environ.get(f"{scheme.env[0].removesuffix('_TOKEN')}_TOKEN_URL") or scheme.token_url or ""
        if not url.startswith(("http://", "https://")):
            url = (self.effective_base_url or "").rstrip("/") + "/" + url.lstrip("/")
        try:
            response = await self.client().post(
                url, data={"grant_type": "client_credentials"}, auth=(client_id, secret), headers={"accept": "application/json"}
            )
            data = response.json() if response.is_success else {}
        except (httpx.HTTPError, ValueError):
            raise UpstreamError(f"could not get an OAuth2 token for {name} from {_origin(httpx.URL(url))}") from None
        token = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise UpstreamError(f"the OAuth2 token endpoint for {name} answered HTTP {response.status_code} without an access_token")
        lifetime = data.get("expires_in")
        lifetime = float(lifetime) if isinstance(lifetime, (int, float)) and not isinstance(lifetime, bool) else 3600.0
        return token, time.monotonic() + max(lifetime - 30.0, 1.0)  # renew a little before it expires

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send, retrying idempotent methods on 429/502/503/504 and connection errors, with
        exponential backoff that honours Retry-After, bounded in count and in total time."""
        attempts = self.retries + 1 if request.method in IDEMPOTENT_METHODS else 1
        waited = 0.0
        for attempt in range(attempts):
            response: httpx.Response | None = None
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

    async def _send_once(self, request: httpx.Request) -> httpx.Response:
        client = self.client()
        limit = self.max_response_bytes
        try:
            response = await client.send(request, stream=True)
            try:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise UpstreamError(f"upstream response is {declared} bytes, over the {limit} byte cap")
                chunks, size = [], 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    if size > limit:
                        raise UpstreamError(f"upstream response is over the {limit} byte cap")
                    chunks.append(chunk)
            finally:
                await response.aclose()
        except httpx.TimeoutException:
            raise UpstreamError(f"upstream {request.method} timed out after {self.timeout:g}s") from None
        except httpx.ConnectError:
            raise UpstreamError(f"could not connect to the upstream API at {_origin(request.url)}", retryable=True) from None
        except httpx.HTTPError as exc:
            raise UpstreamError(f"upstream request failed: {type(exc).__name__}") from None
        # Re-decode through httpx so Content-Encoding (gzip, br) is honoured.
        return httpx.Response(
            response.status_code, headers=response.headers, content=b"".join(chunks), request=request
        )


class UpstreamError(Exception):
    """A failure whose message is safe to show to the MCP client."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


IDEMPOTENT_METHODS = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}
RETRY_STATUSES = {429, 502, 503, 504}
# Set per MCP request by the HTTP transport when --forward-authorization is on.
FORWARDED_AUTHORIZATION: contextvars.ContextVar[str | None] = contextvars.ContextVar("forwarded_authorization", default=None)


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
    base64: str | None = None
    content_type: str | None = None

    def encode(self, headers: dict[str, str]) -> bytes | None:
        if self.json is not None:
            headers["content-type"] = "application/json"
            return json.dumps(_jsonable(self.json), ensure_ascii=False, separators=(",", ":")).encode()
        if self.form is not None:
            headers["content-type"] = "application/x-www-form-urlencoded"
            fields = _jsonable(self.form)
            # OpenAPI's default for a form field is style form, explode true: an array is one
            # `name=value` pair per item (Twilio's StatusCallbackEvent=initiated&StatusCallbackEvent=ringing).
            pairs = [
                (k, encode_simple(item))
                for k, v in (fields.items() if isinstance(fields, dict) else [])
                for item in (v if isinstance(v, list) else [v])
                if item is not None
            ]
            return str(httpx.QueryParams(pairs)).encode()
        if self.multipart is not None:
            fields = self.multipart.model_dump(by_alias=True, exclude_unset=True) if isinstance(self.multipart, BaseModel) else self.multipart
            content, headers["content-type"] = encode_multipart(fields if isinstance(fields, dict) else {})
            return content
        if self.text is not None:
            headers["content-type"] = self.content_type or "text/plain"
            return self.text.encode()
        if self.base64 is not None:
            headers["content-type"] = self.content_type or "application/octet-stream"
            try:
                return base64.b64decode(self.base64, validate=True)
            except ValueError:
                raise UpstreamError("the request body is not valid base64") from None
        return None


def encode_multipart(fields: dict[str, Any]) -> tuple[bytes, str]:
    """multipart/form-data: bytes as file parts, objects as JSON parts, the rest as text."""
    boundary = os.urandom(16).hex()
    chunks: list[bytes] = []
    for name, value in fields.items():
        for item in value if isinstance(value, list) and not any(isinstance(v, dict) for v in value) else [value]:
            if item is None:
                continue
            disposition = f'form-data; name="{_quote_header(name)}"'
            if isinstance(item, bytes):
                head = f'{disposition}; filename="{_quote_header(name)}"\r\ncontent-type: application/octet-stream'
                data = item
            elif isinstance(item, (dict, list)) or isinstance(item, BaseModel):
                head, data = f"{disposition}\r\ncontent-type: application/json", json.dumps(_jsonable(item)).encode()
            else:
                head, data = disposition, encode_simple(item).encode()
            chunks.append(f"--{boundary}\r\ncontent-disposition: {head}\r\n\r\n".encode() + data + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def _quote_header(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ")


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _apply_scheme(
    scheme: Scheme, values: list[str], headers: dict[str, str], query: list[tuple[str, str]], cookies: dict[str, str]
) -> None:
    if scheme.kind in ("bearer", "oauth2"):
        headers["authorization"] = f"Bearer {values[0]}"
    elif scheme.kind == "basic":
        headers["authorization"] = "Basic " + base64.b64encode(f"{values[0]}:{values[1]}".encode()).decode()
    elif scheme.location == "header":
        headers[scheme.name or ""] = values[0]
    elif scheme.location == "query":
        query.append((scheme.name or "", values[0]))
    elif scheme.location == "cookie":
        cookies[scheme.name or ""] = values[0]


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")


def _public_url(url: httpx.URL, secret_params: set[str]) -> str:
    """The request URL as shown to clients: no user info, credential query values redacted."""
    params = [(k, "REDACTED" if k in secret_params else v) for k, v in url.params.multi_items()]
    return str(url.copy_with(username=None, password=None, params=params or None))


# --- parameter serialization (OpenAPI style/explode) -----------------------------------------------------


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
        # parser reads, where `page=1.0` fails an integer one (Cloudflare types pages as numbers).
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


# --- results ------------------------------------------------------------------------------------------


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def adapter(annotation: Any) -> TypeAdapter[Any]:
    found = _ADAPTERS.get(annotation)
    if found is None:
        found = _ADAPTERS[annotation] = TypeAdapter(annotation)
    return found


def _meta(source: dict[str, Any]) -> dict[str, Any]:
    return {PROVENANCE_KEY: source}


def _error(message: str, source: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True, _meta=_meta(source))


def _excerpt(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def _http_error(method: str, path: str, response: httpx.Response, body: bytes) -> str:
    message = f"{method} {path} failed: HTTP {response.status_code} {response.reason_phrase}".rstrip()
    excerpt = _excerpt(body)
    return f"{message}: {excerpt}" if excerpt else message


def format_validation_error(exc: ValidationError, what: str, prefix: tuple[str, ...] = ()) -> str:
    """Each error located by its path in structuredContent (so `result.0.humidity` when wrapped)."""
    lines = []
    for error in exc.errors(include_url=False)[:MAX_ERRORS_SHOWN]:
        location = ".".join(str(part) for part in (*prefix, *error["loc"])) or "(root)"
        lines.append(f"{location}: {error['msg']}")
    more = exc.error_count() - len(lines)
    if more > 0:
        lines.append(f"... and {more} more")
    return f"upstream response does not match {what}: " + "; ".join(lines)


def _is_json_type(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _success(
    response: httpx.Response, body: bytes, returns: Any, wrap: bool, kind: str, source: dict[str, Any]
) -> CallToolResult:
    content_type = response.headers.get("content-type", "")
    if kind == "empty":
        text = f"{source['method']} succeeded: HTTP {response.status_code}"
        return CallToolResult(content=[TextContent(type="text", text=text)], _meta=_meta(source))
    if kind == "json":
        if not body.strip() and returns is JsonValue:
            # JSON without a schema (Cloudflare's TUS upload start: `200 application/json: {}`) that
            # came empty: nothing was promised about it, so it is a success without content.
            return _no_content(response.status_code, source)
        if not body.strip():
            raise UpstreamError(f"upstream returned HTTP {response.status_code} with an empty body where JSON was promised")
        if returns is str and wrap and content_type and not _is_json_type(content_type):
            # A string response filed under `*/*` (Kubernetes' connect endpoints) that comes as text:
            # the text is the string.
            data = body.decode(response.encoding or "utf-8", "replace")
            text = json.dumps({"result": data}, ensure_ascii=False)
            return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"result": data}, _meta=_meta(source))
        if content_type and not _is_json_type(content_type) and "text/plain" not in content_type:
            raise UpstreamError(
                f"upstream returned {content_type.split(';')[0]} where JSON was promised: {_excerpt(body)[:200]}"
            )
        try:
            data = json.loads(body)
        except ValueError:
            raise UpstreamError(f"upstream returned invalid JSON: {_excerpt(body)[:200]}") from None
        if returns is not None:
            try:
                validate_strict(returns, body)
            except ValidationError as exc:
                raise UpstreamError(format_validation_error(exc, _type_name(returns), ("result",) if wrap else ())) from None
        structured = {"result": data} if wrap else data
        text = json.dumps(structured, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, _meta=_meta(source))
    media = content_type.split(";")[0].strip() or "application/octet-stream"
    if kind == "text" or media.startswith("text/") or _is_json_type(media):  # JSON: another 2xx answer (a 202 note)
        text = body.decode(response.encoding or "utf-8", "replace")
        return CallToolResult(content=[TextContent(type="text", text=text)], _meta=_meta(source))
    data64 = base64.b64encode(body).decode()
    if media.startswith("image/"):
        return CallToolResult(content=[ImageContent(type="image", data=data64, mime_type=media)], _meta=_meta(source))
    resource = BlobResourceContents(uri=source.get("url", "upstream:response"), mime_type=media, blob=data64)
    return CallToolResult(content=[EmbeddedResource(type="resource", resource=resource)], _meta=_meta(source))


def _declared(status: int, statuses: tuple[str, ...]) -> bool:
    return str(status) in statuses or f"{str(status)[0]}XX" in statuses


def _no_content(status: int, source: dict[str, Any]) -> CallToolResult:
    """A success the spec declares without a body (a 204 beside a 200 with JSON): structured
    result null, which the tool's published `{"result": Model | null}` schema allows."""
    text = f"{source['method']} succeeded: HTTP {status}, no content"
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"result": None}, _meta=_meta(source))


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


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


# --- tool registry ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolEntry:
    fn: Callable[..., Any]
    operation: str  # "GET /pets/{id}": the REST operation behind the tool
    name: str
    title: str | None
    description: str
    annotations: ToolAnnotations
    structured: bool


def tool(
    *,
    operation: str,
    name: str,
    description: str,
    title: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    structured: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Describe a tool function for the server (`fn.tool`). The function itself stays an ordinary
    coroutine that a user can call directly."""
    annotations = ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=True,
    )

    def describe(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.tool = ToolEntry(fn, operation, name, title, description, annotations, structured)  # type: ignore[attr-defined]
        return fn

    return describe
