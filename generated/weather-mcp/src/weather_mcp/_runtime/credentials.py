"""Credentials: the configured security schemes on a request, OAuth2 client-credentials tokens, and
the MCP client's own Authorization header when it is forwarded."""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from .config import FORWARDED_AUTHORIZATION, Scheme
from .results import UpstreamError, parse_json
from .urls import origin, token_url_allowed

YEAR = 365 * 24 * 3600.0  # the longest token lifetime believed


class Credentials:
    """What `Api` does with credentials (a mixin: it needs the settings, `_tokens` and `client()`)."""

    schemes: dict[str, Scheme]
    forward_authorization: bool
    effective_base_url: Any
    env_prefix: str
    env_headers: Any
    extra_headers: dict[str, str]
    holds_credential: Callable[[str], bool]
    client: Callable[[], httpx2.AsyncClient]
    _tokens: dict[str, tuple[str, float]]
    _token_locks: dict[str, asyncio.Lock]
    _locks_loop: asyncio.AbstractEventLoop | None

    async def outgoing(self, alternatives: tuple[tuple[str, ...], ...], required: bool = False) -> Outgoing:
        """What of the server's own goes on one request: the extra headers (the config's, then
        `<PREFIX>_HEADERS`), the base URL's user info and the security schemes' credentials. The one
        place that decides it: every header, query pair and cookie the server adds comes from here.

        In forwarded mode the server sends no credential of its own, whatever its source: only the
        client's Authorization, and of the extra headers only those that carry no credential
        (`holds_credential`). A client that brings none is sent upstream with none."""
        out = Outgoing()
        forwarded_mode = self.forward_authorization
        for extra in (self.extra_headers, self.env_headers):  # the environment's win over the config's
            for name, value in extra.items():
                if not (forwarded_mode and self.holds_credential(name)):
                    out.put(out.headers, name, value)
        if forwarded_mode:
            forwarded = FORWARDED_AUTHORIZATION.get()
            if forwarded:
                out.put(out.credentials, "authorization", forwarded)
        else:
            user = _user_info(self.effective_base_url)
            if user is not None:  # what httpx2 would send for it, made explicit: the URL itself goes without
                out.put(out.credentials, "authorization", "Basic " + _basic(*user))
            for scheme, values in await self._credentials(alternatives, required):
                _apply_scheme(scheme, values, out)
        held = any(map(self.holds_credential, out.headers))
        out.credentialed = held or bool(out.credentials or out.query or out.cookies)
        return out

    async def _credentials(
        self, alternatives: tuple[tuple[str, ...], ...], required: bool = False
    ) -> list[tuple[Scheme, list[str]]]:
        """The credentials for the first alternative that is fully configured (fetching an OAuth2
        token when needed), or none when the operation needs none or none is configured: the call
        goes out without them (an API may not need them, as a local server often does not), and a
        401 or 403 answer names the variables to set. `required` (the config's [auth] required)
        refuses the call instead."""
        if not alternatives:
            return []
        for alternative in alternatives:
            schemes = [s for name in alternative if (s := self.schemes.get(name)) is not None and s.configured()]
            if alternative and len(schemes) == len(alternative):
                return [
                    (scheme, await self._values(name, scheme))
                    for name, scheme in zip(alternative, schemes, strict=True)
                ]
        if any(len(alternative) == 0 for alternative in alternatives) or not required:
            return []  # optional for this operation, or not configured: sent without
        raise UpstreamError(self.missing_credentials(alternatives))

    def missing_credentials(self, alternatives: tuple[tuple[str, ...], ...]) -> str:
        """What to set for `alternatives`, for an error message."""
        needed = [
            " + ".join(self.schemes[name].needs() for name in alt if name in self.schemes) for alt in alternatives
        ]
        needed = [n for n in needed if n]
        headers = f"{self.env_prefix}_HEADERS"
        if not needed:
            return f"this operation needs a credential type typed-mcp cannot send (set it in {headers})"
        return f"missing credentials: set {' or '.join(needed)}"

    async def _values(self, name: str, scheme: Scheme) -> list[str]:
        if scheme.kind != "oauth2" or all(os.environ.get(var) for var in scheme.env):
            return [os.environ[var] for var in scheme.env]
        async with self._token_lock(name):  # one refresh at a time: concurrent calls wait for it
            token, expires = self._tokens.get(name, ("", 0.0))
            if not token or time.monotonic() >= expires:
                token, expires = await self._fetch_token(name, scheme)
                self._tokens[name] = (token, expires)
        return [token]

    def _token_lock(self, name: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # a lock belongs to one event loop, like the client
        if self._locks_loop is not loop:
            self._locks_loop, self._token_locks = loop, {}
        return self._token_locks.setdefault(name, asyncio.Lock())

    def _secrets(self) -> list[str]:
        """Every secret value the server holds or is sent with, longest first, in each form it may
        take in a body or a URL: the schemes' variables and tokens, `<PREFIX>_HEADERS` values (each
        in parts: the credential after its scheme word, a Basic pair decoded, each cookie), the base
        URL's user info and a forwarded Authorization. The one set every redaction uses."""
        values = {token for token, _ in self._tokens.values() if token}
        for scheme in self.schemes.values():
            values |= {os.environ[var] for var in (*scheme.env, *scheme.client_env) if os.environ.get(var)}
            if scheme.kind == "basic" and all(os.environ.get(var) for var in scheme.env):
                values.add(_basic(*(os.environ[var] for var in scheme.env)))
        for value in self._env_header_values():
            values |= _secret_forms(value)
        user = _user_info(self.effective_base_url)
        if user is not None:
            values |= {user[1], f"{user[0]}:{user[1]}", _basic(*user)}
        forwarded = FORWARDED_AUTHORIZATION.get() if self.forward_authorization else None
        if forwarded:
            values |= _secret_forms(forwarded)
        return sorted((v for v in values if len(v) >= 4), key=len, reverse=True)

    def _env_header_values(self) -> list[str]:
        """`<PREFIX>_HEADERS` values, or none when the variable cannot be read (the call that reads
        it fails on that, naming the variable)."""
        try:
            return list(self.env_headers.values())
        except ValueError:
            return []

    def _scrub(self, text: str) -> str:
        """`text` (an upstream error excerpt, a message) without any credential value in it."""
        for secret in self._secrets():
            text = text.replace(secret, "REDACTED")
        return text

    async def _fetch_token(self, name: str, scheme: Scheme) -> tuple[str, float]:
        """OAuth2 client credentials: exchange the client id and secret for an access token."""
        client_id, secret = (os.environ[var] for var in scheme.client_env)
        url = os.environ.get(f"{scheme.env[0].removesuffix('_TOKEN')}_TOKEN_URL") or scheme.token_url or ""
        if "://" not in url:  # relative: from the API's base URL
            url = (self.effective_base_url or "").rstrip("/") + "/" + url.lstrip("/")
        if not token_url_allowed(url):
            raise UpstreamError(f"the OAuth2 token URL for {name} must be https (http only on loopback)")
        try:
            response = await self.client().post(  # the secret goes to this URL only: no redirect is followed
                url,
                data={"grant_type": "client_credentials"},
                auth=(client_id, secret),
                headers={"accept": "application/json"},
                follow_redirects=False,
            )
            data = parse_json(response.content) if response.is_success else {}
        except (httpx2.HTTPError, UpstreamError):
            raise UpstreamError(f"could not get an OAuth2 token for {name} from {origin(httpx2.URL(url))}") from None
        token = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            raise UpstreamError(
                f"the OAuth2 token endpoint for {name} answered HTTP {response.status_code} without an access_token"
            )
        lifetime = data.get("expires_in")
        if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)):
            lifetime = 3600.0
        seconds = float(min(lifetime, YEAR))  # a whole number may be past a float
        return token, time.monotonic() + max(seconds - 30.0, 1.0)  # renew a little before it expires


