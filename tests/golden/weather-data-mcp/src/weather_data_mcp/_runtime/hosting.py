"""Who may reach a server served over streamable HTTP: the auth mode, the rule that a non-loopback
address needs one, and the Host/Origin allow-lists that stop DNS rebinding.

Auth modes (`--auth`, or `<PREFIX>_AUTH`):
- `none`: no client authentication; allowed on loopback only, unless `--insecure-no-auth`;
- `forwarded`: each client sends the upstream API's own credential in `Authorization`, which goes
  upstream as is; the server holds none (a client that sends none is sent upstream with none);
- `oauth`: the server is an OAuth 2.1 resource server (`introspection.py`); upstream credentials
  come from the server's environment, never from the client's token.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from .options import HostingError, auth_mode, check_bind, is_loopback_host

logger = logging.getLogger(__name__)

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_PORT = re.compile(r":(\d+|\*)$")
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:(\d+|\*))?$")
_ORIGIN = re.compile(r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:(\d+|\*))?$")


def env_list(value: str | None, env: str) -> list[str]:
    """A comma-separated option, else the comma-separated environment variable."""
    raw = value if value is not None else os.environ.get(env, "")
    return [item.strip() for item in raw.split(",") if item.strip()]


@dataclass(frozen=True)
class Origins:
    """The Host and Origin values an HTTP request may carry (DNS-rebinding protection, always on)."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    public: bool = False  # a host beyond loopback and the bound address was named

    @classmethod
    def build(cls, bind_host: str, hosts: Iterable[str], origins: Iterable[str], public_url: str | None) -> Origins:
        """Loopback names, the bound address, `public_url`'s host (the OAuth resource) and the named
        hosts; loopback origins, `public_url`'s origin and the named origins. A name without a port
        stands for any port."""
        hosts, origins = list(hosts), list(origins)
        for host in hosts:
            if not _HOST.match(host):
                raise HostingError(f"allowed host {host[:60]!r} is not a host name or [IPv6] address (with :port)")
        for origin in origins:
            if not _ORIGIN.match(origin):
                raise HostingError(f"allowed origin {origin[:60]!r} is not an origin like https://app.example.com")
        named_hosts = [*LOOPBACK_NAMES]
        if bind_host not in WILDCARD_HOSTS:
            named_hosts.append(f"[{bind_host}]" if ":" in bind_host and not bind_host.startswith("[") else bind_host)
        named_origins = [f"http://{name}" for name in LOOPBACK_NAMES]
        if public_url:
            scheme, netloc = public_url.split("://", 1)
            netloc = netloc.split("/", 1)[0]
            named_hosts.append(netloc)
            named_origins.append(f"{scheme}://{netloc}")
        public = bool(hosts) or public_url is not None
        return cls(_any_port([*named_hosts, *hosts]), _any_port([*named_origins, *origins]), public)

    def settings(self) -> TransportSecuritySettings:
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=list(self.hosts), allowed_origins=list(self.origins)
        )


def _any_port(values: list[str]) -> tuple[str, ...]:
    """Each value, and `value:*` for one without a port (the SDK's pattern for any port); no repeats."""
    out: dict[str, None] = {}
    for value in values:
        out[value] = None
        if not _PORT.search(value.removeprefix("http://").removeprefix("https://")):
            out[f"{value}:*"] = None
    return tuple(out)


@dataclass(frozen=True)
class Hosting:
    """What the command line and the environment chose for serving over streamable HTTP."""

    auth: str
    origins: Origins
    oauth: Any = None  # an `introspection.OAuthResource` with --auth oauth
    insecure_no_auth: bool = False

    @classmethod
    def from_options(cls, args: Any, env: str) -> Hosting:
        """From the server's parsed command line (`--auth`, `--host`, `--insecure-no-auth`,
        `--allowed-*`, `--oauth-*`), each option defaulting to its environment variable."""
        mode = auth_mode(args.auth, args.forward_authorization, env)
        check_bind(args.transport, args.host, mode, args.insecure_no_auth)
        oauth = {key: getattr(args, f"oauth_{key}") for key in OAUTH_OPTIONS}
        return cls._build(env, mode, args.insecure_no_auth, args.host, args.allowed_hosts, args.allowed_origins, oauth)

    @classmethod
    def from_env(cls, env: str, insecure_no_auth: bool) -> Hosting:
        """For a process manager that binds the socket itself (uvicorn, gunicorn): everything from
        the environment. The bind address is not known here, so `loopback_only` keeps the
        non-loopback rule on each connection instead."""
        mode = auth_mode(None, False, env)
        return cls._build(env, mode, insecure_no_auth, "", None, None, dict.fromkeys(OAUTH_OPTIONS))

    @classmethod
    def _build(
        cls,
        env: str,
        mode: str,
        insecure: bool,
        host: str,
        allowed_hosts: str | None,
        allowed_origins: str | None,
        oauth_options: dict[str, str | None],
    ) -> Hosting:
        oauth = None
        if mode == "oauth":
            from .introspection import OAuthResource  # only a server with --auth oauth needs it

            oauth = OAuthResource.from_options(
                env,
                resource=oauth_options["resource"],
                issuer=oauth_options["issuer"],
                introspection_url=oauth_options["introspection_url"],
                client_id=oauth_options["introspection_client"],
                scopes=oauth_options["scopes"],
            )
        hosts = env_list(allowed_hosts, f"{env}_ALLOWED_HOSTS")
        origins = env_list(allowed_origins, f"{env}_ALLOWED_ORIGINS")
        return cls(mode, Origins.build(host, hosts, origins, oauth.resource if oauth else None), oauth, insecure)


OAUTH_OPTIONS = ("resource", "issuer", "introspection_url", "introspection_client", "scopes")


def loopback_only(app: Any, hosting: Hosting, env: str) -> Any:
    """The ASGI app, refusing every connection that reached a non-loopback address while no auth
    mode is chosen (and `--insecure-no-auth` is not given): the rule of `check_bind`, kept per
    connection for a server whose socket a process manager bound (`uvicorn --host 0.0.0.0`). The
    address a connection reached is the ASGI scope's `server`; a unix socket counts as non-loopback."""
    if hosting.auth != "none" or hosting.insecure_no_auth:
        return app
    message = (
        f"refused: this server has no auth mode and serves loopback connections only; set {env}_AUTH=oauth "
        f"or {env}_AUTH=forwarded, or {env}_INSECURE_NO_AUTH=1 to serve anyone who can connect"
    ).encode()
    warned: list[str] = []

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        server = scope.get("server") if scope["type"] in ("http", "websocket") else None
        if scope["type"] in ("http", "websocket") and not (server and is_loopback_host(str(server[0]))):
            if not warned:  # once per process: the operator sees why, clients see 403s
                warned.append(str(server))
                logger.error("%s (a connection reached %s)", message.decode(), server)
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(message)).encode())]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": message})
            return
        await app(scope, receive, send)

    return guarded
