"""The data-tool profile (`--profile data-tools`, issue 18): generated from the live demo API, every
tool registers with seed 002's registry (`harness/data_registry.py`) and every result, called
through real clients, carries its sources, the API's JSON under `data` and a table when tabular;
the default profile is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from harness import data_registry
from harness.node_tools import run_ts_client
from support import REPO, WEATHER_REPORT, WEATHER_TOOLS, HttpServer, Reply, generate, run_cli

pytestmark = pytest.mark.anyio

HARNESS = Path(__file__).resolve().parent.parent  # tests/, where `harness` is a package
MODULE = "weather_data_mcp"
TOKEN = {"WEATHER_DATA_MCP_HTTP_BEARER_TOKEN": "demo-token"}
FORECAST_COLUMNS = ["temperature", "humidity", "conditions"]


@pytest.fixture(scope="module")
def data_package(demo_url, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("data-tools") / "weather-data-mcp"
    generate(f"{demo_url}/v1/openapi.json", out, "weather-data-mcp", "--profile", "data-tools")
    return out


def registry_check(package: Path, module: str) -> dict[str, Any]:
    """The registry's verdict on every tool function of `package` (imported in a process of its own)."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness.data_registry", str(package / "src"), module],
        capture_output=True,
        text=True,
        cwd=HARNESS,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def catalog_def(package: Path, tool: str, name: str) -> Any:
    """A `$defs` entry of a tool's outputSchema in a package's catalog.json (shared entries are indexes)."""
    catalog = json.loads(next((package / "src").glob("*/catalog.json")).read_text())
    (listed,) = (t for t in catalog["tools"] if t["name"] == tool)
    value = listed["outputSchema"]["$defs"][name]
    return catalog["shared"][value] if isinstance(value, int) else value


def server(package: Path, base_url: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", MODULE, "--base-url", base_url],
        env={**os.environ, "PYTHONPATH": str(package / "src"), **TOKEN},
    )


def test_the_registry_refuses_the_default_profile(weather_package, demo_url):
    verdict = registry_check(weather_package, "weather_mcp")
    assert verdict["registered"] == []
    assert len(verdict["refused"]) == len(WEATHER_TOOLS) and all(
        "sources" in why for why in verdict["refused"].values()
    )
    default_result = httpx.get(f"{demo_url}/v1/weather/Paris").json()  # what a default tool answers
    with pytest.raises(data_registry.Refused, match="no sources"):
        data_registry.accept("get_weather", default_result)


async def test_every_tool_registers_and_every_result_passes(data_package, weather_package, demo_url):
    verdict = registry_check(data_package, MODULE)
    assert verdict["refused"] == {} and len(verdict["registered"]) == len(WEATHER_TOOLS)
    manifest = json.loads((data_package / "typed-mcp.json").read_text())
    assert manifest["profile"] == "data-tools"

    results = await call_every_tool(data_package, demo_url)
    for name, (result, tool) in results.items():
        assert not result.is_error, (name, result.content)
        data_registry.accept(name, result.structured_content)
        schema = tool.output_schema
        assert schema["required"] == ["sources", "data"] and schema["additionalProperties"] is True
        jsonschema.Draft202012Validator(schema).validate(result.structured_content)

    weather, _ = results["get_weather"]
    url = f"{demo_url}/v1/weather/Paris"
    assert weather.structured_content == {"sources": [url], "data": httpx.get(url).json()}
    assert weather.content[-1].text.startswith(
        f"object with 3 fields: temperature, humidity, conditions; source: {url}"
    )

    forecast, tool = results["get_forecast"]
    url = f"{demo_url}/v1/forecast?city=Tokyo&days=2"
    rest = httpx.get(url).json()
    assert forecast.structured_content["sources"] == [url]
    assert forecast.structured_content["data"] == rest
    assert forecast.structured_content["table"] == [FORECAST_COLUMNS, *([d[c] for c in FORECAST_COLUMNS] for d in rest)]
    text = forecast.content[-1].text
    assert text.startswith(f"2 rows; columns: temperature, humidity, conditions; source: {url}\n27.0 | ")
    data_schema = {k: v for k, v in tool.output_schema["properties"]["data"].items() if k != "title"}
    assert data_schema == {"items": {"$ref": "#/$defs/WeatherData"}, "type": "array"}
    # the response model's own schema, as the default profile publishes it
    assert tool.output_schema["$defs"]["WeatherData"] == catalog_def(weather_package, "get_forecast", "WeatherData")
    assert "table" not in tool.output_schema["required"]

    created, _ = results["create_report"]
    report, _ = results["get_report"]
    assert report.structured_content["data"] == created.structured_content["data"]
    assert report.structured_content["data"]["city"] == WEATHER_REPORT["city"]
    deleted, _ = results["delete_report"]
    assert deleted.structured_content["data"] is None and "204" in deleted.content[0].text