@dataclass
class Outgoing:
    """What of the server's own goes on one request (`Credentials.outgoing`)."""

    headers: dict[str, str] = field(default_factory=dict)  # never over a header the call sets itself
    credentials: dict[str, str] = field(default_factory=dict)  # credential headers: over any of their name
    query: list[tuple[str, str]] = field(default_factory=list)  # query credentials, added by the transport
    cookies: dict[str, str] = field(default_factory=dict)  # cookie credentials
    credentialed: bool = False  # a credential of any kind goes on the request (for a 401's hint)

    @staticmethod
    def put(headers: dict[str, str], name: str, value: str) -> None:
        """Set a header, replacing one of the same name in any case (names are case-insensitive)."""
        for key in [key for key in headers if key.lower() == name.lower()]:
            del headers[key]
        headers[name] = value


def _apply_scheme(scheme: Scheme, values: list[str], out: Outgoing) -> None:
    if scheme.kind in ("bearer", "oauth2"):
        out.put(out.credentials, "authorization", f"Bearer {values[0]}")
    elif scheme.kind == "basic":
        out.put(out.credentials, "authorization", "Basic " + _basic(values[0], values[1]))
    elif scheme.location == "header":
        out.put(out.credentials, scheme.name or "", values[0])
    elif scheme.location == "query":
        out.query.append((scheme.name or "", values[0]))
    elif scheme.location == "cookie":
        out.cookies[scheme.name or ""] = values[0]


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


@functools.lru_cache(maxsize=16)  # asked on every call, of the one or two base URLs a server has
def _user_info(base_url: str | None) -> tuple[str, str] | None:
    """The user name and password of a base URL that holds them (`https://user:pass@host`)."""
    try:
        url = httpx2.URL(base_url or "")
    except httpx2.InvalidURL:
        return None
    return (url.username, url.password) if url.username or url.password else None


def _secret_forms(value: str) -> set[str]:
    """A header value and the forms its secret may take elsewhere: the credential after an auth
    scheme word (`Bearer x`, `Basic x`), a Basic credential decoded (and its password), and the
    values of a cookie list."""
    forms = {value.strip()}
    word, _, credential = value.strip().partition(" ")
    if credential:
        forms.add(credential.strip())
        if word.lower() == "basic":
            try:
                pair = base64.b64decode(credential.strip(), validate=True).decode()
            except ValueError:
                pair = ""
            forms |= {pair, pair.partition(":")[2]}
    for cookie in value.split(";"):
        forms.add(cookie.partition("=")[2].strip())
    return forms
