"""Long-running operations (`_runtime/tasks.py`), through the MCP Python SDK client against the live
demo API: its `start_export` answers 202 Accepted with a status resource that turns `succeeded` after
a number of polls (`ready_after`), and the demo config marks it `long_running`.

A client that declares the tasks extension gets a task at once and polls `tasks/get` (over stdio, and
over streamable HTTP from one stateless replica to another); `tasks/cancel` reaches the API's cancel
operation; a taskId forged, altered, expired or sealed with another key is refused. A client without
the extension gets the final answer within the call, with progress notifications, or past the
deadline a result that says where to continue."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.server.request_state import AESGCMRequestStateCodec
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, Result
from mcp_types import CancelTaskRequest, CancelTaskRequestParams, GetTaskRequest, GetTaskRequestParams

from harness.demo.process import free_port
from harness.node_tools import TS1, TS2_MODERN, run_ts_client
from harness.runtime_loader import runtime
from support import DEMO, LINK_KEY, demo_http, demo_stdio

pytestmark = pytest.mark.anyio

tasks = runtime("tasks")
EXPORT = {"body": {"city": "London", "ready_after": 2}}
NEVER = {"body": {"city": "London", "ready_after": 1000}}  # never ready within a test
READINGS = [{"temperature": 22.5, "humidity": 45.0, "conditions": "sunny"}] * 3  # the demo's London


class TaskHandle(Result):
    """The extension's CreateTaskResult: a tools/call answered with a task."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskState(Result):
    """A task as tasks/get and tasks/cancel answer it; `result` once it has finished."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None


async def get_task(session: Any, task_id: str) -> TaskState:
    request = GetTaskRequest(params=GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, TaskState)


async def until_finished(session: Any, task_id: str) -> TaskState:
    for _ in range(60):  # a bound about hangs: the demo's job is ready after two polls
        state = await get_task(session, task_id)
        if state.status != "working":
            return state
        await anyio.sleep((state.poll_interval_ms or 1000) / 1000)
    raise AssertionError("the task never finished")


class TasksClient(ClientExtension):
    """The client half of the extension: declares it, and finishes a task by polling tasks/get."""

    identifier = tasks.EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve),)

    @staticmethod
    async def resolve(handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        state = await until_finished(ctx.session, handle.task_id)
        assert state.result is not None, state
        return CallToolResult.model_validate(state.result)


def tasks_client(port: int, http: Any) -> Client:
    """A streamable HTTP client of the replica on `port` that declares the tasks extension."""
    transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
    return Client(transport, extensions=[TasksClient()])


def upstream_requests(base_url: str) -> list[dict[str, Any]]:
    return httpx.get(f"{base_url}/_debug/requests").json()


async def test_a_client_of_the_extension_gets_a_task_and_its_final_typed_answer(demo_url):
    async with Client(demo_stdio(demo_url), extensions=[TasksClient()]) as client:
        assert tasks.EXTENSION in (client.server_capabilities.extensions or {})
        handle = await client.session.call_tool("start_export", EXPORT, allow_claimed=True)
        assert isinstance(handle, TaskHandle) and handle.status == "working", handle
        assert handle.poll_interval_ms == 1000  # the API's Retry-After: 1
        state = await until_finished(client.session, handle.task_id)
        assert state.status == "completed", state
        final = CallToolResult.model_validate(state.result)
        assert final.structured_content is not None and not final.is_error
        assert final.structured_content["status"] == "succeeded"
        assert final.structured_content["readings"] == READINGS
        # The SDK's own resolution: the claim polls, and the client validates the answer against the
        # tool's outputSchema as it does any call's.
        answer = await client.call_tool("start_export", EXPORT)
        assert not answer.is_error and answer.structured_content is not None
        assert answer.structured_content["readings"] == READINGS


async def test_without_the_extension_the_call_polls_to_the_end_with_progress(demo_url):
    seen: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    async with Client(demo_stdio(demo_url)) as client:
        result = await client.call_tool("start_export", EXPORT, progress_callback=progress)
    assert not result.is_error, result
    assert result.structured_content is not None and result.structured_content["readings"] == READINGS
    # One notification per poll: two while it runs (202), one when it has succeeded.
    assert [done for done, _ in seen] == [1, 2, 3], seen
    assert "working" in (seen[0][1] or "") and "completed" in (seen[-1][1] or "")


async def test_discovery_modes_call_tool_follows_the_operation_to_its_end(demo_url):
    # Discovery's call_tool answers within the call, whatever the client declares: its result is the
    # tool's final answer (trimmed by `fields`), never a task handle nor the accepted job as it came.
    async with Client(demo_stdio(demo_url, "--discovery"), extensions=[TasksClient()]) as client:
        assert tasks.EXTENSION not in (client.server_capabilities.extensions or {})  # it creates no task
        called = {"name": "start_export", "arguments": EXPORT}
        result = await client.call_tool("call_tool", called)
        assert not result.is_error, result
        assert result.structured_content is not None, result
        assert result.structured_content["status"] == "succeeded", result.structured_content
        assert result.structured_content["readings"] == READINGS
        trimmed = await client.call_tool("call_tool", {**called, "fields": "status"})
        assert not trimmed.is_error and "succeeded" in json.dumps(trimmed.structured_content), trimmed


async def test_past_the_deadline_the_result_says_where_to_continue(demo_url):
    async with Client(demo_stdio(demo_url, WEATHER_MCP_LONG_RUNNING_SECONDS="2.5")) as client:
        result = await client.call_tool("start_export", NEVER)
    assert result.is_error
    (text,) = [block.text for block in result.content if block.type == "text"]
    assert "still running after 2.5 s (WEATHER_MCP_LONG_RUNNING_SECONDS)" in text, text
    location = result.meta["io.github.typed-mcp/long-running"]["location"]
    assert location.startswith(f"{demo_url}/v1/exports/") and f"GET {location}" in text
    export_id = int(location.rsplit("/", 1)[1])
    assert f"call the tool get_export with {json.dumps({'export_id': str(export_id)})}" in text


async def test_cancel_reaches_the_api_and_the_task_says_so(demo_url):
    async with Client(demo_stdio(demo_url), extensions=[TasksClient()]) as client:
        handle = await client.session.call_tool("start_export", NEVER, allow_claimed=True)
        assert isinstance(handle, TaskHandle)
        before = upstream_requests(demo_url)
        request = CancelTaskRequest(params=CancelTaskRequestParams(task_id=handle.task_id))
        cancelled = await client.session.send_request(request, TaskState)
        assert cancelled.status == "cancelled", cancelled
        after = await get_task(client.session, handle.task_id)
        assert after.status == "cancelled" and after.result is not None and after.result["isError"]
    sent = [r for r in upstream_requests(demo_url) if r not in before and r["raw_path"].endswith("/cancel")]
    assert len(sent) == 1 and sent[0]["method"] == "POST", sent


async def test_a_forged_altered_expired_or_foreign_task_is_refused(demo_url):
    codec = AESGCMRequestStateCodec([tasks.KEY_CONTEXT + LINK_KEY])
    now = int(time.time())
    task = {"p": "weather-mcp", "t": "start_export", "u": f"{demo_url}/v1/exports/1", "s": [], "w": None, "c": now}
    expired = codec.seal(json.dumps({**task, "e": now - 1}).encode())
    elsewhere = codec.seal(json.dumps({**task, "u": "http://127.0.0.2:9/v1/exports/1", "e": now + 600}).encode())
    async with Client(demo_stdio(demo_url, WEATHER_MCP_LINK_KEY=LINK_KEY), extensions=[TasksClient()]) as client:
        handle = await client.session.call_tool("start_export", EXPORT, allow_claimed=True)
        assert isinstance(handle, TaskHandle)
        token = handle.task_id
        altered = token[:-4] + ("AAAA" if token[-4:] != "AAAA" else "BBBB")
        refused = [(expired, "expired"), (altered, "not a task of this server"), ("v1." + "A" * 80, "forged")]
        for task_id, said in [*refused, (elsewhere, "outside the API")]:
            with pytest.raises(MCPError, match=said):
                await get_task(client.session, task_id)
        assert (await until_finished(client.session, token)).status == "completed"
    async with Client(demo_stdio(demo_url, WEATHER_MCP_LINK_KEY="x" * 40), extensions=[TasksClient()]) as client:
        with pytest.raises(MCPError, match="another key"):
            await get_task(client.session, token)


async def test_another_stateless_replica_serves_the_task(demo_url):
    first, second = free_port(), free_port()
    with (
        demo_http(first, demo_url, "--stateless", WEATHER_MCP_LINK_KEY=LINK_KEY),
        demo_http(second, demo_url, "--stateless", WEATHER_MCP_LINK_KEY=LINK_KEY),
    ):
        async with httpx2.AsyncClient() as http, tasks_client(first, http) as created:
            handle = await created.session.call_tool("start_export", EXPORT, allow_claimed=True)
        assert isinstance(handle, TaskHandle) and handle.status == "working", handle
        async with httpx2.AsyncClient() as http, tasks_client(second, http) as polled:
            state = await until_finished(polled.session, handle.task_id)
        assert state.status == "completed" and state.result is not None
        assert state.result["structuredContent"]["readings"] == READINGS


async def test_a_task_is_served_only_to_the_principal_it_was_created_for(demo_url):
    port = free_port()
    with demo_http(port, demo_url, "--auth", "forwarded", "--stateless", WEATHER_MCP_LINK_KEY=LINK_KEY):
        mine, theirs = {"authorization": "Bearer demo-token"}, {"authorization": "Bearer someone-else"}
        async with httpx2.AsyncClient(headers=mine) as http, tasks_client(port, http) as client:
            handle = await client.session.call_tool("start_export", EXPORT, allow_claimed=True)
        assert isinstance(handle, TaskHandle)
        async with httpx2.AsyncClient(headers=theirs) as http, tasks_client(port, http) as client:
            with pytest.raises(MCPError, match="another principal"):
                await get_task(client.session, handle.task_id)
        async with httpx2.AsyncClient(headers=mine) as http, tasks_client(port, http) as client:
            assert (await until_finished(client.session, handle.task_id)).status == "completed"


@pytest.mark.parametrize("line", [TS1, TS2_MODERN], ids=["ts1", "ts2-modern"])
def test_strict_typescript_clients_get_the_final_answer_within_the_call(demo_url, line):
    # Neither TypeScript line has a client for the tasks extension (the 2.x client refuses tasks/get
    # toward a 2026-07-28 server before sending it): both get the answer polled within the call, and
    # validate it against the outputSchema (AJV).
    command = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url]
    calls = [{"name": "start_export", "arguments": EXPORT}]
    (export,) = run_ts_client(command, {"PYTHONPATH": str(DEMO / "src")}, calls, client=line)["results"]
    assert export["ok"] and not export["isError"], export
    assert export["structuredContent"]["status"] == "succeeded"
    assert export["structuredContent"]["readings"] == READINGS
