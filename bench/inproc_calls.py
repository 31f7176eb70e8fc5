"""Per-call latency of one MCP tool called in-process, against a direct HTTP GET to the same upstream.

Run by `bench/bench.py` in a fresh interpreter (so the first call is really cold), with the
interpreter of the venv that owns the server:

    .venv/bin/python bench/inproc_calls.py typed-mcp --src DIR/src --module MODULE --operation "GET /p" --base-url URL
    bench/.venv-fastmcp/bin/python bench/inproc_calls.py fastmcp --spec SPEC --operation "GET /p" --base-url URL

Both servers are driven by the MCP Python SDK's `Client(server)` (in-process; for FastMCP its
low-level server inside FastMCP's own lifespan). The direct baseline is an `httpx.AsyncClient`
(`httpx2` in the FastMCP venv, which is what FastMCP itself uses). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator
from typing import Any


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@contextlib.asynccontextmanager
async def typed_mcp_server(src: str, module: str, base_url: str) -> AsyncIterator[Any]:
    sys.path.insert(0, src)
    upstream = __import__(f"{module}.upstream", fromlist=["api"])
    upstream.api.base_url = base_url
    server_module = __import__(f"{module}.server", fromlist=["build_server"])
    server = server_module.build_server()
    # Names from the published catalog, as a client sees them: importing the tools here would
    # make the first call look cheaper than it is.
    names = {tool.meta["io.github.typed-mcp/operation"]: tool.name for tool in await server.list_tools()}
    yield server, names


@contextlib.asynccontextmanager
async def fastmcp_server(spec: str, base_url: str) -> AsyncIterator[Any]:
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from fastmcp_server import build_server

    server = build_server(spec, base_url)
    names = {}
    for provider in server.providers:
        while not hasattr(provider, "_tools") and hasattr(provider, "_inner"):
            provider = provider._inner
        for tool in getattr(provider, "_tools", {}).values():
            names[f"{tool._route.method.upper()} {tool._route.path}"] = tool.name
    async with server._lifespan_manager():  # what `run_stdio_async` enters around the MCP server
        yield server._mcp_server, names


def http_client_class() -> Any:
    try:
        import httpx
    except ImportError:  # the FastMCP venv only has httpx2
        import httpx2 as httpx
    return httpx.AsyncClient


async def measure(server_cm: Any, operation: str, base_url: str, calls: int) -> dict[str, Any]:
    from mcp import Client

    path = operation.split(" ", 1)[1]
    result: dict[str, Any] = {}
    t0 = time.perf_counter()
    async with server_cm as (server, names):
        result["build_s"] = time.perf_counter() - t0
        tool = result["tool"] = names[operation]
        async with Client(server, cache=None) as client:
            t1 = time.perf_counter()
            first = await client.call_tool(tool, {})
            result["first_call_s"] = time.perf_counter() - t1
            result["first_is_error"] = bool(first.is_error)
            result["first_text"] = str(first.content[0].text if first.content else "")[:300]
            latencies, errors = [], 0
            for _ in range(calls):
                t = time.perf_counter()
                reply = await client.call_tool(tool, {})
                latencies.append(time.perf_counter() - t)
                errors += bool(reply.is_error)
    async with http_client_class()(base_url=base_url) as http:
        await http.get(path)  # connection set-up is not part of the per-call baseline
        direct = []
        for _ in range(calls):
            t = time.perf_counter()
            response = await http.get(path)
            response.json()
            direct.append(time.perf_counter() - t)
    for name, values in (("tool", latencies), ("direct", direct)):
        result[f"{name}_median_s"] = quantile(values, 0.5)
        result[f"{name}_p99_s"] = quantile(values, 0.99)
    result["errors"] = errors
    result["calls"] = calls
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["typed-mcp", "fastmcp"])
    parser.add_argument("--src", help="typed-mcp: the generated package's src folder")
    parser.add_argument("--module", help="typed-mcp: the generated module name")
    parser.add_argument("--spec", help="fastmcp: the OpenAPI document")
    parser.add_argument("--operation", required=True, help='"GET /path" of an operation called without arguments')
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args(argv)
    if args.kind == "typed-mcp":
        server_cm = typed_mcp_server(args.src, args.module, args.base_url)
    else:
        server_cm = fastmcp_server(args.spec, args.base_url)
    print(json.dumps(asyncio.run(measure(server_cm, args.operation, args.base_url, args.calls))))


if __name__ == "__main__":
    main()
