"""The streamable HTTP server as an ASGI app, for a process manager that binds the socket and runs
the workers itself:

    uvicorn --factory weather_mcp.asgi:create_app --workers 4 --host 127.0.0.1 --port 8000 \\
        --http weather_mcp._runtime.deadlines:DeadlineProtocol
    gunicorn -k weather_mcp._runtime.gunicorn_worker.DeadlineWorker -w 4 -b 127.0.0.1:8000 \\
        'weather_mcp.asgi:create_app()'

Configured by the command line's environment variables only (WEATHER_MCP_BASE_URL, _AUTH,
_ALLOWED_HOSTS, _ALLOWED_ORIGINS, _OAUTH_*, _TOOLSETS, _TOOLS, _READ_ONLY, _DISCOVERY, _JSON_RESPONSE,
_INSECURE_NO_AUTH). Always stateless: no request needs the worker of an earlier one, so workers and
replicas share nothing. Without an auth mode, only connections to a loopback address are served.
`--http ...DeadlineProtocol` (and gunicorn's `DeadlineWorker`, which needs the uvicorn-worker package)
give the server the deadlines the command line sets: a request's headers within 10 s of its first
byte, its body within 30 s, a head of at most 64 KiB, an answer read within 30 s of when it stops
moving (uvicorn itself has none of these: a client sending its headers a byte a second, or reading
none of a large answer, holds a connection for ever).
"""

from typing import Any

from ._runtime.cli import asgi_app
from .server import PACKAGE_INFO


def create_app() -> Any:
    """The ASGI app of one worker process. A configuration error is one line on stderr and exit
    status 3, the same rules as the command line's."""
    return asgi_app(PACKAGE_INFO, __name__)
