"""Serve an OpenAPI document over stdio with FastMCP's `FastMCP.from_openapi` (the benchmark's baseline).

Run with the benchmark's own FastMCP venv, never with the typed-mcp venv:

    bench/.venv-fastmcp/bin/python bench/fastmcp_server.py --spec SPEC.json --base-url http://127.0.0.1:PORT

Or hosted, stateless streamable HTTP at /mcp with GET /health, the way FastMCP's HTTP deployment
docs give it to a process manager (`http_app(stateless_http=True)`), as `bench/load.py` runs it:

    FASTMCP_LOAD_SPEC=SPEC.json FASTMCP_LOAD_BASE_URL=http://127.0.0.1:PORT [FASTMCP_LOAD_JSON_RESPONSE=1] \
        bench/.venv-fastmcp/bin/python -m uvicorn --app-dir bench --factory fastmcp_server:create_app --workers 4

FastMCP 4.x takes an `httpx2.AsyncClient` (the legacy `httpx` client is only accepted with a
deprecation warning, and `httpx` itself is not installed in that venv).
"""

from __future__ import annotations

import argparse
import json
import sys


def build_server(spec_path: str, base_url: str):
    """`FastMCP.from_openapi` on the document at `spec_path`, calling `base_url`."""
    import httpx2
    from fastmcp import FastMCP

    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    client = httpx2.AsyncClient(base_url=base_url, timeout=30.0)
    return FastMCP.from_openapi(openapi_spec=spec, client=client, name=spec.get("info", {}).get("title", "OpenAPI"))


def create_app():
    """The ASGI app of one worker: stateless streamable HTTP, configured from the environment."""
    import os

    from starlette.responses import JSONResponse

    server = build_server(os.environ["FASTMCP_LOAD_SPEC"], os.environ["FASTMCP_LOAD_BASE_URL"])

    @server.custom_route("/health", methods=["GET"])
    async def health(request):  # noqa: ARG001 - starlette passes the request
        return JSONResponse({"status": "ok"})

    json_response = os.environ.get("FASTMCP_LOAD_JSON_RESPONSE") == "1"
    return server.http_app(stateless_http=True, json_response=json_response)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="OpenAPI JSON document")
    parser.add_argument("--base-url", required=True, help="upstream API base URL")
    args = parser.parse_args(argv)
    server = build_server(args.spec, args.base_url)
    # No banner: stdout is the protocol channel and the banner only adds start-up work on stderr.
    server.run("stdio", show_banner=False)


if __name__ == "__main__":
    sys.exit(main())
