"""No single request can stall the server (issue 24, item 3): a generated server in discovery mode
over streamable HTTP, whose spec holds a widely copied e-mail pattern with nested quantifiers on an
argument and on an answer field (beside a `\\b` pattern, which once made its whole model use Python's
backtracking `re`) and a `uri` answer field. While client 1 sends one attack, client 2's tool call
and `GET /health` must answer within a few seconds of their own time without the attack (a baseline
measured just before, on this machine). On the old code each attack held the event loop for tens
of seconds to hours (28 s for the 12 KB query; the e-mail pattern doubles its time with each
character). Client 1's own answer must then be the error that names what was wrong."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import environment
from harness.demo.process import free_port, running
from support import HttpServer, Reply, generate

pytestmark = pytest.mark.anyio

# Widely copied (and catastrophic in a backtracking engine on "aaaa...!").
EMAIL = r"^\w+([\.-]?\w+)*@\w+([\.-]?\w+)*(\.\w{2,3})+$"
BACKTRACKS = "a" * 30 + "!"  # 27 characters already took Python's `re` 40-50 s; each one more doubles it
URI_CHARS = 12 * 1024 * 1024  # a `uri` field of 12 MiB: Python's `re` read it for about 20 s
# Seconds a probe may take beyond its baseline while an attack runs: far below the old stalls (tens of
# seconds), above what a machine loaded by other tests adds (a probe took 1.2 s over at load 15).
SLACK = 4.0


def stall_spec() -> dict[str, Any]:
    def answer(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    email_param = {"name": "email", "in": "query", "required": True, "schema": {"type": "string", "pattern": EMAIL}}
    contact = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "pattern": EMAIL},
            "word": {"type": "string", "pattern": r"^caf\b"},
            "link": {"type": "string", "format": "uri"},
        },
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Stall", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {
            "/ping": {"get": {"operationId": "ping", "responses": answer({"type": "object"})}},
            "/lookup": {
                "get": {"operationId": "lookup", "parameters": [email_param], "responses": answer({"type": "object"})}
            },
            "/contact": {
                "get": {"operationId": "contact", "responses": answer({"$ref": "#/components/schemas/Contact"})}
            },
            "/link": {"get": {"operationId": "link", "responses": answer({"$ref": "#/components/schemas/Contact"})}},
        },
        "components": {"schemas": {"Contact": contact}},
    }


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stall") / "stall-api"
    generate(stall_spec(), out, "stall-api")
    return out


@pytest.fixture(scope="module")
def upstream():
    with HttpServer() as server:
        server.routes["/ping"] = Reply(200, {"ok": True})
        server.routes["/lookup"] = Reply(200, {"found": False})
        server.routes["/contact"] = Reply(200, {"email": BACKTRACKS, "word": "caf"})
        server.routes["/link"] = Reply(200, '{"link": "' + "/" * URI_CHARS + ' "}')
        yield server


# name -> (the call client 1 makes, what its error result says)
ATTACKS: dict[str, tuple[str, dict[str, Any], str]] = {
    "backtracking argument": (
        "call_tool",
        {"name": "lookup", "arguments": {"email": BACKTRACKS}},
        "email: 'aaaa",  # refused by the pattern, naming the field
    ),
    "backtracking answer field": ("call_tool", {"name": "contact", "arguments": {}}, "email"),
    "12 MiB uri answer field": ("call_tool", {"name": "link", "arguments": {}}, "link"),
    "12 KB search query": ("search_tools", {"query": "a." * 6000}, "over the limit of 500"),
    "oversized argument": (
        "call_tool",
        {"name": "lookup", "arguments": {"email": "a" * (2 * 1024 * 1024) + "!"}},
        "over the limit of 1048576 bytes (STALL_API_MAX_ARGUMENT_BYTES)",
    ),
}


async def timed(probe: Callable[[], Any]) -> float:
    started = time.monotonic()
    await probe()
    return time.monotonic() - started


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_one_clients_attack_does_not_delay_another_client_or_health(package, upstream, attack):
    name, arguments, says = ATTACKS[attack]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "stall_api", "--transport", "streamable-http", "--port", str(port), "--discovery"]
    args += ["--base-url", upstream.url]
    with running(args, f"{base}/health", environment(package / "src")) as server:

        def fail(message: str) -> None:
            server.kill()  # a stalled server would hold the clients' goodbyes for minutes
            pytest.fail(message)

        async with (
            Client(streamable_http_client(f"{base}/mcp")) as attacker,
            Client(streamable_http_client(f"{base}/mcp")) as bystander,
            httpx.AsyncClient() as http,
        ):

            async def call() -> None:
                result = await bystander.call_tool("call_tool", {"name": "ping", "arguments": {}})
                assert not result.is_error and result.structured_content == {"ok": True}, result.content

            async def health() -> None:
                assert (await http.get(f"{base}/health")).status_code == 200

            await call()  # the first call imports the tool's module: not part of the baseline
            baseline = {probe: min([await timed(probe) for _ in range(3)]) for probe in (call, health)}
            outcome: dict[str, Any] = {}

            async def attack_once() -> None:
                outcome["result"] = await attacker.call_tool(name, arguments)

            async with anyio.create_task_group() as group:
                group.start_soon(attack_once)
                # Probes for three seconds from the attack's start: on the old code every one of them
                # falls inside the stall, which lasts tens of seconds.
                for _ in range(6):
                    await anyio.sleep(0.5)
                    for probe, usual in baseline.items():
                        limit = usual + SLACK
                        with anyio.move_on_after(limit) as scope:
                            await probe()
                        if scope.cancelled_caught:
                            fail(f"{probe.__name__} stalled past {limit:.2f}s (baseline {usual:.2f}s) by: {attack}")
                with anyio.move_on_after(30) as scope:
                    while "result" not in outcome:
                        await anyio.sleep(0.1)
                if scope.cancelled_caught:
                    fail(f"{attack}: no answer to the attacker within 30 s")
        result = outcome["result"]
        text = result.content[0].text
        assert result.is_error and says in text, text[:500]
        assert len(text) < 2000  # the error names the problem, never echoes the attack


# Every string the discovery tools take, past its limit or of the wrong type: (tool, arguments, what
# the error says). On the old code the long ones were read, looked up and echoed whole in the error
# (a 5,000-digit cursor was past what Python's int() reads).
OVER: list[tuple[str, dict[str, Any], str]] = [
    ("search_tools", {"query": "", "toolset": "t" * 300}, "`toolset` is 300 characters, over the limit of 200"),
    ("search_tools", {"query": "a", "toolset": ["untagged"]}, "`toolset` must be a string"),
    ("list_toolsets", {"toolset": "t" * 300}, "`toolset` is 300 characters, over the limit of 200"),
    ("list_toolsets", {"cursor": "9" * 5000}, "`cursor` is 5000 characters, over the limit of 20"),
    ("describe_tool", {"name": "n" * 300}, "`name` is 300 characters, over the limit of 200"),
    ("call_tool", {"name": "n" * 300, "arguments": {}}, "`name` is 300 characters, over the limit of 200"),
]


async def test_every_string_the_discovery_tools_take_is_bounded(package, upstream):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "stall_api", "--transport", "streamable-http", "--port", str(port), "--discovery"]
    args += ["--base-url", upstream.url]
    with running(args, f"{base}/health", environment(package / "src")):
        async with Client(streamable_http_client(f"{base}/mcp")) as client:
            for tool, arguments, says in OVER:
                result = await client.call_tool(tool, arguments)
                text = result.content[0].text
                assert result.is_error and says in text and len(text) < 200, (tool, text[:300])
