"""End to end against the live demo API: generate from its URL, serve over stdio and HTTP, call every tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import httpx
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from harness.demo.process import demo_api, free_port, running
from support import LONDON_REPORT as REPORT
from support import WEATHER_TOOLS

pytestmark = pytest.mark.anyio

TOKEN_ENV = "WEATHER_MCP_HTTP_BEARER_TOKEN"


def stdio(package: Path, base_url: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "weather_mcp", "--base-url", base_url],
        env={**os.environ, "PYTHONPATH": str(package / "src"), **env},
    )


def check_structured(tool, result) -> None:
    """structuredContent validates against the published outputSchema (JSON Schema 2020-12)."""
    assert not result.is_error, result.content
    jsonschema.Draft202012Validator(tool.output_schema, format_checker=jsonschema.FormatChecker()).validate(
        result.structured_content
    )


async def test_lists_every_typed_tool(weather_package, demo_url):
    async with Client(stdio(weather_package, demo_url)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == sorted(WEATHER_TOOLS)
    weather = tools["get_weather"]
    assert weather.title == "Get current weather for a city"
    assert weather.input_schema["required"] == ["city"]
    assert weather.input_schema["properties"]["city"]["description"] == "City name"
    assert weather.annotations.read_only_hint is True and weather.annotations.idempotent_hint is True
    assert tools["delete_report"].annotations.destructive_hint is True
    assert tools["delete_report"].output_schema is None  # 204: nothing to describe
    forecast = tools["get_forecast"].input_schema["properties"]["days"]
    assert forecast["default"] == 3 and forecast["minimum"] == 1 and forecast["maximum"] == 7
    units = tools["get_temperatures"].input_schema["properties"]["units"]
    assert units["enum"] == ["celsius", "fahrenheit"] and units["default"] == "celsius"
    report = tools["create_report"]
    assert report.input_schema["required"] == ["body"]
    assert report.annotations.read_only_hint is False
    for tool in tools.values():
        if tool.output_schema is not None:
            assert tool.output_schema["type"] == "object"
            assert "false" not in str(tool.output_schema.get("additionalProperties", "")).lower()


async def test_every_tool_called_over_stdio(weather_package, demo_url):
    async with Client(stdio(weather_package, demo_url, **{TOKEN_ENV: "demo-token"})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}

        result = await client.call_tool("get_temperature", {"city": "London"})
        check_structured(tools["get_temperature"], result)
        assert result.structured_content == {"result": 22}

        result = await client.call_tool("get_weather", {"city": "Paris"})
        check_structured(tools["get_weather"], result)
        assert result.structured_content == {"temperature": 19.0, "humidity": 60.0, "conditions": "cloudy"}
        assert result.content[0].text == '{"temperature": 19.0, "humidity": 60.0, "conditions": "cloudy"}'
        source = result.meta["io.github.typed-mcp/source"]
        assert source == {"method": "GET", "url": f"{demo_url}/v1/weather/Paris", "status": 200}

        result = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 2})
        check_structured(tools["get_forecast"], result)
        assert [day["temperature"] for day in result.structured_content["result"]] == [27.0, 28.0]

        result = await client.call_tool("get_temperatures", {"cities": ["London", "Sydney"], "units": "fahrenheit"})
        check_structured(tools["get_temperatures"], result)
        assert result.structured_content == {"London": 72.5, "Sydney": 59.9}

        result = await client.call_tool("create_report", {"body": REPORT})
        check_structured(tools["create_report"], result)
        created = result.structured_content
        assert created["observed_at"] == "2026-11-30T09:00:00Z"  # upstream text, not re-serialized
        assert "station" not in created  # absent optional field stays absent (no null added)
        assert result.meta["io.github.typed-mcp/source"]["status"] == 201

        result = await client.call_tool("get_report", {"report_id": created["id"]})
        check_structured(tools["get_report"], result)
        assert result.structured_content == created

        result = await client.call_tool("delete_report", {"report_id": created["id"]})
        assert not result.is_error and result.structured_content is None
        assert "204" in result.content[0].text

        result = await client.call_tool("get_report", {"report_id": created["id"]})
        assert result.is_error
        assert "HTTP 404" in result.content[0].text and "no such report" in result.content[0].text


async def test_errors_are_results_not_crashes(weather_package, demo_url):
    async with Client(stdio(weather_package, demo_url)) as client:
        result = await client.call_tool("get_weather", {"city": "Atlantis"})
        assert result.is_error and "HTTP 404" in result.content[0].text and "unknown city" in result.content[0].text
        result = await client.call_tool("create_report", {"body": REPORT})  # no token configured
        assert result.is_error
        assert f"missing credentials: set {TOKEN_ENV}" in result.content[0].text
        result = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 99})  # violates le=7
        assert result.is_error and "days" in result.content[0].text
        result = await client.call_tool("get_weather", {"city": "London"})  # still serving
        assert not result.is_error


async def test_wrong_token_is_an_upstream_error_without_the_secret(weather_package, demo_url):
    secret = "not-the-token-8c1f"
    async with Client(stdio(weather_package, demo_url, **{TOKEN_ENV: secret})) as client:
        result = await client.call_tool("create_report", {"body": REPORT})
    assert result.is_error and "HTTP 401" in result.content[0].text
    assert secret not in result.model_dump_json()


@pytest.mark.parametrize("value", ["../secret", "a/b", "..", "x?admin=1#frag", "%2F..", "a b", "..;"])
async def test_path_parameter_stays_one_segment(weather_package, demo_url, value):
    async with Client(stdio(weather_package, demo_url)) as client:
        result = await client.call_tool("get_weather", {"city": value})
    assert result.is_error  # no such city; what matters is what reached the API
    if value in ("..", "../secret", "%2F.."):  # a value that decodes to dot segments is refused, never sent
        assert "path parameter 'city'" in result.content[0].text
        sent = httpx.get(f"{demo_url}/_debug/requests").json()
        assert (
            not sent or not sent[-1]["raw_path"].startswith("/v1/weather/") or ".." not in unquote(sent[-1]["raw_path"])
        )
        return
    last = httpx.get(f"{demo_url}/_debug/requests").json()[-1]
    prefix = "/v1/weather/"
    assert last["raw_path"].startswith(prefix), last
    segment = last["raw_path"][len(prefix) :]
    assert "/" not in segment and "?" not in segment and "#" not in segment
    assert unquote(segment) == value
    assert last["query"] == ""


async def test_upstream_extra_fields_pass_through(weather_package):
    with demo_api(env={"WEATHER_DEMO_DRIFT": "extra"}) as base:
        upstream = httpx.get(f"{base}/v1/weather/london").json()
        forecast = httpx.get(f"{base}/v1/forecast", params={"city": "london", "days": 2}).json()
        async with Client(stdio(weather_package, base)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("get_weather", {"city": "london"})
            check_structured(tools["get_weather"], result)
            assert result.structured_content == upstream
            assert result.structured_content["wind"] == {"speed_kmh": 12.5, "direction": "NW"}
            result = await client.call_tool("get_forecast", {"city": "london", "days": 2})
            check_structured(tools["get_forecast"], result)
            assert result.structured_content == {"result": forecast}


async def test_upstream_missing_required_field_is_an_error_naming_it(weather_package):
    with demo_api(env={"WEATHER_DEMO_DRIFT": "missing"}) as base:
        async with Client(stdio(weather_package, base)) as client:
            result = await client.call_tool("get_weather", {"city": "london"})
            assert result.is_error and result.structured_content is None
            assert "humidity: Field required" in result.content[0].text
            result = await client.call_tool("get_forecast", {"city": "london", "days": 2})
            assert result.is_error
            assert "result.0.humidity: Field required; result.1.humidity: Field required" in result.content[0].text


async def test_streamable_http_transport(weather_package, demo_url):
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "weather_mcp",
        "--base-url",
        demo_url,
        "--transport",
        "streamable-http",
        "--port",
        str(port),
    ]
    env = {"PYTHONPATH": str(weather_package / "src")}
    with running(args, f"http://127.0.0.1:{port}/mcp", env):
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert len(tools) == len(WEATHER_TOOLS)
            result = await client.call_tool("get_forecast", {"city": "Sydney", "days": 1})
            check_structured(tools["get_forecast"], result)
            assert result.structured_content["result"][0]["conditions"] == "rain"


def test_stdout_carries_only_protocol_messages(weather_package, demo_url):
    """A server that prints anything but JSON-RPC to stdout breaks stdio clients."""
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--base-url", demo_url],
        input=request,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(weather_package / "src")},
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, proc.stderr
    messages = [json.loads(line) for line in lines]  # every line is a JSON-RPC message, nothing else
    assert all(message.get("jsonrpc") == "2.0" for message in messages)
    assert messages[0]["id"] == 1 and "serverInfo" in messages[0]["result"]


def test_version_flag(weather_package):
    proc = subprocess.run(
        [sys.executable, "-m", "weather_mcp", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(weather_package / "src")},
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("weather-mcp 1.2.0 (API 1.2.0; spec sha256 ")
