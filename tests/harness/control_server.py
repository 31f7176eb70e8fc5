"""A deliberately wrong MCP server over stdio, on the MCP Python SDK's low-level `Server`, which serves
both protocol eras (the initialize handshake and 2026-07-28) and checks no result against its
outputSchema: the negative control of the strict clients on every revision (tests/node/control_server.mjs
speaks the handshake only). The tools, their two tools/list pages and their results are those of
control_server.mjs (read from it, so the two cannot drift):

    python -m harness.control_server
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

from harness.node_tools import CONTROL_SERVER


def _constants() -> tuple[list[list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """PAGES and RESULTS of control_server.mjs: its JavaScript object literals, evaluated by node."""
    import subprocess

    source = CONTROL_SERVER.read_text()
    start = source.index("const INT_RESULT")
    end = source.index("const server = new Server")
    script = source[start:end] + "process.stdout.write(JSON.stringify({PAGES, RESULTS}));"
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    return loaded["PAGES"], loaded["RESULTS"]


PAGES, RESULTS = _constants()
NEXT = "page-2"
assert re.search(rf"cursor === '{NEXT}'", CONTROL_SERVER.read_text())


async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
    second = params is not None and params.cursor == NEXT
    tools = [Tool.model_validate(tool) for tool in PAGES[1 if second else 0]]
    return ListToolsResult(tools=tools) if second else ListToolsResult(tools=tools, next_cursor=NEXT)


async def call_tool(ctx: Any, params: Any) -> CallToolResult:
    result = RESULTS.get(params.name)
    if result is None:
        return CallToolResult(content=[TextContent(type="text", text=f"unknown tool {params.name}")], is_error=True)
    return CallToolResult.model_validate(result)


async def main() -> None:
    server = Server("control", version="0.0.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
