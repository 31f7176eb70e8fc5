"""Confirmation before destructive calls, through the MCP Python SDK client against the live demo API
(which records every request it gets): a package generated with `[confirm] destructive = true` asks the
person before `delete_report` goes upstream, with an InputRequiredResult and a sealed requestState
(2026-07-28 clients) or `elicitation/create` (older ones), over stdio and streamable HTTP; nothing is
sent when the person declines, when the client cannot ask, or when the state is forged or replayed.
And the two narrowing fixes: a tools/list narrowed by X-MCP-* headers is never cached across clients,
and the headers narrow discovery mode's tools too."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult

from harness import environment
from harness.demo.process import free_port, running
from harness.node_tools import STRICT_CLIENT_PARAMS, run_ts_client
from support import DEMO, REPO, generate

pytestmark = pytest.mark.anyio

TOKEN = {"WEATHER_MCP_HTTP_BEARER_TOKEN": "demo-token"}  # the demo API's write token
SETTING = "[confirm] destructive"


@pytest.fixture(scope="module")
def confirming(tmp_path_factory) -> Path:
    """The weather package generated with `[confirm] destructive = true`: its src folder."""
    root = tmp_path_factory.mktemp("confirm")
    (root / "typed-mcp.toml").write_text("[confirm]\ndestructive = true\n")
    out = root / "weather-mcp"
    generate(REPO / "specs" / "weather-api.json", out, "weather-mcp", "--config", str(root / "typed-mcp.toml"))
    return out / "src"


def stdio(src: Path, base_url: str, *flags: str) -> StdioServerParameters:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "weather_mcp", "--base-url", base_url, *flags],
        env={**clean, "PYTHONPATH": str(src), **TOKEN},
    )


def serve(src: Path, port: int, base_url: str, *flags: str, **env: str):
    args = [sys.executable, "-m", "weather_mcp", "--base-url", base_url, "--transport", "streamable-http"]
    environ = {**environment(src), **TOKEN, **env}
    return running([*args, "--port", str(port), *flags], f"http://127.0.0.1:{port}/health", environ)


def http_client(port: int, headers: dict[str, str] | None = None, **options: Any) -> Any:
    http = httpx2.AsyncClient(headers=headers or {})
    return http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), **options)


def answering(action: str, confirm: bool = True, asked: list[str] | None = None) -> Any:
    """An elicitation callback that answers every question with `action` (and `confirm`)."""

    async def callback(context: Any, params: Any) -> ElicitResult:
        if asked is not None:
            asked.append(params.message)
        assert params.requested_schema["properties"]["confirm"]["type"] == "boolean"
        return ElicitResult(action=action, content={"confirm": confirm} if action == "accept" else None)

    return callback


def report(base_url: str) -> int:
    """A new report on the demo API (its id): what `delete_report` deletes."""
    body = {
        "city": "Oslo",
        "temperature": 1.0,
        "humidity": 80.0,
        "conditions": "snow",
        "observed_at": "2026-01-01T00:00:00Z",
    }
    made = httpx2.post(f"{base_url}/v1/reports", json=body, headers={"Authorization": "Bearer demo-token"})
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def deletes(base_url: str, report_id: int) -> int:
    """The DELETE requests the demo API got for the report."""
    seen = httpx2.get(f"{base_url}/_debug/requests").json()
    return sum(1 for r in seen if r["method"] == "DELETE" and r["raw_path"] == f"/v1/reports/{report_id}")


def text(result: Any) -> str:
    return " ".join(block.text for block in result.content if block.type == "text")


# -- the config --------------------------------------------------------------------------------------


async def test_the_config_marks_the_tools_to_confirm(confirming, demo_url, tmp_path):
    tools = (confirming / "weather_mcp" / "tools" / "__init__.py").read_text()
    # The destructive tools: DELETE, and PUT unless the spec or the config says otherwise.
    assert (
        'CONFIRM: frozenset[str] = frozenset(\n    [\n        "delete_report",\n        "put_station_photo",\n    ]\n)'
        in tools
    )
    manifest = json.loads((confirming.parent / "typed-mcp.json").read_text())
    assert manifest["confirm"] == ["delete_report", "put_station_photo"]
    assert {
        "operation": "DELETE /v1/reports/{report_id}",
        "action": "confirmed by the person before it is sent",
        "rule": "config confirm.destructive",
    } in manifest["curation"]
    # Per operation: its own `confirm` wins over [confirm] destructive, either way.
    config = tmp_path / "typed-mcp.toml"
    config.write_text(
        "[confirm]\ndestructive = true\n[operations.delete_report]\nconfirm = false\n"
        '[operations."POST /v1/reports"]\nconfirm = true\n[operations.get_history]\nconfirm = true\n'
    )
    generate(REPO / "specs" / "weather-api.json", tmp_path / "pkg", "weather-mcp", "--config", str(config))
    manifest = json.loads((tmp_path / "pkg" / "typed-mcp.json").read_text())
    assert manifest["confirm"] == ["get_history", "create_report", "put_station_photo"]
    # Without the setting (the committed demo package): nothing to confirm, nothing recorded.
    assert "confirm" not in json.loads((DEMO / "typed-mcp.json").read_text())
    # A confirmed read tool's big answer links to the whole, but reading the link cannot ask the
    # person: it is refused, never made unconfirmed.
    params = stdio(tmp_path / "pkg" / "src", demo_url)
    params.env["WEATHER_MCP_INLINE_BYTES"] = "2000"
    async with Client(params, elicitation_callback=answering("accept")) as client:
        preview = await client.call_tool("get_history", {"city": "London", "hours": 500})
        (link,) = [block for block in preview.content if block.type == "resource_link"]
        with pytest.raises(MCPError, match="sent only when the person confirms"):
            await client.read_resource(str(link.uri))


# -- stdio --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "2025-11-25"])
async def test_the_person_confirms_or_declines_before_anything_is_sent(confirming, demo_url, mode):
    asked: list[str] = []
    kept, gone = report(demo_url), report(demo_url)
    async with Client(stdio(confirming, demo_url), mode=mode, elicitation_callback=answering("decline")) as client:
        assert (client.protocol_version == "2026-07-28") == (mode == "auto")
        declined = await client.call_tool("delete_report", {"report_id": kept})
        assert declined.is_error and "declined" in text(declined) and "nothing was sent" in text(declined)
        # A tool that needs no confirmation is never asked about.
        assert not (await client.call_tool("get_weather", {"city": "Paris"})).is_error
    async with Client(
        stdio(confirming, demo_url), mode=mode, elicitation_callback=answering("accept", False)
    ) as client:
        said_no = await client.call_tool("delete_report", {"report_id": kept})
        assert said_no.is_error and "answered no" in text(said_no)
    assert deletes(demo_url, kept) == 0
    callback = answering("accept", True, asked)
    async with Client(stdio(confirming, demo_url), mode=mode, elicitation_callback=callback) as client:
        deleted = await client.call_tool("delete_report", {"report_id": gone})
        assert not deleted.is_error, deleted
    assert deletes(demo_url, gone) == 1
    assert asked == [
        f'Send delete_report (DELETE /v1/reports/{{report_id}}) with {{"report_id": {gone}}} to the API? '
        "Nothing is sent unless you confirm."
    ]
    assert httpx2.get(f"{demo_url}/v1/reports/{kept}").status_code == 200  # still there


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "2025-11-25"])
async def test_a_client_without_elicitation_gets_an_error_naming_the_setting(confirming, demo_url, mode):
    kept = report(demo_url)
    async with Client(stdio(confirming, demo_url), mode=mode) as client:
        refused = await client.call_tool("delete_report", {"report_id": kept})
        assert refused.is_error and SETTING in text(refused) and "no elicitation capability" in text(refused)
    assert deletes(demo_url, kept) == 0


async def test_a_forged_replayed_or_rebound_state_is_refused(confirming, demo_url):
    first, second = report(demo_url), report(demo_url)
    accept = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
    async with Client(stdio(confirming, demo_url), elicitation_callback=answering("accept")) as client:
        session = client.session
        question = await session.call_tool("delete_report", {"report_id": first}, allow_input_required=True)
        assert question.result_type == "input_required" and list(question.input_requests) == ["confirm"]
        state = question.request_state
        assert (
            state.startswith("v1.") and "report_id" not in state and "confirm" not in state
        )  # sealed: neither readable nor alterable
        # An answer without the state the server sealed is no confirmation: the question is asked again.
        again = await session.call_tool(
            "delete_report", {"report_id": first}, input_responses=accept, allow_input_required=True
        )
        assert again.result_type == "input_required"
        # A forged state, an altered one, and one sealed for other arguments: refused before the tool runs.
        altered = state[:-4] + ("AAAA" if state[-4:] != "AAAA" else "BBBB")
        for forged, arguments in [("v1." + "A" * 80, first), (altered, first), (state, second)]:
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await session.call_tool(
                    "delete_report", {"report_id": arguments}, input_responses=accept, request_state=forged
                )
        assert deletes(demo_url, first) == 0 and deletes(demo_url, second) == 0
        done = await session.call_tool(
            "delete_report", {"report_id": first}, input_responses=accept, request_state=state
        )
        assert not done.is_error, done
        assert deletes(demo_url, first) == 1
        replayed = await session.call_tool(
            "delete_report", {"report_id": first}, input_responses=accept, request_state=state
        )
        assert replayed.is_error and "already used" in text(replayed)
        assert deletes(demo_url, first) == 1


async def test_discovery_mode_call_tool_asks_too(confirming, demo_url):
    kept, gone = report(demo_url), report(demo_url)
    async with Client(stdio(confirming, demo_url, "--discovery"), elicitation_callback=answering("decline")) as client:
        declined = await client.call_tool("call_tool", {"name": "delete_report", "arguments": {"report_id": kept}})
        assert declined.is_error and "declined" in text(declined)
    async with Client(stdio(confirming, demo_url, "--discovery"), elicitation_callback=answering("accept")) as client:
        deleted = await client.call_tool("call_tool", {"name": "delete_report", "arguments": {"report_id": gone}})
        assert not deleted.is_error, deleted
    assert deletes(demo_url, kept) == 0 and deletes(demo_url, gone) == 1


@pytest.mark.parametrize("client", STRICT_CLIENT_PARAMS)
def test_the_typescript_client_confirms_or_declines(confirming, demo_url, client):
    # On the initialize handshake both lines answer the server's elicitation/create; on 2026-07-28 the
    # 2.x client answers the input request of the input_required result and retries with the sealed state.
    kept, gone = report(demo_url), report(demo_url)
    env = {"PYTHONPATH": str(confirming), **TOKEN}
    command = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url]
    (declined,) = run_ts_client(
        command, env, [{"name": "delete_report", "arguments": {"report_id": kept}}], client=client, elicit="decline"
    )["results"]
    assert declined["ok"] and declined["isError"] and "declined" in declined["text"]
    (deleted,) = run_ts_client(
        command, env, [{"name": "delete_report", "arguments": {"report_id": gone}}], client=client, elicit="accept"
    )["results"]
    assert deleted["ok"] and not deleted["isError"], deleted
    assert deletes(demo_url, kept) == 0 and deletes(demo_url, gone) == 1


# -- streamable HTTP ----------------------------------------------------------------------------------


async def test_over_streamable_http_stateful_and_stateless(confirming, demo_url):
    stateful, stateless = free_port(), free_port()
    key = {"WEATHER_MCP_LINK_KEY": "k" * 40}
    with serve(confirming, stateful, demo_url, **key), serve(confirming, stateless, demo_url, "--stateless", **key):
        for port in (stateful, stateless):
            for mode in ("auto", "legacy"):
                gone, kept = report(demo_url), report(demo_url)
                http, client = http_client(port, mode=mode, elicitation_callback=answering("accept"))
                async with http, client:
                    result = await client.call_tool("delete_report", {"report_id": gone})
                if port == stateless and mode == "legacy":
                    # A stateless server has no channel for an older client's elicitation/create.
                    assert result.is_error and "cannot carry the question" in text(result)
                    assert deletes(demo_url, gone) == 0
                else:
                    assert not result.is_error, (port, mode, result)
                    assert deletes(demo_url, gone) == 1
                http, client = http_client(port, mode=mode)  # no elicitation
                async with http, client:
                    refused = await client.call_tool("delete_report", {"report_id": kept})
                assert refused.is_error and deletes(demo_url, kept) == 0


# -- narrowing ----------------------------------------------------------------------------------------


async def test_a_narrowed_tool_list_is_not_cached_across_clients(demo_url):
    port = free_port()
    with serve(DEMO / "src", port, demo_url):
        http, client = http_client(port, cache=None)
        async with http, client:
            whole = await client.list_tools()
        assert whole.cache_scope == "public" and whole.ttl_ms > 0
        http, client = http_client(port, {"X-MCP-Tools": "get_weather"}, cache=None)
        async with http, client:
            narrowed = await client.list_tools()
        assert [tool.name for tool in narrowed.tools] == ["get_weather"]
        assert narrowed.cache_scope == "private" and narrowed.ttl_ms == 0


async def test_headers_narrow_discovery_mode(demo_url):
    port = free_port()
    with serve(DEMO / "src", port, demo_url, "--discovery"):
        http, client = http_client(port, {"X-MCP-Tools": "get_weather,get_history"})
        async with http, client:
            found = await client.call_tool("search_tools", {"query": "forecast report weather history", "limit": 50})
            assert sorted(tool["name"] for tool in found.structured_content["tools"]) == ["get_history", "get_weather"]
            described = await client.call_tool("describe_tool", {"name": "get_forecast"})
            assert described.is_error and "X-MCP-Tools: get_weather,get_history" in text(described)
            called = await client.call_tool("call_tool", {"name": "get_forecast", "arguments": {"city": "Paris"}})
            assert called.is_error and "not among the tools" in text(called)
            assert not (
                await client.call_tool("call_tool", {"name": "get_weather", "arguments": {"city": "Paris"}})
            ).is_error
            listed = await client.call_tool("list_toolsets", {})
            assert "reports" not in json.dumps(listed.structured_content)
        http, client = http_client(port)  # without the headers: every tool
        async with http, client:
            found = await client.call_tool("search_tools", {"query": "forecast", "limit": 50})
            assert "get_forecast" in [tool["name"] for tool in found.structured_content["tools"]]
