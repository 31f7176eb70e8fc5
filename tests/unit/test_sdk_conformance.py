"""The generated weather tools publish the same outputSchemas as the MCP Python SDK does for the
hand-written functions of its structured-output documentation, differing only where models are
opened to extra fields (and in titles/descriptions, which only label)."""

from __future__ import annotations

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
