"""Command line: `python -m weather_mcp` serves MCP over stdio (or streamable HTTP)."""

import argparse
import logging
import sys

from ._about import API_VERSION, GENERATOR, SPEC_SHA256, VERSION
from ._runtime.hosting import AUTH_MODES, BODY_SECONDS, HEADER_SECONDS, Hosting, HostingError, deadline, listen_port
from ._runtime.selection import Selection, SelectionError, flag
from .upstream import api

ENV = "WEATHER_MCP"  # the environment variables' prefix


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="weather_mcp", description="MCP server for Weather API")
    parser.add_argument(
        "--base-url", help="upstream API base URL (default: $WEATHER_MCP_BASE_URL or the spec's server)"
    )
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable-http: address to bind")
    parser.add_argument("--port", type=int, help="streamable-http: port to bind ($WEATHER_MCP_PORT; default 8000)")
    parser.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="streamable-http: keep no session state, so any replica can answer any request "
        "($WEATHER_MCP_STATELESS=1; always on in the ASGI app, weather_mcp.asgi)",
    )
    parser.add_argument(
        "--json-response",
        action="store_true",
        default=None,
        help="streamable-http: answer each request with one JSON body instead of an SSE stream "
        "($WEATHER_MCP_JSON_RESPONSE=1)",
    )
    parser.add_argument(
        "--auth",
        choices=AUTH_MODES,
        help="streamable-http: how clients are let in ($WEATHER_MCP_AUTH; default none, loopback only): "
        "forwarded = each client's Authorization goes to the upstream API, the server holds no credential; "
        "oauth = OAuth 2.1 resource server, tokens checked by introspection, upstream credentials from the environment",
    )
    parser.add_argument("--forward-authorization", action="store_true", help="the same as --auth forwarded")
    parser.add_argument(
        "--header-timeout",
        type=float,
        help="streamable-http: seconds a request's headers may take to arrive, from its first byte "
        "($WEATHER_MCP_HEADER_TIMEOUT; default 10); then 408 and the connection is closed",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        help="streamable-http: seconds a request's body may take to arrive, from its headers "
        "($WEATHER_MCP_BODY_TIMEOUT; default 30)",
    )
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        default=None,
        help="streamable-http: allow a non-loopback --host without an auth mode (anyone who can connect is served; "
        "$WEATHER_MCP_INSECURE_NO_AUTH=1)",
    )
    parser.add_argument(
        "--allowed-hosts",
        help="streamable-http: Host header values accepted besides loopback and the bound address "
        "(comma-separated, a name without :port matches any port; $WEATHER_MCP_ALLOWED_HOSTS)",
    )
    parser.add_argument(
        "--allowed-origins",
        help="streamable-http: Origin header values accepted besides loopback ones "
        "(comma-separated, e.g. https://app.example.com; $WEATHER_MCP_ALLOWED_ORIGINS)",
    )
    oauth = parser.add_argument_group(
        "--auth oauth", "the secret comes from $WEATHER_MCP_OAUTH_INTROSPECTION_SECRET only"
    )
    oauth.add_argument(
        "--oauth-resource",
        help="this server's URL as clients reach it, the tokens' audience ($WEATHER_MCP_OAUTH_RESOURCE)",
    )
    oauth.add_argument("--oauth-issuer", help="the authorization server's issuer URL ($WEATHER_MCP_OAUTH_ISSUER)")
    oauth.add_argument(
        "--oauth-introspection-url", help="its RFC 7662 introspection endpoint ($WEATHER_MCP_OAUTH_INTROSPECTION_URL)"
    )
    oauth.add_argument(
        "--oauth-introspection-client", help="this server's client id there ($WEATHER_MCP_OAUTH_INTROSPECTION_CLIENT)"
    )
    oauth.add_argument(
        "--oauth-scopes", help="scopes every token must have, comma-separated ($WEATHER_MCP_OAUTH_SCOPES)"
    )
    parser.add_argument("--toolsets", help="serve only these toolsets' tools (comma-separated; $WEATHER_MCP_TOOLSETS)")
    parser.add_argument("--tools", help="serve these tools too, or only them (comma-separated; $WEATHER_MCP_TOOLS)")
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=None,
        help="serve only read-only tools ($WEATHER_MCP_READ_ONLY=1)",
    )
    parser.add_argument(
        "--discovery",
        action="store_true",
        default=None,
        help=(
            "serve four tools instead: search_tools, list_toolsets, describe_tool, call_tool ($WEATHER_MCP_DISCOVERY=1)"
        ),
    )
    parser.add_argument("--version", action="store_true", help="print versions and the spec's sha256, then exit")
    args = parser.parse_args(argv)
    if args.version:
        print(f"weather-mcp {VERSION} (API {API_VERSION}; spec sha256 {SPEC_SHA256}; {GENERATOR})")
        return
    # stdout carries protocol messages only: everything else goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # httpx logs every request URL at INFO: keep it quiet whatever level the MCP SDK configures.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        api.check()
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    if args.base_url:
        api.base_url = args.base_url
    from .server import hosted_server, serve

    try:
        args.insecure_no_auth = flag(args.insecure_no_auth, ENV + "_INSECURE_NO_AUTH")
        hosting = Hosting.from_options(args, ENV)
        port = listen_port(args.port, ENV)
        selection = Selection.from_options(args.toolsets, args.tools, args.read_only, ENV)
        server = hosted_server(hosting, selection, flag(args.discovery, ENV + "_DISCOVERY"))
        stateless = flag(args.stateless, ENV + "_STATELESS")
        json_response = flag(args.json_response, ENV + "_JSON_RESPONSE")
        header_seconds = deadline(args.header_timeout, ENV + "_HEADER_TIMEOUT", HEADER_SECONDS)
        body_seconds = deadline(args.body_timeout, ENV + "_BODY_TIMEOUT", BODY_SECONDS)
    except (SelectionError, HostingError, ValueError) as exc:  # one line: what is wrong and what to choose
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    # streamable-http: GET /health answers {"status": "ok", ...} for load balancers.
    serve(
        server,
        args.transport,
        host=args.host,
        port=port,
        stateless=stateless,
        json_response=json_response,
        hosting=hosting,
        header_seconds=header_seconds,
        body_seconds=body_seconds,
    )


if __name__ == "__main__":
    main()
