"""The generated weather tools publish the same outputSchemas as the MCP Python SDK does for the
hand-written functions of its structured-output documentation, differing only where models are
opened to extra fields (and in titles/descriptions, which only label)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mcp import Client
from mcp.server import MCPServer
from pydantic import BaseModel, Field

from support import REPO, import_server, strip_annotations

pytestmark = pytest.mark.anyio


class WeatherData(BaseModel):
    temperature: float = Field(description="Temperature in Celsius")
    humidity: float = Field(description="Humidity percentage")
    conditions: str


def hand_written() -> MCPServer:
    server = MCPServer("hand-written")

    @server.tool()
    def get_temperature(city: str) -> int:
        return 22

    @server.tool()
    def get_weather(city: str) -> WeatherData:
        return WeatherData(temperature=22.5, humidity=45.0, conditions="sunny")

    @server.tool()
    def get_forecast(city: str, days: int = 3) -> list[WeatherData]:
        return []

    @server.tool()
    def get_temperatures(cities: list[str]) -> dict[str, float]:
        return {}

    return server


async def schemas(server) -> dict[str, dict]:
    async with Client(server) as client:
        return {t.name: t.output_schema for t in (await client.list_tools()).tools}


async def test_output_schemas_match_the_sdk_conventions():
    expected = await schemas(hand_written())
    generated = await schemas(import_server(REPO / "generated" / "weather-mcp", "weather_mcp"))
    for name in ("get_temperature", "get_weather", "get_forecast", "get_temperatures"):
        assert strip_annotations(generated[name]) == strip_annotations(expected[name]), name

    # The shapes the issue names, spelled out so a change in either side is visible here.
    assert generated["get_temperature"]["properties"]["result"]["type"] == "integer"
    assert generated["get_temperature"]["required"] == ["result"]
    assert generated["get_weather"]["type"] == "object" and "result" not in generated["get_weather"]["properties"]
    assert generated["get_forecast"]["properties"]["result"]["items"] == {"$ref": "#/$defs/WeatherData"}
    assert generated["get_temperatures"]["additionalProperties"] == {"type": "number"}
    # The deliberate difference: objects are open to extra fields, at every level.
    assert generated["get_weather"]["additionalProperties"] is True
    assert generated["get_forecast"]["$defs"]["WeatherData"]["additionalProperties"] is True
    assert "additionalProperties" not in expected["get_weather"]


def test_the_sdk_checks_mcp_param_headers_only_against_tools_that_declare_them():
    """The SDK walks the schema `get_tool_input_schema` gives on every 2026-07-28 tools/call to find
    `x-mcp-header` declarations; the server gives it a schema only for a tool that has some (decided
    once, by the SDK's own reading), and None, "nothing to check", for the others."""
    server = import_server(REPO / "generated" / "weather-mcp", "weather_mcp")
    catalog = server.typed_mcp
    assert server.get_tool_input_schema == server.typed_mcp_input_schema  # what the SDK calls
    assert server.typed_mcp_input_schema("create_report") is None
    assert server.typed_mcp_input_schema("no_such_tool") is None and "no_such_tool" not in catalog.header_schemas

    declared = {"type": "object", "properties": {"city": {"type": "string", "x-mcp-header": "City"}}}
    misplaced = {"type": "object", "properties": {"city": {"type": "object", "x-mcp-header": "City"}}}
    for name, schema, expected in (("declared", declared, declared), ("misplaced", misplaced, None)):
        catalog.listed_by_name[name] = {"name": name, "inputSchema": schema}
        assert server.typed_mcp_input_schema(name) is expected, name


TRACED = """
import asyncio, contextlib, sys
from opentelemetry import trace
import mcp.server._otel as sdk_otel
from mcp import Client
sys.path.insert(0, sys.argv[1])
from weather_mcp.server import build_server

spans, recorded = [], []
real_span = sdk_otel.otel_span

def counted(*args, **kwargs):
    spans.append(kwargs["name"])
    return real_span(*args, **kwargs)

sdk_otel.otel_span = counted  # what the SDK's OpenTelemetry middleware opens per message

class Tracer(trace.NoOpTracer):
    @contextlib.contextmanager
    def start_as_current_span(self, name, *args, **kwargs):
        recorded.append(name)
        yield trace.INVALID_SPAN

class Provider(trace.TracerProvider):
    def get_tracer(self, *args, **kwargs):
        return Tracer()

async def main():
    async with Client(build_server()) as client:
        await client.call_tool("get_weather", {"city": "Paris"})
        print("untraced", spans, recorded)
        trace.set_tracer_provider(Provider())
        await client.call_tool("get_weather", {"city": "Paris"})
        print("traced", spans, recorded)

asyncio.run(main())
"""


@pytest.mark.slow  # a process of its own: a tracer provider, once installed, stays for the process
def test_the_sdks_opentelemetry_span_is_opened_only_while_a_tracer_provider_is_installed():
    """Without a tracer provider the SDK's span per message records nothing: the server skips it.
    Installed (here after the server was built), every message is traced as the SDK traces it."""
    from mcp.server._otel import OpenTelemetryMiddleware
    from mcp.server.lowlevel import Server as LowLevelServer

    # What the server gates is the SDK's default middleware, which is this one alone.
    assert [type(m) for m in LowLevelServer("x").middleware] == [OpenTelemetryMiddleware]
    src = str(REPO / "generated" / "weather-mcp" / "src")
    env = {**os.environ, "WEATHER_MCP_BASE_URL": "http://127.0.0.1:9"}  # refused at once: the answer is not the point
    run = subprocess.run([sys.executable, "-c", TRACED, src], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == [
        "untraced [] []",
        "traced ['tools/call get_weather'] ['tools/call get_weather']",
    ]
