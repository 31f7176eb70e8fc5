"""`python -m harness.corpus_child list|stdio|schemes MODULE`: what the corpus runner asks of a generated
package in a fresh interpreter (so times and memory are the package's own), as one result."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from harness.corpus import schema_problems
from typed_mcp.catalog import budget
from typed_mcp.catalog.listing import list_all_tools
from typed_mcp.children import print_result


def listing(module: str) -> dict[str, Any]:
    started = time.perf_counter()
    package = importlib.import_module(f"{module}.server")
    server = package.build_server()
    imported = time.perf_counter() - started

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            begin = time.perf_counter()
            tools = await list_all_tools(client)
            elapsed = time.perf_counter() - begin
        dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
        # The precomputed catalog must be exactly what the SDK publishes when it registers every tool,
        # within the schema budget.
        trimmer = budget.Trimmer(package.schema_uri)
        async with Client(package.build_server(eager=True)) as client:
            eager = [
                trimmer.tool(t.model_dump(mode="json", by_alias=True, exclude_none=True))[0]
                for t in (await client.list_tools()).tools
            ]
        problems = [
            f"{t.name}: {p}"
            for t in tools
            for p in schema_problems(t.input_schema, "inputSchema")
            + (schema_problems(t.output_schema, "outputSchema") if t.output_schema is not None else [])
        ]
        return {
            "import_s": imported,
            "list_s": elapsed,
            "tools": len(tools),
            "with_output": sum(t.output_schema is not None for t in tools),
            "payload_bytes": len(json.dumps(dumped)),
            "schema_problems": problems,
            "catalog_matches_sdk": eager == dumped,
        }

    return anyio.run(main)


def stdio_listing(module: str) -> dict[str, Any]:
    """The package's server started as a user starts it (`python -m MODULE`, over stdio) and listed
    by the Python SDK's client: tool count, how many have an outputSchema, and their names."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", module, "--base-url", "http://127.0.0.1:9"], env=dict(os.environ)
    )

    async def main() -> dict[str, Any]:
        async with Client(params) as client:
            tools = await list_all_tools(client)
        return {"tools": len(tools), "with_output": sum(t.output_schema is not None for t in tools)}

    return anyio.run(main)


def schemes(module: str) -> list[str]:
    """The environment variables of the package's credentials."""
    api = importlib.import_module(f"{module}.upstream").api
    return sorted(var for scheme in api.schemes.values() for var in scheme.env)


if __name__ == "__main__":
    print_result({"list": listing, "stdio": stdio_listing, "schemes": schemes}[sys.argv[1]](sys.argv[2]))
