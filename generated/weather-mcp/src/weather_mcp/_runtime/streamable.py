"""A package's server over streamable HTTP: the ASGI app at /mcp with GET /health, who is let in
(`hosting.py`), and uvicorn with request deadlines (`deadlines.py`). Only this transport loads them;
`--auth oauth` alone loads the token introspection (`introspection.py`)."""

from __future__ import annotations

import logging
from typing import Any

import anyio
from mcp.server import MCPServer
from starlette.routing import Route

from . import heap
from .hosting import WILDCARD_HOSTS, Hosting, loopback_only
from .options import BODY_SECONDS, HEADER_SECONDS
from .server import Package, Server

logger = logging.getLogger(__name__)

# Seconds an idle HTTP connection stays open (uvicorn: 5). Clients pause between requests (the 1.x
# TypeScript client compiles a page's outputSchemas before it asks for the next, many seconds on a big
# API) and then reuse the connection; longer than the 60 s idle timeout of common load balancers.
KEEP_ALIVE_SECONDS = 65


def http_app(
    package: Package,
    server: Server,
    hosting: Hosting,
    *,
    stateless: bool,
    json_response: bool = False,
    host: str = "127.0.0.1",
) -> Any:
    """The streamable HTTP ASGI app at /mcp, with GET /health: Host and Origin checked, `hosting`'s
    auth mode, and without one only loopback connections served (`hosting.loopback_only`).
    `stateless`: every request stands alone (any worker or replica can answer it); `json_response`:
    one JSON body per request instead of an SSE stream."""
    oauth = {}
    if hosting.oauth is not None:
        from .introspection import IntrospectionVerifier  # only with --auth oauth

        oauth = {"auth": hosting.oauth.settings(), "token_verifier": IntrospectionVerifier(hosting.oauth)}
    app = server.streamable_http_app(
        stateless_http=stateless,
        json_response=json_response,
        host=host,
        transport_security=hosting.origins.settings(),
        custom_starlette_routes=[Route("/health", endpoint=package.health, methods=["GET"], include_in_schema=False)],
        **oauth,
    )
    started()
    return loopback_only(app, hosting, package.env_prefix)


def started() -> None:
    """A hosted server's start-up, once its app is built: aiohttp imported now, so that its first
    calls do not wait for it; then what start-up built collected and frozen (`heap.py`): it lives as
    long as the server, and the full collection's pause costs no call yet."""
    from . import wire  # noqa: F401

    heap.settle(collect=True)


def serve_http(
    package: Package,
    server: Server | MCPServer,
    hosting: Hosting,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    stateless: bool = False,
    json_response: bool = False,
    access_log: bool = True,
    header_seconds: float = HEADER_SECONDS,
    body_seconds: float = BODY_SECONDS,
    workers: int = 1,
) -> int:
    """Serve MCP over streamable HTTP (with GET /health) until stopped; the exit status. Host and
    Origin are always checked (DNS rebinding), `hosting` says who is let in, and a request's headers
    and body must arrive within `header_seconds` and `body_seconds` (`deadlines.py`); `access_log`: a
    line per request on stdout. `workers` above 1: that many processes, each accepting on its own
    socket (`workers.py`; stateless only)."""
    if host in WILDCARD_HOSTS and not hosting.origins.public:
        logger.warning("only loopback Host headers are accepted: name this server's public host with --allowed-hosts")
    if isinstance(server, MCPServer):
        if hosting.auth != "none":  # fail closed: never serve without the chosen auth mode
            raise ValueError("--auth needs the package's catalog.json (regenerate the package)")
        if workers > 1:
            raise ValueError("--workers needs the package's catalog.json (regenerate the package)")
        started()
        server.run(
            "streamable-http",
            host=host,
            port=port,
            stateless_http=stateless,
            json_response=json_response,
            transport_security=hosting.origins.settings(),
        )
        return 0
    import uvicorn  # the HTTP server, with the deadlines of its protocol: only when serving HTTP

    from .deadlines import with_deadlines

    app = http_app(package, server, hosting, stateless=stateless, json_response=json_response, host=host)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        access_log=access_log,
        http=with_deadlines(header_seconds, body_seconds),
    )
    if workers > 1:
        from . import workers as processes

        return processes.serve(config, host, port, workers)
    anyio.run(uvicorn.Server(config).serve)
    return 0
