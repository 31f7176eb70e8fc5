"""The streamable HTTP server as an ASGI app, for a process manager that binds the socket and runs
the workers itself:

    uvicorn --factory weather_mcp.asgi:create_app --workers 4 --host 127.0.0.1 --port 8000 \\
        --http weather_mcp._runtime.deadlines:DeadlineProtocol
    gunicorn -k uvicorn_worker.UvicornWorker -w 4 -b 127.0.0.1:8000 'weather_mcp.asgi:create_app()'

Configured by the command line's environment variables only (WEATHER_MCP_BASE_URL, _AUTH,
_ALLOWED_HOSTS, _ALLOWED_ORIGINS, _OAUTH_*, _TOOLSETS, _TOOLS, _READ_ONLY, _DISCOVERY, _JSON_RESPONSE,
_INSECURE_NO_AUTH). Always stateless: no request needs the worker of an earlier one, so workers and
replicas share nothing. Without an auth mode, only connections to a loopback address are served.
`--http ...DeadlineProtocol` gives uvicorn the deadlines the command line sets: a request's headers
within 10 s of its first byte, its body within 30 s (uvicorn itself has none: a client sending its
headers a byte a second holds a connection for ever); behind gunicorn, put such a proxy in front.
"""

import logging
import sys
from typing import Any

from ._runtime.hosting import Hosting
from ._runtime.selection import Selection, flag
from .server import Server, hosted_server, http_app
from .upstream import api

ENV = "WEATHER_MCP"  # the environment variables' prefix
# The exit status that both uvicorn's and gunicorn's supervisors read as "this worker cannot boot":
# they stop, instead of restarting a worker that would fail the same way forever.
BOOT_FAILURE = 3

logger = logging.getLogger(__name__)


def create_app() -> Any:
    """The ASGI app of one worker process. A configuration error is one line on stderr and exit
    status 3, the same rules as the command line's."""
    try:
        api.check()
        hosting = Hosting.from_env(ENV, flag(None, ENV + "_INSECURE_NO_AUTH"))
        server = hosted_server(hosting, Selection.from_options(None, None, None, ENV), flag(None, ENV + "_DISCOVERY"))
        if not isinstance(server, Server):
            raise ValueError("the ASGI app needs the package's catalog.json (regenerate the package)")
        json_response = flag(None, ENV + "_JSON_RESPONSE")
    except ValueError as exc:  # HostingError, SelectionError and the settings' errors: one line each
        print(f"{__name__}: error: {exc}", file=sys.stderr)
        raise SystemExit(BOOT_FAILURE) from None
    if hosting.auth != "none" and not hosting.origins.public:
        logger.warning("only loopback Host headers are accepted: name the public host in %s_ALLOWED_HOSTS", ENV)
    # httpx logs every request URL at INFO: keep it quiet whatever level the MCP SDK configures (as the CLI does).
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return http_app(server, hosting, stateless=True, json_response=json_response)
