"""One MCP call of the agent trial, printed as the agent reads it (bench/agent_trial/README.md).

    ask.py SYSTEM API [TOOL [JSON]]     no TOOL: the server's tools

SYSTEM `typed`: the typed-mcp package of API (generated into $TRIAL_WORK/API-mcp) with --discovery,
over stdio, through the MCP Python SDK client. SYSTEM `peer`: FastMCP `from_openapi` with its
BM25SearchTransform (peer_server.py, already listening on PORTS[API]), through FastMCP's client.
Calls that would execute an API operation are refused: the trial measures finding the tool. Every
call is appended to $TRIAL_WORK/calls-SYSTEM.jsonl.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

WORK = os.environ.get("TRIAL_WORK", "/work/scratch/trial")
PORTS = {
    "stripe": 8811,
    "airflow": 8812,
    "box": 8813,
    "openai": 8814,
    "gitea": 8815,
    "docusign": 8816,
    "dstack": 8817,
    "zenml": 8818,
}
REFUSED = "[isError] calls are disabled in this trial: name the tool you would call"


def shown(result: Any = None, tools: Any = None) -> str:
    if tools is not None:
        return "\n".join(
            f"tool {t.name}: {t.description}\n  inputSchema: "
            + json.dumps(getattr(t, "input_schema", None) or getattr(t, "inputSchema", None))
            for t in tools
        )
    text = "\n".join(getattr(c, "text", str(c)) for c in result.content)
    return ("[isError]\n" + text) if getattr(result, "is_error", False) or getattr(result, "isError", False) else text


async def typed(api: str, tool: str | None, args: dict[str, Any]) -> str:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"PATH": os.environ["PATH"], "PYTHONPATH": f"{WORK}/{api}-mcp/src"}
    params = StdioServerParameters(command=sys.executable, args=["-m", f"{api}_mcp", "--discovery"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        if tool is None:
            return shown(tools=(await session.list_tools()).tools)
        return shown(await session.call_tool(tool, args))


async def peer(api: str, tool: str | None, args: dict[str, Any]) -> str:
    from fastmcp import Client

    async with Client(f"http://127.0.0.1:{PORTS[api]}/mcp") as client:
        if tool is None:
            return shown(tools=await client.list_tools())
        return shown(await client.call_tool(tool, args, raise_on_error=False))


def main() -> None:
    system, api = sys.argv[1], sys.argv[2]
    tool = sys.argv[3] if len(sys.argv) > 3 else None
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    text = REFUSED if tool == "call_tool" else asyncio.run((typed if system == "typed" else peer)(api, tool, args))
    with open(f"{WORK}/calls-{system}.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps({"t": time.time(), "api": api, "tool": tool, "args": args}) + "\n")
    print(text)


if __name__ == "__main__":
    main()
