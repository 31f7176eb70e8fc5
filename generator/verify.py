"""Post-generation step: import the rendered package in a fresh interpreter, register every tool
the MCP SDK's own way, and list them through a real MCP client. The listing becomes the package's
`catalog.json` (so the published schemas are exactly the SDK's), and is checked: a package that does
not start, or a tool that lost its outputSchema, never replaces a good one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from generator.errors import TypedMcpError
from generator.ir import ApiPlan

_SCRIPT = r"""
import anyio, json
from mcp import Client
from mcp.server import MCPServer
from {module}.server import _register, tool_entry
from {module}.tools import INDEX

server = MCPServer(name="catalog")
for index, name in enumerate(INDEX):
    if index % {shards} == {shard}:
        _register(server, tool_entry(name))  # exactly as the package's eager server registers it

async def main():
    async with Client(server) as client:
        listed = await client.list_tools()
    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
    print("{marker}" + json.dumps(tools, ensure_ascii=False, separators=(",", ":")))

anyio.run(main)
"""
SHARD_MIN_TOOLS = 200  # below this, one process is faster than several imports of the package


class VerifyError(TypedMcpError):
    exit_code = 7


# Child processes print their result on one line behind this marker: the MCP SDK may log to stdout too.
RESULT_MARKER = "typed-mcp-result: "


def result_line(stdout: str) -> Any:
    for line in reversed(stdout.split("\n")):  # not splitlines(): JSON text may hold U+2028 or U+0085
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    raise TypedMcpError(f"a child process printed no result: {stdout.strip()[-300:]!r}")


def tool_catalog(src: Path, plan: ApiPlan, *, timeout: float = 1200) -> list[dict[str, Any]]:
    """The package's tools/list result: its tools, as JSON objects."""
    env = {**os.environ, "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # Registering a tool the SDK's way costs milliseconds (argument model, output schema): big APIs
    # are registered in parallel shards, one per core, and the listings interleaved back in order.
    shards = max(1, min(os.cpu_count() or 1, 4)) if len(plan.operations) >= SHARD_MIN_TOOLS else 1
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SCRIPT.format(module=plan.module, shard=shard, shards=shards, marker=RESULT_MARKER)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=src,
        )
        for shard in range(shards)
    ]
    listings = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            last = (err.strip().splitlines() or ["no output"])[-1]
            raise VerifyError(f"the generated package does not start: {last}")
        listings.append(result_line(out))
    return [listings[index % shards][index // shards] for index in range(sum(len(listing) for listing in listings))]


def check_catalog(tools: list[dict[str, Any]], plan: ApiPlan) -> None:
    """The catalog lists every planned tool, and every tool with a JSON response has an outputSchema."""
    listed = {tool["name"]: "outputSchema" in tool for tool in tools}
    expected = {op.tool_name: op.response.kind == "json" for op in plan.operations}
    if set(listed) != set(expected):
        missing = sorted(set(expected) - set(listed))
        raise VerifyError(f"the generated server lists {len(listed)} tools, expected {len(expected)} (missing: {', '.join(missing[:5])})")
    lost = sorted(name for name, wants in expected.items() if wants and not listed[name])
    if lost:
        raise VerifyError(f"tool(s) without outputSchema despite a JSON response: {', '.join(lost[:5])}")
