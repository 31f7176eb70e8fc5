"""Upstream faults: the committed demo server (generated/weather-mcp) behind a hostile upstream that
misbehaves at the byte level (`harness.hostile`), driven by the MCP Python SDK client over stdio and
streamable HTTP. Each fault must be an isError result with a clear message, within the configured
timeout, with the server's memory bounded, and the next good call must succeed."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from harness.demo.process import free_port, running
from harness.hostile import Hostile
from support import REPO, WEATHER_REPORT

PACKAGE = REPO / "generated" / "weather-mcp"
TIMEOUT = 2.0  # WEATHER_MCP_TIMEOUT: every fault that stalls must end by it
CAP = 1024 * 1024  # WEATHER_MCP_MAX_RESPONSE_BYTES; the floods send 64 times as much
RSS_GROWTH_MIB = 24  # a flood may not grow the server by more than this (64 MiB were offered)
TOKEN = "fault-test-secret-token"

ENV = {
    "PYTHONPATH": str(PACKAGE / "src"),
    "WEATHER_MCP_TIMEOUT": str(TIMEOUT),
    "WEATHER_MCP_MAX_RESPONSE_BYTES": str(CAP),
    "WEATHER_MCP_RETRIES": "1",
    "WEATHER_MCP_RETRY_MAX_SECONDS": "1",
    "WEATHER_MCP_HTTP_BEARER_TOKEN": TOKEN,
}

# fault (the hostile upstream's behaviour) -> what the error message must say
FAULTS = {
    "trickle": rf"timed out after {TIMEOUT:g}s",
    "trickle-head": rf"timed out after {TIMEOUT:g}s",
    "hang": rf"timed out after {TIMEOUT:g}s",
    "hang-body": rf"timed out after {TIMEOUT:g}s",
    "reset": r"connection .*closed or reset before the answer was complete",
    "big-declared": rf"upstream response is 67108864 bytes, over the {CAP} byte cap",
    "big-undeclared": rf"over the {CAP} byte cap",
    "big-gzip": rf"over the {CAP} byte cap \(decoded\)",
    "invalid-json": r"upstream returned invalid JSON: \{\"temperature\"",
    "html": r"upstream returned text/html where JSON was promised: <!doctype html>",
    "redirect": r"HTTP 302 Found: a redirect to http://127\.0\.0\.1:\d+ \(another origin\), not followed",
    "redirect-same": r"HTTP 301 Moved Permanently: a redirect to /v1/weather/ok, not followed",
    "huge-500": r"GET /v1/weather/\{city\} failed: HTTP 500 Internal Server Error: \"xxxx",
    "huge-503": r"GET /v1/weather/\{city\} failed: HTTP 503 Service Unavailable: \"xxxx",
}
FLOODS = {"big-declared", "big-undeclared", "big-gzip", "huge-500", "huge-503"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def hostile():
    with Hostile() as server:
        yield server


@pytest.fixture(scope="module")
async def client(hostile):
    """One stdio server for the module: a fault must leave it serving the next call anyway."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "weather_mcp", "--base-url", hostile.url],
        env={**os.environ, **ENV},
    )
    async with Client(params) as session:
        yield session


def _children_rss(module: str) -> int:
    """RSS in bytes of this process's child running `-m module` (the stdio server)."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            cmdline = (status.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields.get("PPid", "0")) == os.getpid() and module.encode() in cmdline:
            return _rss(int(status.parent.name))
    raise AssertionError(f"no child process runs {module}")


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def _call(client, fault: str):
    if fault == "reports":
        return await client.call_tool("create_report", {"body": WEATHER_REPORT}, read_timeout_seconds=30)
    return await client.call_tool("get_weather", {"city": fault}, read_timeout_seconds=30)


async def _fault_then_good_call(client, hostile, fault: str, rss=None) -> str:
    """Call into `fault`; return its error text after checking the bounds and the next good call."""
    before = rss() if rss else 0
    started = time.monotonic()
    result = await _call(client, fault)
    elapsed = time.monotonic() - started
    assert result.is_error, (fault, result)
    assert result.structured_content is None
    text = result.content[0].text
    # a hang, not speed: the server answers by its timeout, well before the client gives up (30 s)
    assert elapsed < TIMEOUT + 20, f"{fault}: took {elapsed:.1f}s, the timeout is {TIMEOUT:g}s"
    assert len(text) < 1000, f"{fault}: unbounded message of {len(text)} characters"
    if rss:
        grown = rss() - before
        assert grown < RSS_GROWTH_MIB * 1024 * 1024, f"{fault}: the server grew by {grown / 2**20:.1f} MiB"
    good = await client.call_tool("get_weather", {"city": "ok"})
    assert not good.is_error and good.structured_content["conditions"] == "clear", (fault, good)
    return text


@pytest.mark.anyio
@pytest.mark.parametrize("fault", FAULTS)
async def test_fault_is_a_clear_error_and_the_server_keeps_serving(client, hostile, fault):
    rss = (lambda: _children_rss("weather_mcp")) if fault in FLOODS else None
    text = await _fault_then_good_call(client, hostile, fault, rss)
    assert re.search(FAULTS[fault], text), f"{fault}: {text!r}"


@pytest.mark.anyio
async def test_redirects_never_reach_another_origin_nor_carry_the_credential(client, hostile):
    """A 302 to another origin (with a body the model accepts) and a 307 of a POST carrying the bearer
    token: neither is followed, so the other origin sees no request and no credential."""
    text = await _fault_then_good_call(client, hostile, "redirect")
    assert "another origin" in text
    text = await _fault_then_good_call(client, hostile, "reports")
    assert re.search(r"POST /v1/reports failed: HTTP 307 Temporary Redirect: a redirect to .*not followed", text)
    assert hostile.requests("main")[-2].headers["authorization"] == f"Bearer {TOKEN}"  # it was sent, to main only
    assert hostile.requests("other") == []
    assert TOKEN not in text


@pytest.mark.anyio
async def test_server_memory_stays_bounded_over_every_flood(client, hostile):
    """After all the floods (and their retries) the server holds a sane amount of memory."""
    for fault in sorted(FLOODS):
        await _fault_then_good_call(client, hostile, fault)
    assert _children_rss("weather_mcp") < 160 * 1024 * 1024


@pytest.mark.anyio
async def test_faults_over_streamable_http(hostile):
    port = free_port()
    args = [sys.executable, "-m", "weather_mcp", "--base-url", hostile.url, "--transport", "streamable-http"]
    with running([*args, "--port", str(port)], f"http://127.0.0.1:{port}/health", ENV) as proc:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            for fault in ("trickle", "big-gzip", "huge-500", "reset", "redirect"):
                text = await _fault_then_good_call(client, hostile, fault, lambda: _rss(proc.pid))
                assert re.search(FAULTS[fault], text), f"{fault}: {text!r}"
