"""The MCP tool catalog (the `tools/list` result) of a generated package.

The catalog is what clients see, so drift and semantic diffs are computed on it rather than on
the spec: a spec change that does not change a tool is not a change for MCP clients.
"""

from __future__ import annotations

import json
import keyword
import re
import subprocess
from pathlib import Path
from typing import Any, TypeGuard

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


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_VERSION = re.compile(r"[0-9A-Za-z.+!_-]{1,64}")


def package_manifest(package_dir: Path) -> dict[str, Any]:
    """A package's manifest, every value that is used checked first: it is a file anyone can edit,
    and `module` names what a child process imports."""
    path = package_dir / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise TypedMcpError(f"{path}: not a readable JSON manifest") from None
    if not isinstance(data, dict):
        raise TypedMcpError(f"{path}: not a JSON object")
    module = data.get("module")
    if not valid_module(module):
        raise TypedMcpError(f"{path}: 'module' is not a dotted Python identifier")
    if not (package_dir / "src" / Path(*module.split(".")) / "server.py").is_file():
        raise TypedMcpError(f"{path}: 'module' names no generated package under {package_dir / 'src'}")
    version = data.get("version")
    if version is not None and not (isinstance(version, str) and _VERSION.fullmatch(version)):
        raise TypedMcpError(f"{path}: 'version' is not a package version")
    return data


def valid_module(module: Any) -> TypeGuard[str]:
    """A dotted Python identifier (no keyword), which is all a generated package's module can be."""
    return (
        isinstance(module, str)
        and _MODULE.fullmatch(module) is not None
        and not any(keyword.iskeyword(part) for part in module.split("."))
    )


def catalog_of_package(package_dir: Path) -> dict[str, Any]:
    """The tools a package's own server lists to an MCP client, in a fresh interpreter."""
    manifest = package_manifest(package_dir)
    proc = subprocess.run(
        children.command("typed_mcp.catalog.lister", manifest["module"]),
        capture_output=True,
        text=True,
        env=children.child_env(package_dir / "src"),
        timeout=900,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise TypedMcpError(f"{package_dir}: the package does not list its tools: {last}")
    catalog: dict[str, Any] = children.result_line(proc.stdout)
    catalog["version"] = manifest.get("version")
    return catalog
