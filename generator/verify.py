"""Post-generation check: import the rendered package in a fresh interpreter, build its server and
list its tools through a real MCP client. Runs before the output is swapped in, so a package that
does not start, or a tool that lost its outputSchema, never replaces a good one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from generator.errors import TypedMcpError
from generator.ir import ApiPlan

_SCRIPT = r"""
import anyio, json, sys
from mcp import Client
from {module}.server import build_server

async def main():
    async with Client(build_server()) as client:
        listed = await client.list_tools()
        tools = list(listed.tools)
        while listed.next_cursor:
            listed = await client.list_tools(cursor=listed.next_cursor)
            tools += listed.tools
    print(json.dumps({{t.name: t.output_schema is not None for t in tools}}))

anyio.run(main)
"""


class VerifyError(TypedMcpError):
    exit_code = 7


def verify_package(src: Path, plan: ApiPlan, timeout: float = 600) -> dict[str, bool]:
    env = {**os.environ, "PYTHONPATH": str(src) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(module=plan.module)],
        capture_output=True, text=True, env=env, timeout=timeout, cwd=src,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise VerifyError(f"the generated package does not start: {last}")
    listed: dict[str, bool] = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = {op.tool_name: op.response.kind == "json" for op in plan.operations}
    if set(listed) != set(expected):
        missing = sorted(set(expected) - set(listed))
        raise VerifyError(f"the generated server lists {len(listed)} tools, expected {len(expected)} (missing: {', '.join(missing[:5])})")
    lost = sorted(name for name, wants in expected.items() if wants and not listed[name])
    if lost:
        raise VerifyError(f"tool(s) without outputSchema despite a JSON response: {', '.join(lost[:5])}")
    return listed
