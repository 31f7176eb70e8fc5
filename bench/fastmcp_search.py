"""The peer's discovery search on the same tasks: FastMCP `from_openapi` with its `BM25SearchTransform`.

Run with the benchmark's own FastMCP venv (bench/search_quality.py --peer does):

    bench/.venv-fastmcp/bin/python bench/fastmcp_search.py SPEC.json TASKS.json

Prints one JSON object: {"tools": N, "ranked": [["METHOD /path", ...] per task], "ms": [per task]}.
Each query goes through the transform's own `search_tools` tool, called with FastMCP's in-memory
client, exactly as an agent would call it; tool names are mapped back to operations through
`from_openapi`'s public `mcp_component_fn` hook.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

LIMIT = 10


async def rank(spec_path: str, tasks_path: str) -> dict:
    import httpx2
    import yaml
    from fastmcp import Client, FastMCP
    from fastmcp.server.transforms.search import BM25SearchTransform

    with open(spec_path, encoding="utf-8") as handle:
        # FastMCP's venv has PyYAML (a dependency of its own)
        spec = yaml.safe_load(handle) if spec_path.endswith((".yaml", ".yml")) else json.load(handle)
    with open(tasks_path, encoding="utf-8") as handle:
        tasks = json.load(handle)
    operation_of: dict[str, str] = {}

    def record(route, component) -> None:
        operation_of[component.name] = f"{route.method.upper()} {route.path}"

    server = FastMCP.from_openapi(
        openapi_spec=spec, client=httpx2.AsyncClient(base_url="http://127.0.0.1:9"), mcp_component_fn=record
    )
    server.add_transform(BM25SearchTransform(max_results=LIMIT))
    ranked, times = [], []
    async with Client(server) as client:
        for task in tasks:
            started = time.perf_counter()
            result = await client.call_tool("search_tools", {"query": task["query"]})
            times.append((time.perf_counter() - started) * 1000)
            found = result.structured_content
            found = found.get("result", found) if isinstance(found, dict) else found
            if not isinstance(found, list):  # a text rendering: the tool definitions as JSON
                found = json.loads(result.content[0].text)
            ranked.append([operation_of.get(tool["name"], tool["name"]) for tool in found])
    return {"tools": len(operation_of), "ranked": ranked, "ms": times}


def main() -> int:
    spec_path, tasks_path = sys.argv[1:3]
    print(json.dumps(asyncio.run(rank(spec_path, tasks_path))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
