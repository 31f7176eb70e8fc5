"""`make demo`: the whole product in one run, against a live API.

Starts the demo Weather API, generates a package from its live `/v1/openapi.json`, starts the
generated server over stdio, lists and calls every tool through the MCP Python SDK client, and
prints what came back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from rich.console import Console
from rich.table import Table

from harness.demo.process import demo_api

CALLS = [
    ("get_temperature", {"city": "London"}),
    ("get_weather", {"city": "Paris"}),
    ("get_forecast", {"city": "Tokyo", "days": 2}),
    ("get_temperatures", {"cities": ["London", "Sydney"]}),
    ("get_history", {"city": "London", "hours": 3000}),  # over the inline budget: a preview and a link
    (
        "create_report",
        {
            "body": {
                "city": "London",
                "temperature": 21.5,
                "humidity": 40,
                "conditions": "clear",
                "observed_at": "2026-11-30T09:00:00Z",
            }
        },
    ),
    ("get_report", {"report_id": 1}),
    ("delete_report", {"report_id": 1}),
    ("get_weather", {"city": "Atlantis"}),
]


async def exercise(src: Path, base_url: str, console: Console) -> None:
    env = {**os.environ, "PYTHONPATH": str(src), "WEATHER_MCP_HTTP_BEARER_TOKEN": "demo-token"}
    env["WEATHER_MCP_INLINE_BYTES"] = "600"  # a small inline budget, so that get_history shows its preview and link
    params = StdioServerParameters(command=sys.executable, args=["-m", "weather_mcp", "--base-url", base_url], env=env)
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        table = Table(title=f"{len(tools)} tools listed over stdio")
        for column in ("tool", "title", "outputSchema"):
            table.add_column(column)
        for tool in tools:
            schema = tool.output_schema
            shape = (
                "none"
                if schema is None
                else ("wrapped {result}" if "result" in schema.get("properties", {}) else "object")
            )
            table.add_row(tool.name, tool.title or "", shape)
        console.print(table)
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments)
            status = "[red]isError[/]" if result.is_error else "[green]ok[/]"
            shown = result.structured_content if result.structured_content is not None else result.content[0].text
            console.print(f"{status} [bold]{name}[/]({json.dumps(arguments)})\n    -> {json.dumps(shown)}")
            for link in [block for block in result.content if block.type == "resource_link"]:
                whole = (await client.read_resource(link.uri)).contents[0].text
                console.print(f"    a preview; resources/read of its resource_link gives all {len(whole)} bytes")


def main() -> None:
    console = Console()
    with demo_api() as base_url, tempfile.TemporaryDirectory() as temp:
        spec_url = f"{base_url}/v1/openapi.json"
        out = Path(temp) / "weather-mcp"
        console.print(f"demo API at {base_url}; generating from {spec_url}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "typed_mcp",
                "generate",
                spec_url,
                "--out",
                str(out),
                "--package-name",
                "weather-mcp",
                "--no-snapshot",
            ],
            check=True,
        )
        anyio.run(exercise, out / "src", base_url, console)


if __name__ == "__main__":
    main()
