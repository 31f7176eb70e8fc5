"""GitHub and Kubernetes scale: every tool is listed, in pages no client refuses, from a catalog
that is exactly the SDK's; tools still register and validate on their first call."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client

from node_tools import run_ts_client
from support import CORPUS, REPO, generate, import_server

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
    assert lazy == eager and len(lazy[0]) == 7
    server_module = sys.modules["weather_mcp.server"]
    monkeypatch.setattr(server_module.Server, "PAGE_BYTES", 2500)  # force several pages
    paged = anyio.run(pages, server_module.build_server())
    assert len(paged) > 2 and [t for page in paged for t in page] == eager[0]


@pytest.mark.parametrize(("spec", "tools"), [("github__api.github.com.json", 1223), ("kubernetes__swagger-1.13.json", 1014)])
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
    sizes = [len(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": page, "nextCursor": "0000"}})) for page in listed]
    assert max(sizes) < TEN_MIB, sizes
    run = run_ts_client([sys.executable, "-m", module], {"PYTHONPATH": str(out / "src")}, [], list_only=True, timeout=600)
    assert run["tools"] == tools  # the strict TypeScript client, over stdio, gets every tool
