"""The MCP tool catalog (the `tools/list` result) of a generated package.

The catalog is what clients see, so drift and semantic diffs are computed on it rather than on
the spec: a spec change that does not change a tool is not a change for MCP clients.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from typed_mcp import children
from typed_mcp.errors import TypedMcpError
from typed_mcp.write import MANIFEST


async def list_all_tools(client: Any) -> list[Any]:
    """Every tool an MCP `Client` is offered, following `nextCursor` through every page."""
    listed = await client.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor:
        listed = await client.list_tools(cursor=listed.next_cursor)
        tools += listed.tools
    return tools


def is_package(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def package_manifest(package_dir: Path) -> dict[str, Any]:
    return json.loads((package_dir / MANIFEST).read_text(encoding="utf-8"))


def catalog_of_package(package_dir: Path) -> dict[str, Any]:
    """The tools a package's own server lists to an MCP client, in a fresh interpreter."""
    manifest = package_manifest(package_dir)
    proc = subprocess.run(
        children.command("typed_mcp.catalog.lister", manifest["module"]),
        capture_output=True,
        text=True,
        env=children.environment(package_dir / "src"),
        timeout=900,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise TypedMcpError(f"{package_dir}: the package does not list its tools: {last}")
    catalog = children.result_line(proc.stdout)
    catalog["version"] = manifest.get("version")
    return catalog
