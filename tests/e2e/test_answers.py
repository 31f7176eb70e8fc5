"""Answers an agent can use, through the MCP Python SDK client against the live demo API: big answers
as a preview and a sealed resource link (over stdio, and over streamable HTTP with two replicas that
share the link key), discovery mode's `fields` (JMESPath), and the X-MCP-* headers that narrow a
hosted server's tools per request."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from harness.demo.process import free_port
from harness.node_tools import TS1, TS2_MODERN, run_ts_client
from harness.runtime_loader import runtime
from support import DEMO, LINK_KEY, REPO, WEATHER_TOOLS, demo_http, demo_stdio, generate

pytestmark = pytest.mark.anyio

TRUNCATED = "io.github.typed-mcp/truncated"
BIG = {"city": "London", "hours": 5000}  # about 290 KB of JSON: over the default budget of 100,000 bytes


def http_client(port: int, headers: dict[str, str] | None = None) -> Any:
    http = httpx2.AsyncClient(headers=headers or {})
    return http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))


def link_of(result: Any) -> str:
    links = [block for block in result.content if block.type == "resource_link"]
    assert len(links) == 1, result
    assert links[0].mime_type == "application/json"
    return str(links[0].uri)


def whole(read: Any) -> Any:
    (contents,) = read.contents
    assert contents.mime_type == "application/json"
    return json.loads(contents.text)


def expected_history(hours: int) -> list[dict[str, Any]]:
    # What the demo API answers (tests/harness/demo/weather_api.py: London is 22.5 °C, 45 %, sunny).
    return [
        {"temperature": round(22.5 - (hour % 24) / 4, 2), "humidity": 45.0, "conditions": "sunny"}
        for hour in range(hours)
    ]


# -- big answers ---------------------------------------------------------------------------------------


async def test_a_big_answer_is_a_valid_preview_and_a_link_that_reads_it_whole(demo_url):
    async with Client(demo_stdio(demo_url)) as client:
        # The Python client validates structuredContent against the tool's outputSchema: the preview
        # passing through it is the contract held.
        result = await client.call_tool("get_history", BIG)
        assert not result.is_error
        preview = result.structured_content["result"]
        assert 1 < len(preview) < 5000 and preview == expected_history(5000)[: len(preview)]
        assert len(json.dumps(result.structured_content, separators=(",", ":"))) <= 100_000
        report = result.meta[TRUNCATED]
        assert report["budget"] == 100_000 and report["bytes"] > 100_000
        assert report["cuts"] == [{"path": ["result"], "kept": len(preview), "total": 5000}]
        assert "resources/read" in result.content[0].text
        assert json.loads(result.content[1].text) == result.structured_content
        uri = link_of(result)
        assert uri.startswith("answer://weather-mcp/") and "London" not in uri  # sealed: not readable
        assert whole(await client.read_resource(uri)) == {"result": expected_history(5000)}
        small = await client.call_tool("get_history", {"city": "London", "hours": 24})
        assert small.structured_content == {"result": expected_history(24)}
        assert [block.type for block in small.content] == ["text"] and TRUNCATED not in (small.meta or {})


@pytest.mark.parametrize("line", [TS1, TS2_MODERN], ids=["ts1", "ts2-modern"])
def test_strict_typescript_clients_accept_the_preview(demo_url, line):
    # Both lines validate structuredContent against the outputSchema (AJV): no -32600 or -32602.
    env = {"PYTHONPATH": str(DEMO / "src"), "WEATHER_MCP_INLINE_BYTES": "2000"}
    calls = [
        {"name": "get_history", "arguments": {"city": "London", "hours": 500}, "readLinks": True},
        {"name": "get_weather", "arguments": {"city": "Paris"}, "readLinks": True},
    ]
    command = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url]
    history, weather = run_ts_client(command, env, calls, client=line)["results"]
    assert history["ok"] and not history["isError"] and 1 < len(history["structuredContent"]["result"]) < 500
    # The client reads the link (resources/read): the whole answer, of which the preview is the start.
    (link,) = history["links"]
    whole_answer = json.loads(link["text"])
    assert len(whole_answer["result"]) == 500
    assert (
        whole_answer["result"][: len(history["structuredContent"]["result"])] == history["structuredContent"]["result"]
    )
    assert weather["ok"] and not weather["isError"] and weather["links"] == []  # within the budget: whole


@pytest.mark.parametrize("line", [TS1, TS2_MODERN], ids=["ts1", "ts2-modern"])
def test_strict_typescript_clients_send_the_narrowing_headers(demo_url, line):
    port = free_port()
    with demo_http(port, demo_url):
        calls = [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_forecast", "arguments": {"city": "Paris"}},
        ]
        headers = {"X-MCP-Tools": "get_weather,get_history"}
        run = run_ts_client(None, calls=calls, url=f"http://127.0.0.1:{port}/mcp", headers=headers, client=line)
    assert run["tools"] == 2
    weather, forecast = run["results"]
    assert weather["ok"] and not weather["isError"], weather
    assert forecast["ok"] and forecast["isError"] and "X-MCP-Tools: get_weather,get_history" in forecast["text"]


async def test_the_budget_comes_from_the_environment_and_an_answer_without_a_list_is_an_error_with_the_link(
    demo_url,
):
    async with Client(demo_stdio(demo_url, WEATHER_MCP_INLINE_BYTES="40")) as client:
        # An object without lists cannot be cut and still match its schema: an isError result (no
        # structuredContent, which every client accepts) carrying the link.
        result = await client.call_tool("get_weather", {"city": "Paris"})
        assert result.is_error and result.structured_content is None
        assert "no shorter form" in result.content[0].text
        assert whole(await client.read_resource(link_of(result))) == {
            "temperature": 19.0,
            "humidity": 60.0,
            "conditions": "cloudy",
        }
        # A list is never cut to nothing: when even its first item is over the budget, the same error.
        forecast = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 3})
        assert forecast.is_error and len(whole(await client.read_resource(link_of(forecast)))["result"]) == 3
    async with Client(demo_stdio(demo_url, WEATHER_MCP_INLINE_BYTES="100")) as client:
        forecast = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 3})
        assert not forecast.is_error and len(forecast.structured_content["result"]) == 1


async def test_a_forged_altered_or_expired_link_is_refused(demo_url, monkeypatch):
    monkeypatch.setenv("WEATHER_MCP_LINK_KEY", LINK_KEY)
    links = runtime("links").Links("weather-mcp", "WEATHER_MCP", {})
    call = {"p": "weather-mcp", "t": "get_history", "a": BIG}
    expired = links.prefix + links.codec.seal(json.dumps({**call, "e": int(time.time()) - 1}).encode())
    current = links.prefix + links.codec.seal(json.dumps({**call, "e": int(time.time()) + 600}).encode())
    token = current[len(links.prefix) :]
    altered = links.prefix + token[:-4] + ("AAAA" if token[-4:] != "AAAA" else "BBBB")
    forged = links.prefix + "v1." + "A" * 80
    async with Client(demo_stdio(demo_url, WEATHER_MCP_LINK_KEY=LINK_KEY)) as client:
        assert whole(await client.read_resource(current)) == {"result": expected_history(5000)}
        for uri, said in [(expired, "expired"), (altered, "not a link this server made"), (forged, "not a link")]:
            with pytest.raises(MCPError, match=said):
                await client.read_resource(uri)
    async with Client(demo_stdio(demo_url, WEATHER_MCP_LINK_KEY="x" * 40)) as client:  # another key
        with pytest.raises(MCPError, match="another key"):
            await client.read_resource(current)


async def test_two_replicas_sharing_the_key_serve_each_others_links(demo_url):
    first, second, stranger = free_port(), free_port(), free_port()
    with (
        demo_http(first, demo_url, WEATHER_MCP_LINK_KEY=LINK_KEY),
        demo_http(second, demo_url, WEATHER_MCP_LINK_KEY=LINK_KEY),
        demo_http(stranger, demo_url),
    ):
        http, client = http_client(first)
        async with http, client:
            result = await client.call_tool("get_history", BIG)
            uri = link_of(result)
        http, client = http_client(second)
        async with http, client:
            assert whole(await client.read_resource(uri)) == {"result": expected_history(5000)}
        http, client = http_client(stranger)  # a process with its own key
        async with http, client:
            with pytest.raises(MCPError, match="LINK_KEY"):
                await client.read_resource(uri)


async def test_the_config_sets_the_budget_globally_and_per_operation(demo_url, tmp_path):
    config = tmp_path / "typed-mcp.toml"
    config.write_text('inline_bytes = 300\n[operations."GET /v1/history/{city}"]\ninline_bytes = 2000\n')
    out = tmp_path / "weather-mcp"
    generate(REPO / "specs" / "weather-api.json", out, "weather-mcp", "--config", str(config))
    index = (out / "src" / "weather_mcp" / "tools" / "__init__.py").read_text()
    assert '"get_history": 2000,' in index and '"get_forecast": 300,' in index
    budgets = json.loads((out / "typed-mcp.json").read_text())["inline_bytes"]  # recorded for review
    assert budgets["get_history"] == 2000 and budgets["get_forecast"] == 300
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "weather_mcp", "--base-url", demo_url],
        env={**clean, "PYTHONPATH": str(out / "src")},
    )
    async with Client(params) as client:
        history = await client.call_tool("get_history", {"city": "London", "hours": 100})
        assert history.meta[TRUNCATED]["budget"] == 2000 and 1 < len(history.structured_content["result"]) < 100
        forecast = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 7})
        assert forecast.meta[TRUNCATED]["budget"] == 300


# -- discovery mode's fields ---------------------------------------------------------------------------


async def test_discovery_call_tool_fields_trims_the_answer(demo_url):
    async with Client(demo_stdio(demo_url, "--discovery")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert listed["call_tool"].input_schema["properties"]["fields"]["type"] == "string"
        arguments = {"city": "Tokyo", "days": 3}
        trimmed = await client.call_tool(
            "call_tool", {"name": "get_forecast", "arguments": arguments, "fields": "result[].temperature"}
        )
        assert trimmed.structured_content == {"result": [27.0, 28.0, 29.0]}
        assert json.loads(trimmed.content[0].text) == trimmed.structured_content
        assert trimmed.meta["io.github.typed-mcp/fields"] == "result[].temperature"
        shaped = await client.call_tool(
            "call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}, "fields": "{t: temperature}"}
        )
        assert shaped.structured_content == {"t": 19.0}
        bad = await client.call_tool(
            "call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}, "fields": "[["}
        )
        assert bad.is_error and "not a JMESPath expression" in bad.content[0].text
        # What `fields` keeps of a big answer comes whole when it fits the budget; the whole answer
        # does not, and its link reads it all.
        few = {"name": "get_history", "arguments": BIG, "fields": "result[:3].conditions"}
        assert (await client.call_tool("call_tool", few)).structured_content == {"result": ["sunny"] * 3}
        many = await client.call_tool(
            "call_tool", {"name": "get_history", "arguments": BIG, "fields": "result[].humidity"}
        )
        assert many.structured_content == {"result": [45.0] * 5000} and TRUNCATED not in many.meta
        full = await client.call_tool("call_tool", {"name": "get_history", "arguments": BIG})
        assert len(full.structured_content["result"]) < 5000
        assert whole(await client.read_resource(link_of(full))) == {"result": expected_history(5000)}


@pytest.mark.parametrize(
    "fields",
    [
        "|".join(["[@,@][]"] * 60),  # doubles a list 60 times over: 2**60 items
        "|".join(["[@,@]"] * 60),  # shares one list 2**60 times: tiny in memory, endless to write out
        "|".join(["[@,@]"] * 60) + "|to_string(@)",  # ... or to print (or compare) inside the library
        "result|" + "[*]|" * 50 + "[*].[@,@,@]|" * 3 + "@",  # a list walked over and over, then widened
    ],
    ids=["doubled", "shared", "printed", "walked"],
)
async def test_fields_that_multiply_an_answer_are_refused_quickly(demo_url, fields):
    # A 500-character expression can ask for more than any memory holds, or walk one answer endlessly:
    # the selection stops at a bound on what it builds and does, with an error, and the server answers
    # the next call at once.
    async with Client(demo_stdio(demo_url, "--discovery")) as client:
        start = time.monotonic()
        call = {"name": "get_history", "arguments": {"city": "London", "hours": 2000}, "fields": fields}
        refused = await client.call_tool("call_tool", call)
        assert refused.is_error and "`fields`" in refused.content[0].text, refused
        assert time.monotonic() - start < 60  # a hang, not a speed: unbounded, this never ends
        fine = {"name": "get_weather", "arguments": {"city": "Paris"}, "fields": "{t: temperature}"}
        assert (await client.call_tool("call_tool", fine)).structured_content == {"t": 19.0}


def test_fields_stop_after_their_step_budget(monkeypatch):
    # The steps are bounded too (a long expression walking a big answer many times): here with a small
    # budget, on the runtime's own module.
    from mcp.types import CallToolResult, TextContent

    fields = runtime("fields")
    answer = {"result": list(range(1000))}
    result = CallToolResult(content=[TextContent(type="text", text="")], structured_content=answer)
    assert fields.select(result, "result[*] | [*] | [*]").structured_content == answer
    monkeypatch.setattr(fields, "MAX_STEPS", 2500)
    stopped = fields.select(result, "result[*] | [*] | [*]")
    assert stopped.is_error and "more than 2,500 steps" in stopped.content[0].text


async def test_full_mode_tools_keep_their_exact_output_schema(demo_url):
    # No `fields` in full mode: every tool publishes the schema generated for it, unchanged.
    committed = json.loads((DEMO / "src" / "weather_mcp" / "catalog.json").read_text())
    generated = {tool["name"]: tool for tool in runtime("contracts").unpack_catalog(committed)[0]}
    async with Client(demo_stdio(demo_url)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert "fields" not in tools["get_history"].input_schema["properties"]
    assert {name: tool.output_schema for name, tool in tools.items()} == {
        name: tool.get("outputSchema") for name, tool in generated.items()
    }


@pytest.mark.parametrize("line", [TS1, TS2_MODERN], ids=["ts1", "ts2-modern"])
def test_strict_typescript_clients_trim_with_fields(demo_url, line):
    # call_tool's outputSchema is open: both lines' AJV accept the trimmed answer as it comes.
    command = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url, "--discovery"]
    calls = [
        {
            "name": "call_tool",
            "arguments": {
                "name": "get_forecast",
                "arguments": {"city": "Tokyo", "days": 3},
                "fields": "result[].temperature",
            },
        },
        {"name": "call_tool", "arguments": {"name": "get_weather", "arguments": {"city": "Paris"}, "fields": "[["}},
    ]
    trimmed, bad = run_ts_client(command, {"PYTHONPATH": str(DEMO / "src")}, calls, client=line)["results"]
    assert trimmed["ok"] and not trimmed["isError"] and trimmed["structuredContent"] == {"result": [27.0, 28.0, 29.0]}
    assert bad["ok"] and bad["isError"] and "not a JMESPath expression" in bad["text"]


# -- tools per request ----------------------------------------------------------------------------------


async def test_request_headers_narrow_the_tools_for_list_and_call(demo_url):
    port = free_port()
    with demo_http(port, demo_url):
        http, client = http_client(port, {"X-MCP-Tools": "get_weather,get_history"})
        async with http, client:
            assert sorted(tool.name for tool in (await client.list_tools()).tools) == ["get_history", "get_weather"]
            assert not (await client.call_tool("get_weather", {"city": "Paris"})).is_error
            refused = await client.call_tool("get_forecast", {"city": "Paris"})
            assert refused.is_error and "X-MCP-Tools: get_weather,get_history" in refused.content[0].text
        http, client = http_client(port, {"X-MCP-Readonly": "true"})
        async with http, client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "get_weather" in names and not names & {"create_report", "delete_report"}
            refused = await client.call_tool("delete_report", {"report_id": 1})
            assert refused.is_error and "not among the tools" in refused.content[0].text
        http, client = http_client(port, {"X-MCP-Tools": "no_such_tool"})
        async with http, client:
            with pytest.raises(MCPError, match="unknown tool 'no_such_tool'"):
                await client.list_tools()
        http, client = http_client(port)  # without the headers: every tool
        async with http, client:
            assert len((await client.list_tools()).tools) == len(WEATHER_TOOLS)


async def test_request_headers_never_widen_what_the_server_serves(demo_url):
    port = free_port()
    with demo_http(port, demo_url, "--read-only"):
        http, client = http_client(port, {"X-MCP-Tools": "create_report,get_weather", "X-MCP-Readonly": "false"})
        async with http, client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["get_weather"]
            refused = await client.call_tool("create_report", {"body": {}})
            assert refused.is_error and "--read-only" in refused.content[0].text


def test_the_preview_cuts_the_biggest_lists_keeps_the_rest_and_holds_to_the_schema():
    preview = runtime("links")._preview
    page = {"total": 900, "items": [{"id": n, "tags": ["a", "b"]} for n in range(900)], "next": "x"}
    size = len(json.dumps(page, separators=(",", ":")))
    value, cuts = preview(page, size, 1000, None)
    assert value["total"] == 900 and value["next"] == "x" and value["items"] == page["items"][: len(value["items"])]
    assert len(json.dumps(value, separators=(",", ":"))) <= 1000 < len(json.dumps(page["items"][: cuts[0]["kept"] + 1]))
    assert cuts == [{"path": ["items"], "kept": len(value["items"]), "total": 900}]
    two = {"a": list(range(500)), "b": [{"s": "x" * 10}] * 300}
    value, cuts = preview(two, len(json.dumps(two, separators=(",", ":"))), 600, None)
    assert len(json.dumps(value, separators=(",", ":"))) <= 600 and {tuple(cut["path"]) for cut in cuts} == {
        ("a",),
        ("b",),
    }
    at_least = {"type": "object", "properties": {"items": {"type": "array", "minItems": 800}}}
    assert preview(page, size, 1000, at_least) is None  # a cut the schema refuses is no preview
    assert preview({"text": "x" * 5000}, 5011, 1000, None) is None  # nothing to cut


async def test_a_link_read_goes_upstream_with_the_readers_forwarded_credential(demo_url):
    # The demo's GET tools take no credential, so the upstream's log shows what was forwarded.
    port = free_port()
    with demo_http(port, demo_url, "--auth", "forwarded", WEATHER_MCP_LINK_KEY=LINK_KEY):
        http, client = http_client(port, {"Authorization": "Bearer first-caller"})
        async with http, client:
            uri = link_of(await client.call_tool("get_history", BIG))
        http, client = http_client(port, {"Authorization": "Bearer reader"})
        async with http, client:
            assert whole(await client.read_resource(uri)) == {"result": expected_history(5000)}
    seen = [r for r in httpx2.get(f"{demo_url}/_debug/requests").json() if r["raw_path"] == "/v1/history/London"]
    assert [r["authorization"] for r in seen[-2:]] == ["Bearer first-caller", "Bearer reader"]