async def test_a_big_answer_is_a_preview_the_profile_and_its_schema_accept(data_package, demo_url):
    async with Client(server(data_package, demo_url)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("get_history", {"city": "London", "hours": 5000})
        assert not result.is_error, result.content
        data_registry.accept("get_history", result.structured_content)  # the header row is kept
        jsonschema.Draft202012Validator(tools["get_history"].output_schema).validate(result.structured_content)
        assert 1 < len(result.structured_content["data"]) < 5000
        link = next(block for block in result.content if block.type == "resource_link")
        whole = json.loads((await client.read_resource(link.uri)).contents[0].text)
        assert len(whole["data"]) == 5000 and len(whole["table"]) == 5001


async def call_every_tool(package: Path, base_url: str) -> dict[str, Any]:
    async with Client(server(package, base_url)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        calls = {
            "get_temperature": {"city": "London"},
            "get_weather": {"city": "Paris"},
            "get_forecast": {"city": "Tokyo", "days": 2},
            "get_temperatures": {"cities": ["London", "Sydney"]},
            "get_history": {"city": "London", "hours": 24},
            "create_report": {"body": WEATHER_REPORT},
            "upload_attachment": {"body": {"file": "hello", "note": "n"}},
            "put_station_photo": {"station": "s1", "body": "AAEC"},
        }
        results = {name: await client.call_tool(name, arguments) for name, arguments in calls.items()}
        created = results["create_report"]
        assert not created.is_error, created.content
        report_id = {"report_id": created.structured_content["data"]["id"]}
        results["get_report"] = await client.call_tool("get_report", report_id)
        results["delete_report"] = await client.call_tool("delete_report", report_id)
        # The export job (a 202 the data-tools package, without the demo's config, answers as it comes)
        started = results["start_export"] = await client.call_tool("start_export", {"body": {"city": "Paris"}})
        assert not started.is_error, started.content
        export_id = {"export_id": started.structured_content["data"]["id"]}
        results["get_export"] = await client.call_tool("get_export", export_id)
        results["cancel_export"] = await client.call_tool("cancel_export", export_id)
    assert set(results) == set(tools)
    return {name: (result, tools[name]) for name, result in results.items()}


async def test_sources_hold_declared_links_and_no_credentials_and_mismatches_point_into_data(data_package):
    """A scripted upstream: the answer declares links (HAL `_links`, `next`), the base URL and one link
    carry user info, and the forecast lacks a required field."""
    weather = {"temperature": 1.0, "humidity": 2.0, "conditions": "fog"}
    links = {"_links": {"self": {"href": "/v1/weather/Oslo"}}, "next": "https://bot:hunter2@example.com/more?page=2"}
    with HttpServer() as upstream:
        upstream.routes["/v1/weather/Oslo"] = Reply(body={**weather, **links})
        upstream.routes["/v1/forecast"] = Reply(body=[weather, {"temperature": 3.0, "conditions": "rain"}])
        base = upstream.url.replace("http://", "http://reader:s3cret@")
        async with Client(server(data_package, base)) as client:
            oslo = await client.call_tool("get_weather", {"city": "Oslo"})
            forecast = await client.call_tool("get_forecast", {"city": "Oslo"})
    # the request URL (user info gone), then the answer's own links (resolved, user info gone)
    sources = [f"{upstream.url}/v1/weather/Oslo", "https://example.com/more?page=2"]
    assert oslo.structured_content["sources"] == sources
    assert oslo.structured_content["data"] == {**weather, **links}  # the API's JSON, untouched
    assert "s3cret" not in json.dumps(oslo.model_dump(mode="json"))
    assert upstream.seen[0].headers["authorization"].startswith("Basic ")  # the credentials were sent
    assert forecast.is_error and "data.1.humidity: Field required" in forecast.content[0].text


def test_the_typescript_client_lists_and_calls_data_tools(data_package, demo_url):
    """The TypeScript SDK client checks every structuredContent against the published outputSchema."""
    command = [sys.executable, "-m", MODULE, "--base-url", demo_url]
    calls = [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}},
        {"name": "get_temperatures", "arguments": {"cities": ["London", "Paris"]}},
        {"name": "create_report", "arguments": {"body": WEATHER_REPORT}},
        {"name": "get_temperature", "arguments": {"city": "London"}},
    ]
    run = run_ts_client(command, {"PYTHONPATH": str(data_package / "src"), **TOKEN}, calls, compile_schemas=True)
    assert run["tools"] == len(WEATHER_TOOLS) and run["schemas"]["failures"] == []
    failed = [(r["name"], r["errorCode"], r["error"], r["text"]) for r in run["results"] if not r["ok"] or r["isError"]]
    assert failed == []
    for result in run["results"]:
        data_registry.accept(result["name"], result["structuredContent"])
    forecast = run["results"][1]["structuredContent"]
    assert forecast["sources"] == [f"{demo_url}/v1/forecast?city=Tokyo&days=2"]
    assert forecast["table"][0] == FORECAST_COLUMNS and len(forecast["table"]) == 3


def test_the_config_chooses_the_profile_and_refuses_an_unknown_one(tmp_path):
    shutil.copy(REPO / "specs" / "weather-api.json", tmp_path)  # a config names files of its own folder only
    config = tmp_path / "typed-mcp.toml"
    config.write_text(
        'source = "weather-api.json"\nout = "pkg"\npackage_name = "weather-data-mcp"\nprofile = "tables"\n'
    )
    refused = run_cli("generate", "--config", str(config), "--no-snapshot")
    assert refused.returncode != 0 and "profile" in refused.stderr and "data-tools" in refused.stderr
    assert not (tmp_path / "pkg").exists()
    config.write_text(config.read_text().replace('"tables"', '"data-tools"'))
    made = run_cli("generate", "--config", str(config), "--no-snapshot")
    assert made.returncode == 0, made.stderr
    assert json.loads((tmp_path / "pkg" / "typed-mcp.json").read_text())["profile"] == "data-tools"
    tool = (tmp_path / "pkg" / "src" / MODULE / "tools" / "get_forecast.py").read_text()
    assert "-> Annotated[CallToolResult, DataResult[list[WeatherData]]]:" in tool
    assert "## Data tools (profile `data-tools`)" in (tmp_path / "pkg" / "README.md").read_text()
