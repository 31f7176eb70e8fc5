"""Configuration: security schemes and the upstream API's settings, read from the environment at call time."""

from __future__ import annotations

import contextvars
import math
import os
from dataclasses import dataclass, field

from .contracts import CREDENTIAL_NAME, HEADER_TOKEN, client_owns_header
from .results import UpstreamError

# Set per MCP request by the server when --forward-authorization is on (streamable HTTP).
FORWARDED_AUTHORIZATION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "forwarded_authorization", default=None
)


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
class Settings:
    """Where the upstream API is and how calls to it behave. Environment variables are read at each
    call, so a long-running server follows changes to them."""

    env_prefix: str
    default_base_url: str | None
    schemes: dict[str, Scheme] = field(default_factory=dict)
    user_agent: str = "typed-mcp"
    base_url: str | None = None  # set by --base-url; wins over the environment
    forward_authorization: bool = False  # send the MCP client's own Authorization header upstream
    extra_headers: dict[str, str] = field(default_factory=dict)  # sent with every request (typed-mcp config)

    @property
    def effective_base_url(self) -> str | None:
        return self.base_url or os.environ.get(f"{self.env_prefix}_BASE_URL") or self.default_base_url

    @property
    def env_headers(self) -> dict[str, str]:
        """`<PREFIX>_HEADERS`: `Name: value` lines sent with every request, for what the spec does not
        declare (a Basic credential, a tenant header). Never logged: they may hold credentials."""
        return parse_headers(f"{self.env_prefix}_HEADERS", os.environ.get(f"{self.env_prefix}_HEADERS", ""))

    @property
    def timeout(self) -> float:
        return _env_number(f"{self.env_prefix}_TIMEOUT", 30.0, above_zero=True)

    @property
    def retries(self) -> int:
        return int(_env_number(f"{self.env_prefix}_RETRIES", 2, whole=True))

    @property
    def long_running_seconds(self) -> float:
        """How long a long-running operation is polled within one call (`tasks.py`)."""
        return _env_number(f"{self.env_prefix}_LONG_RUNNING_SECONDS", 120.0, above_zero=True)

    @property
    def retry_budget(self) -> float:
        return _env_number(f"{self.env_prefix}_RETRY_MAX_SECONDS", 10.0)

    @property
    def max_response_bytes(self) -> int:
        return int(_env_number(f"{self.env_prefix}_MAX_RESPONSE_BYTES", 16 * 1024 * 1024, whole=True, above_zero=True))

    @property
    def max_argument_bytes(self) -> int:
        """The most JSON a tool call's name and arguments may hold (UTF-8 bytes): over it, the call is an
        error before anything checks or sends them."""
        return int(_env_number(f"{self.env_prefix}_MAX_ARGUMENT_BYTES", 1024 * 1024, whole=True, above_zero=True))

    def check(self) -> None:
        """Read every numeric setting once: a server refuses to start on one it cannot use."""
        _ = (self.timeout, self.retries, self.retry_budget, self.max_response_bytes, self.max_argument_bytes)
        _ = self.env_headers

    def holds_credential(self, header: str) -> bool:
        """Whether a header of this name carries a credential: one every API reads as such, one a
        security scheme (of the spec or the config's [auth]) names, or a name that says so."""
        name = header.lower()
        named = {scheme.name.lower() for scheme in self.schemes.values() if scheme.location == "header" and scheme.name}
        return name in CREDENTIAL_HEADERS or name in named or CREDENTIAL_NAME.search(name) is not None


class SettingsError(UpstreamError, ValueError):
    """An environment variable with a value the runtime cannot use; the message names it."""


# Headers that carry a credential whatever the API (RFC 9110 11.6.2 and 11.7.2, RFC 6265): a cookie
# scheme's value travels in Cookie.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


def parse_headers(variable: str, text: str) -> dict[str, str]:
    """`Name: value` lines (blank lines skipped); a line that is not one, a header the client owns or
    a control character in a value is a SettingsError naming the variable and the line (not its value)."""
    headers: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not HEADER_TOKEN.fullmatch(name):
            raise SettingsError(f"{variable} line {number}: expected 'Name: value'")
        if client_owns_header(name):
            raise SettingsError(f"{variable} line {number}: {name} is set by the HTTP client, not by hand")
        if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in value):
            raise SettingsError(f"{variable} line {number}: a header value may not hold control characters")
        headers[name] = value
    return headers


def _env_number(name: str, default: float, *, whole: bool = False, above_zero: bool = False) -> float:
    """A numeric setting; an unset or empty variable is the default, anything else must be a finite
    number of at least 0 (above 0, whole, when asked)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (above_zero and value == 0) or (whole and not value.is_integer()):
        kind = "a whole number" if whole else "a number"
        bound = "above 0" if above_zero else "of at least 0"
        raise SettingsError(f"{name} must be {kind} {bound} (got {raw[:40]!r})")
    return value
