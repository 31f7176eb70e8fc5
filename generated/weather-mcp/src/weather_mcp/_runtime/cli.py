"""A package's command line (`python -m <module>`) and its ASGI app factory (`<module>.asgi`): the
options, each defaulting to its environment variable, and the server they choose. Its package gives
its names (`Command`) and, once the command line is read, its server's description (`Package`), so
that `--help` and `--version` import neither its tools nor its upstream API; stdio loads nothing of
serving HTTP (`streamable.py`)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import heap
from .options import (
    AUTH_MODES,
    BODY_SECONDS,
    BOOT_FAILURE,
    HEADER_SECONDS,
    HostingError,
    auth_mode,
    check_bind,
    deadline,
    listen_port,
    worker_count,
)
from .selection import Selection, SelectionError, flag
from .server import Package, Server, hosted_server, serve_stdio

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Command:
    """The names a package's command line shows."""

    module: str  # `python -m <module>`
    title: str  # the API's title
    env: str  # the environment variables' prefix
    version: str  # what `--version` prints


def parser(command: Command) -> argparse.ArgumentParser:
    env, module = command.env, command.module
    parser = argparse.ArgumentParser(prog=module, description=f"MCP server for {command.title}")
    parser.add_argument("--base-url", help=f"upstream API base URL (default: ${env}_BASE_URL or the spec's server)")
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable-http: address to bind")
    parser.add_argument(
        "--workers",
        type=int,
        help="streamable-http with --stateless: worker processes, each accepting on its own socket so that "
        f"connections spread evenly (Linux; ${env}_WORKERS; default 1)",
    )
    parser.add_argument("--port", type=int, help=f"streamable-http: port to bind (${env}_PORT; default 8000)")
    parser.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="streamable-http: keep no session state, so any replica can answer any request "
        f"(${env}_STATELESS=1; always on in the ASGI app, {module}.asgi)",
    )
    parser.add_argument(
        "--json-response",
        action="store_true",
        default=None,
        help="streamable-http: answer each request with one JSON body instead of an SSE stream "
        f"(${env}_JSON_RESPONSE=1)",
    )
    parser.add_argument(
        "--no-access-log",
        action="store_true",
        default=None,
        help=f"streamable-http: write no line per request to stdout (uvicorn's access log; ${env}_NO_ACCESS_LOG=1)",
    )
    parser.add_argument(
        "--auth",
        choices=AUTH_MODES,
        help=f"streamable-http: how clients are let in (${env}_AUTH; default none, loopback only): "
        "forwarded = each client's Authorization goes to the upstream API, the server holds no credential; "
        "oauth = OAuth 2.1 resource server, tokens checked by introspection, upstream credentials from the environment",
    )
    parser.add_argument("--forward-authorization", action="store_true", help="the same as --auth forwarded")
    parser.add_argument(
        "--header-timeout",
        type=float,
        help="streamable-http: seconds a request's headers may take to arrive, from its first byte "
        f"(${env}_HEADER_TIMEOUT; default 10); then 408 and the connection is closed",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        help="streamable-http: seconds a request's body may take to arrive, from its headers "
        f"(${env}_BODY_TIMEOUT; default 30)",
    )
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        default=None,
        help="streamable-http: allow a non-loopback --host without an auth mode (anyone who can connect is served; "
        f"${env}_INSECURE_NO_AUTH=1)",
    )
    parser.add_argument(
        "--allowed-hosts",
        help="streamable-http: Host header values accepted besides loopback and the bound address "
        f"(comma-separated, a name without :port matches any port; ${env}_ALLOWED_HOSTS)",
    )
    parser.add_argument(
        "--allowed-origins",
        help="streamable-http: Origin header values accepted besides loopback ones "
        f"(comma-separated, e.g. https://app.example.com; ${env}_ALLOWED_ORIGINS)",
    )
    oauth = parser.add_argument_group("--auth oauth", f"the secret comes from ${env}_OAUTH_INTROSPECTION_SECRET only")
    oauth.add_argument(
        "--oauth-resource", help=f"this server's URL as clients reach it, the tokens' audience (${env}_OAUTH_RESOURCE)"
    )
    oauth.add_argument("--oauth-issuer", help=f"the authorization server's issuer URL (${env}_OAUTH_ISSUER)")
    oauth.add_argument(
        "--oauth-introspection-url", help=f"its RFC 7662 introspection endpoint (${env}_OAUTH_INTROSPECTION_URL)"
    )
    oauth.add_argument(
        "--oauth-introspection-client", help=f"this server's client id there (${env}_OAUTH_INTROSPECTION_CLIENT)"
    )
    oauth.add_argument("--oauth-scopes", help=f"scopes every token must have, comma-separated (${env}_OAUTH_SCOPES)")
    parser.add_argument("--toolsets", help=f"serve only these toolsets' tools (comma-separated; ${env}_TOOLSETS)")
    parser.add_argument("--tools", help=f"serve these tools too, or only them (comma-separated; ${env}_TOOLS)")
    parser.add_argument(
        "--read-only", action="store_true", default=None, help=f"serve only read-only tools (${env}_READ_ONLY=1)"
    )
    parser.add_argument(
        "--discovery",
        action="store_true",
        default=None,
        help=f"serve four tools instead: search_tools, list_toolsets, describe_tool, call_tool (${env}_DISCOVERY=1)",
    )
    parser.add_argument("--version", action="store_true", help="print versions and the spec's sha256, then exit")
    return parser


