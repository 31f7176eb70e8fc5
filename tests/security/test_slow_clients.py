"""Slow clients (issue 24, item 8b): the committed demo package served over streamable HTTP by its own
command line (as its Dockerfile runs it), while 50 clients send their request headers one byte a
second and 5 more announce a body and send it one byte a second. Another client's tool call and
`GET /health` answer within a second of their usual time, and every slow connection is answered 408
and closed once its deadline (`WEATHER_MCP_HEADER_TIMEOUT`, `WEATHER_MCP_BODY_TIMEOUT`) has passed.
On the old code uvicorn had no such deadline: every slow connection was still open."""

from __future__ import annotations

import sys
import time

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import environment
from harness.demo.process import free_port, running
from harness.slow import trickle
from support import REPO

pytestmark = pytest.mark.anyio

PACKAGE = REPO / "generated" / "weather-mcp"
HEADER_SECONDS, BODY_SECONDS = 3, 5
SLACK = 1.0  # seconds a probe may take beyond its baseline while the slow clients hold connections
GRACE = 6.0  # seconds past its deadline a slow connection may still be open (timers on a loaded machine)


async def slow_client(port: int, body: bool, closed: dict[int, tuple[float, bytes]], index: int) -> None:
    """Connect, then send a request a byte a second (only its body, for `body`); record when the
    server closed the connection and what it answered."""
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
    at_once = f"{head}content-length: 1000\r\n\r\n".encode() if body else b""
    payload = b"{" + b" " * 999 if body else head.encode() + b"x-slow: " + b"a" * 1000
    deadline = (BODY_SECONDS if body else HEADER_SECONDS) + GRACE
    ended = await trickle(port, at_once, payload, deadline)
    if ended is not None:
        closed[index] = ended


async def test_slow_clients_are_cut_off_and_do_not_delay_anyone_else(demo_url):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "weather_mcp", "--base-url", demo_url, "--transport", "streamable-http"]
    env = {
        **environment(PACKAGE / "src"),
        "WEATHER_MCP_HEADER_TIMEOUT": str(HEADER_SECONDS),
        "WEATHER_MCP_BODY_TIMEOUT": str(BODY_SECONDS),
    }
    with running([*args, "--port", str(port)], f"{base}/health", env):
        async with Client(streamable_http_client(f"{base}/mcp")) as client, httpx.AsyncClient() as http:

            async def call() -> None:
                result = await client.call_tool("get_temperature", {"city": "paris"})
                assert not result.is_error, result.content

            async def health() -> None:
                assert (await http.get(f"{base}/health")).status_code == 200

            async def timed(probe) -> float:
                started = time.monotonic()
                await probe()
                return time.monotonic() - started

            await call()  # the first call imports the tool's module: not part of the baseline
            baseline = {probe: min([await timed(probe) for _ in range(3)]) for probe in (call, health)}
            closed: dict[int, tuple[float, bytes]] = {}
            async with anyio.create_task_group() as group:
                for index in range(55):
                    group.start_soon(slow_client, port, index >= 50, closed, index)
                await anyio.sleep(1)  # all connected, each trickling
                for _ in range(2):  # before any deadline has passed
                    for probe, usual in baseline.items():
                        took = await timed(probe)
                        assert took < usual + SLACK, f"{probe.__name__} took {took:.2f}s (baseline {usual:.2f}s)"
                    await anyio.sleep(0.5)
            await health()  # and the server still serves
    still_open = [index for index in range(55) if index not in closed]
    assert not still_open, f"{len(still_open)} of 55 slow connections still open {GRACE:g} s past their deadline"
    for index, (after, answer) in closed.items():
        deadline = BODY_SECONDS if index >= 50 else HEADER_SECONDS
        assert deadline - 0.5 <= after <= deadline + GRACE, (index, after)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), (index, answer[:100])
