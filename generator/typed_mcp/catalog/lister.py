"""`python -m typed_mcp.catalog.lister MODULE`: the tools that the generated package MODULE (on
PYTHONPATH) lists to an MCP client, through the SDK's in-memory client, as one result."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import anyio
from mcp import Client

from typed_mcp.catalog.listing import list_all_tools, valid_module
from typed_mcp.children import print_result


async def _listing(module: str) -> list[dict[str, Any]]:
    build_server = importlib.import_module(f"{module}.server").build_server
    async with Client(build_server()) as client:
        tools = await list_all_tools(client)
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def main() -> None:
    if len(sys.argv) != 2 or not valid_module(sys.argv[1]):
        sys.exit("usage: python -m typed_mcp.catalog.lister MODULE (a dotted Python identifier)")
    print_result({"tools": anyio.run(_listing, sys.argv[1])})


if __name__ == "__main__":
    main()