def main(command: Command, package: Callable[[], Package], argv: list[str] | None = None) -> None:
    """The command line: `package()` gives the package's server description once the options are read."""
    options = parser(command)
    args = options.parse_args(argv)
    if args.version:
        print(command.version)
        return
    quiet_logging()  # stdout carries protocol messages only: everything else goes to stderr
    described = package()
    api, env = described.api, command.env
    try:
        api.check()
    except ValueError as exc:
        options.exit(2, f"{options.prog}: error: {exc}\n")
    if args.base_url:
        api.base_url = args.base_url
    try:
        args.insecure_no_auth = flag(args.insecure_no_auth, env + "_INSECURE_NO_AUTH")
        if args.transport == "stdio":  # the auth mode checked (stdio takes none), nothing of HTTP loaded
            hosting = None
            auth = auth_mode(args.auth, args.forward_authorization, env)
            check_bind(args.transport, args.host, auth, args.insecure_no_auth)
        else:
            from .hosting import Hosting

            hosting = Hosting.from_options(args, env)
            auth = hosting.auth
        port = listen_port(args.port, env)
        selection = Selection.from_options(args.toolsets, args.tools, args.read_only, env)
        server = hosted_server(described, auth, selection, flag(args.discovery, env + "_DISCOVERY"))
        stateless = flag(args.stateless, env + "_STATELESS")
        json_response = flag(args.json_response, env + "_JSON_RESPONSE")
        access_log = not flag(args.no_access_log, env + "_NO_ACCESS_LOG")
        workers = worker_count(args.workers, env, stateless, http=hosting is not None)
        header_seconds = deadline(args.header_timeout, env + "_HEADER_TIMEOUT", HEADER_SECONDS)
        body_seconds = deadline(args.body_timeout, env + "_BODY_TIMEOUT", BODY_SECONDS)
    except (SelectionError, HostingError, ValueError) as exc:  # one line: what is wrong and what to choose
        options.exit(2, f"{options.prog}: error: {exc}\n")
    if hosting is None:
        # What start-up built lives as long as the server (without a full collection first: the
        # client waits for its first listing; a hosted server's start-up is `streamable.started`).
        heap.settle()
        serve_stdio(server)
        return
    from .streamable import serve_http

    # streamable-http: GET /health answers {"status": "ok", ...} for load balancers.
    status = serve_http(
        described,
        server,
        hosting,
        host=args.host,
        port=port,
        stateless=stateless,
        json_response=json_response,
        access_log=access_log,
        header_seconds=header_seconds,
        body_seconds=body_seconds,
        workers=workers,
    )
    if status:
        sys.exit(status)


def asgi_app(package: Package, name: str) -> Any:
    """The ASGI app of one worker process (`name`: the package's `asgi` module, for messages). A
    configuration error is one line on stderr and exit status 3, the same rules as the command line's."""
    from .hosting import Hosting
    from .streamable import http_app

    env = package.env_prefix
    quiet_logging()
    try:
        package.api.check()
        hosting = Hosting.from_env(env, flag(None, env + "_INSECURE_NO_AUTH"))
        selection = Selection.from_options(None, None, None, env)
        server = hosted_server(package, hosting.auth, selection, flag(None, env + "_DISCOVERY"))
        if not isinstance(server, Server):
            raise ValueError("the ASGI app needs the package's catalog.json (regenerate the package)")
        json_response = flag(None, env + "_JSON_RESPONSE")
    except ValueError as exc:  # HostingError, SelectionError and the settings' errors: one line each
        # One write: the workers of a process manager share its stderr, and `print` writes the line and
        # its end apart, so two workers' lines could run into one.
        sys.stderr.write(f"{name}: error: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(BOOT_FAILURE) from None
    if hosting.auth != "none" and not hosting.origins.public:
        logger.warning("only loopback Host headers are accepted: name the public host in %s_ALLOWED_HOSTS", env)
    return http_app(package, server, hosting, stateless=True, json_response=json_response)


def quiet_logging() -> None:
    """Warnings and errors on stderr, unless logging is configured already (a process manager's log
    config). Else the MCP SDK configures INFO through rich, and logs each stateless request of a
    2025-revision client at INFO ("Terminating session: None"), each line a rendered table: nearly a
    third of such a call's CPU, and a line of log for every call. httpx2 logs every request URL at INFO:
    quiet whatever level is set."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("httpx2").setLevel(logging.WARNING)
