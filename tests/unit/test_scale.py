"""GitHub and Kubernetes scale: every tool is listed, in pages no client refuses, from a catalog
that is exactly the SDK's; tools still register and validate on their first call."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client

from harness.node_tools import run_ts_client
from support import CORPUS, REPO, WEATHER_TOOLS, generate, import_server

TEN_MIB = 10 * 1024 * 1024


async def pages(server) -> list[list[dict]]:
    async with Client(server) as client:
        result = await client.list_tools()
        found = [[t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]]
        while result.next_cursor:
            result = await client.list_tools(cursor=result.next_cursor)
            found.append([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools])
    return found


def test_lazy_catalog_is_the_sdks_own_listing(monkeypatch):
    package = REPO / "generated" / "weather-mcp"
    lazy = anyio.run(pages, import_server(package, "weather_mcp"))
    eager = anyio.run(pages, sys.modules["weather_mcp.server"].build_server(eager=True))
    assert lazy == eager and len(lazy[0]) == len(WEATHER_TOOLS)
    server_module = sys.modules["weather_mcp.server"]
    monkeypatch.setattr(server_module.Server, "PAGE_BYTES", 2500)  # force several pages
    paged = anyio.run(pages, server_module.build_server())
    assert len(paged) > 2 and [t for page in paged for t in page] == eager[0]


@pytest.mark.parametrize(
    ("spec", "tools"),
    [
        # A minute or more each on 2 cores: make test-long. make test pages small catalogs with a small
        # page size (test_lazy_catalog_is_the_sdks_own_listing; test_sdk_seams over stdio).
        pytest.param("github__api.github.com.json", 1223, marks=pytest.mark.long),
        pytest.param("kubernetes__swagger-1.13.json", 1014, marks=pytest.mark.long),
    ],
)
@pytest.mark.slow  # generates with the CLI (a process)
def test_big_catalog_lists_in_pages_under_the_client_cap(spec, tools, tmp_path):
    path = CORPUS / spec
    if not path.is_file():
        pytest.skip(f"no corpus at {CORPUS}")
    name = "scale-" + spec.split("_")[0]
    out = tmp_path / name
    generate(path, out, name, "--no-verify")
    module = name.replace("-", "_")
    listed = anyio.run(pages, import_server(out, module))
    assert sum(len(page) for page in listed) == tools
    sizes = [
        len(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": page, "nextCursor": "0000"}})) for page in listed
    ]
    assert max(sizes) < TEN_MIB, sizes
    run = run_ts_client(
        [sys.executable, "-m", module],
        {"PYTHONPATH": str(out / "src")},
        [],
        list_only=True,
        timeout=600,
        compile_schemas=True,
    )
    assert run["tools"] == tools  # the strict TypeScript client, over stdio, gets every tool
    # ... and its AJV compiles every published schema, inputs included.
    assert run["schemas"]["failures"] == [] and run["schemas"]["compiled"] == tools + sum(
        1 for page in listed for tool in page if "outputSchema" in tool
    )


WEATHER_STDIO = [sys.executable, "-m", "weather_mcp"]
WEATHER_ENV = {
    "PYTHONPATH": str(REPO / "generated" / "weather-mcp" / "src"),
    "WEATHER_MCP_BASE_URL": "http://127.0.0.1:9",
}


def raw_stdio_listing(
    command: list[str], env: dict[str, str], version: str, cursor_override: str | None = None
) -> list[dict]:
    """tools/list over stdio with a bare JSON-RPC client that asks for protocol `version`: the
    results exactly as they come over the wire, every page."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        text=True,
    )
    try:

        def request(ident: int, method: str, params: dict) -> dict:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
            proc.stdin.flush()
            while True:
                message = json.loads(proc.stdout.readline())
                if message.get("id") == ident:
                    return message

        init = request(
            1,
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        )
        assert init["result"]["protocolVersion"] == version
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        results, params = [], {}
        while True:
            reply = request(len(results) + 2, "tools/list", params)
            results.append(reply.get("result") or reply)
            if cursor_override is not None:
                results.append(request(99, "tools/list", {"cursor": cursor_override}))
                return results
            if "nextCursor" not in reply["result"]:
                return results
            params = {"cursor": reply["result"]["nextCursor"]}
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
@pytest.mark.slow  # generates with the CLI (a process)
def test_spliced_pages_are_what_the_sdk_would_send(version):
    """Each page the server sends is exactly what the SDK's per-version result model makes of it, for
    every protocol version a client may ask for, and holds the tools the eager SDK server lists."""
    from mcp_types.methods import serialize_server_result

    package = REPO / "generated" / "weather-mcp"
    results = raw_stdio_listing(WEATHER_STDIO, WEATHER_ENV, version)
    assert len(results) == 1
    for result in results:
        assert serialize_server_result("tools/list", version, result) == result
    import_server(package, "weather_mcp")
    eager = anyio.run(pages, sys.modules["weather_mcp.server"].build_server(eager=True))
    assert results[0]["tools"] == eager[0]


@pytest.mark.slow  # generates with the CLI (a process)
def test_an_unknown_cursor_is_an_invalid_params_error():
    first, bad = raw_stdio_listing(WEATHER_STDIO, WEATHER_ENV, "2025-06-18", cursor_override="12345")
    assert len(first["tools"]) == len(WEATHER_TOOLS)
    assert bad["error"]["code"] == -32602 and "cursor" in bad["error"]["message"].lower()
