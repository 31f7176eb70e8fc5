"""The MCP tool catalog (the `tools/list` result) of a generated package or of a spec.

The catalog is what clients see, so drift and semantic diffs are computed on it rather than on
the spec: a spec change that does not change a tool is not a change for MCP clients.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from generator.errors import TypedMcpError
from generator.verify import RESULT_MARKER, result_line
from generator.write import MANIFEST

_SCRIPT = r"""
import anyio, json
from mcp import Client
from generator.catalog import list_all_tools
from {module}.server import build_server

async def main():
    async with Client(build_server()) as client:
        tools = await list_all_tools(client)
    print("{marker}" + json.dumps({{"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]}}))

anyio.run(main)
"""


async def list_all_tools(client: Any) -> list[Any]:
    """Every tool an MCP `Client` is offered, following `nextCursor` through every page."""
    listed = await client.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor:
        listed = await client.list_tools(cursor=listed.next_cursor)
        tools += listed.tools
    return tools


FORMAT = "typed-mcp-catalog/1"
_COMPACT = {"ensure_ascii": False, "separators": (",", ":")}


def pack(tools: list[dict[str, Any]]) -> str:
    """`catalog.json`: the tools/list result, with every `$defs` entry stored once.

    Pydantic makes each schema self-contained, so a model used by 300 tools is repeated 300 times
    (GitHub: 8.6 MB of `$defs`, 1 MB of them distinct). Here a repeated `$defs` entry becomes the
    index of a shared schema, an integer where a schema (an object or a boolean) would be, so it
    can never be mistaken for one; the server puts the same object back in every place, which
    keeps the file, its parse time and the server's memory small. `sizes` (bytes of each tool's
    JSON) let the server cut pages without serializing anything.
    """
    shared: list[Any] = []
    index: dict[str, int] = {}
    packed, sizes = [], []
    for tool in tools:
        sizes.append(len(json.dumps(tool, **_COMPACT).encode()))
        tool = dict(tool)
        for key in ("inputSchema", "outputSchema"):
            schema = tool.get(key)
            if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
                defs = {}
                for name, value in schema["$defs"].items():
                    number = index.setdefault(json.dumps(value, **_COMPACT), len(shared))
                    if number == len(shared):
                        shared.append(value)
                    defs[name] = number
                tool[key] = {**schema, "$defs": defs}
        packed.append(tool)
    return json.dumps({"format": FORMAT, "sizes": sizes, "shared": shared, "tools": packed}, **_COMPACT) + "\n"


def is_package(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def package_manifest(package_dir: Path) -> dict[str, Any]:
    return json.loads((package_dir / MANIFEST).read_text(encoding="utf-8"))


def catalog_of_package(package_dir: Path) -> dict[str, Any]:
    module = package_manifest(package_dir)["module"]
    env = {**os.environ, "PYTHONPATH": str(package_dir / "src")}
    script = _SCRIPT.format(module=module, marker=RESULT_MARKER)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise TypedMcpError(f"{package_dir}: the package does not list its tools: {last}")
    catalog = result_line(proc.stdout)
    catalog["version"] = package_manifest(package_dir).get("version")
    return catalog


def catalog_of(source: str, *, package_name: str | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """A catalog from a generated package folder, or from a spec (file or URL) generated on the fly."""
    if is_package(source):
        return catalog_of_package(Path(source))
    from generator.pipeline import generate

    with tempfile.TemporaryDirectory(prefix="typed-mcp-catalog-") as temp:
        out = Path(temp) / "package"
        generate(source, out, package_name=package_name or "catalog-mcp", headers=headers, verify=False)
        return catalog_of_package(out)
