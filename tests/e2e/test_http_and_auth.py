"""Hosted deployments and resilient calls: streamable HTTP (stateless, health, forwarded
Authorization), OAuth2 client credentials, retries with backoff, against real local servers."""

from __future__ import annotations

import base64
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from support import WEATHER_REPORT as REPORT
from support import WEATHER_TOOLS, HttpServer, Reply, generate, import_server

pytestmark = pytest.mark.anyio


def http_server(package: Path, base_url: str, *flags: str):
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "weather_mcp",
        "--base-url",
        base_url,
        "--transport",
        "streamable-http",
        "--port",
        str(port),
        *flags,
    ]
    return port, running(args, f"http://127.0.0.1:{port}/health", {"PYTHONPATH": str(package / "src")})


async def test_stateless_http_forwards_the_clients_authorization(weather_package, demo_url):
    port, server = http_server(weather_package, demo_url, "--stateless", "--forward-authorization")
    with server:
        health = httpx.get(f"http://127.0.0.1:{port}/health").json()
        assert health == {"status": "ok", "package": "weather-mcp", "version": "1.2.0", "tools": len(WEATHER_TOOLS)}
        for token, ok in (("demo-token", True), ("someone-elses-token", False)):
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers) as http:
                async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                    result = await client.call_tool("create_report", {"body": REPORT})
            assert result.is_error is (not ok), result.content
            seen = httpx.get(f"{demo_url}/_debug/requests").json()[-1]
            assert seen["authorization"] == f"Bearer {token}"  # the caller's own credential went upstream
            if not ok:
                assert "HTTP 401" in result.content[0].text and token not in result.content[0].text


async def test_without_forwarding_the_clients_header_is_not_sent(weather_package, demo_url):
    port, server = http_server(weather_package, demo_url)
    with server:
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer demo-token"}) as http:
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                result = await client.call_tool("create_report", {"body": REPORT})
    assert result.is_error and "missing credentials: set WEATHER_MCP_HTTP_BEARER_TOKEN" in result.content[0].text


SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Resilient", "version": "1"},
    "components": {
        "securitySchemes": {
            "machine": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {}}}}
        }
    },
    "paths": {
        "/item": {
            "get": {
                "operationId": "get_item",
                "security": [{"machine": []}],
                "responses": {
                    "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
                },
            },
            "post": {
                "operationId": "post_item",
                "responses": {
                    "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}
                },
            },
        }
    },
}
PREFIX = "RESILIENT"


@pytest.fixture(scope="module")
def resilient(tmp_path_factory):
    out = tmp_path_factory.mktemp("resilient") / "resilient"
    generate(SPEC, out, "resilient")

    def server():
        built = import_server(out, "resilient")
        importlib.import_module(
            "resilient.upstream"
        ).api._tokens.clear()  # one process runs every test: start without a token
        return built

    return server


@pytest.fixture
def upstream(monkeypatch):
    with HttpServer() as server:
        monkeypatch.setenv(f"{PREFIX}_BASE_URL", server.url)
        monkeypatch.setenv(f"{PREFIX}_MACHINE_CLIENT_ID", "client-1")
        monkeypatch.setenv(f"{PREFIX}_MACHINE_CLIENT_SECRET", "s3cret-client")
        yield server


def token_endpoint(server: HttpServer, lifetime: int):
    issued = []

    def issue(seen):
        issued.append(seen)
        return Reply(200, {"access_token": f"token-{len(issued)}", "token_type": "bearer", "expires_in": lifetime})

    server.routes["/oauth/token"] = issue
    return issued


async def test_oauth2_client_credentials_token_is_fetched_cached_and_renewed(resilient, upstream):
    issued = token_endpoint(upstream, lifetime=31)  # renewed 30 s early: valid for one second here
    upstream.routes["/item"] = Reply(200, {"ok": True})
    async with Client(resilient()) as client:
        for _ in range(3):
            assert not (await client.call_tool("get_item", {})).is_error
        assert len(issued) == 1
        request = issued[0]
        assert request.method == "POST" and request.body == b"grant_type=client_credentials"
        assert request.headers["authorization"] == "Basic " + base64.b64encode(b"client-1:s3cret-client").decode()
        item_requests = [s for s in upstream.seen if s.raw_path == "/item"]
        assert {s.headers["authorization"] for s in item_requests} == {"Bearer token-1"}
        time.sleep(1.2)
        result = await client.call_tool("get_item", {})
        assert not result.is_error and len(issued) == 2
        assert upstream.seen[-1].headers["authorization"] == "Bearer token-2"
        assert "s3cret-client" not in result.model_dump_json()


async def test_oauth2_failures_are_clear(resilient, upstream, monkeypatch):
    upstream.routes["/oauth/token"] = Reply(401, {"error": "invalid_client"})
    async with Client(resilient()) as client:
        result = await client.call_tool("get_item", {})
        assert result.is_error
        assert (
            result.content[0].text == "the OAuth2 token endpoint for machine answered HTTP 401 without an access_token"
        )
        # Without a credential the call goes out without one; the API's 401 names what to set.
        monkeypatch.delenv(f"{PREFIX}_MACHINE_CLIENT_SECRET")
        upstream.routes["/item"] = Reply(401, {"detail": "who are you"})
        result = await client.call_tool("get_item", {})
    assert "authorization" not in upstream.seen[-1].headers
    assert result.is_error and result.content[0].text.startswith("GET /item failed: HTTP 401")
    assert (
        "sent without credentials; missing credentials: set RESILIENT_MACHINE_TOKEN "
        "(or RESILIENT_MACHINE_CLIENT_ID + RESILIENT_MACHINE_CLIENT_SECRET)" in result.content[0].text
    )


def flaky(statuses: list[int], retry_after: str | None = None):
    calls = []

    def reply(seen):
        calls.append(time.monotonic())
        status = statuses[min(len(calls) - 1, len(statuses) - 1)]
        headers = {"retry-after": retry_after} if retry_after and status != 200 else {}
        return Reply(status, {"ok": status == 200}, headers=headers)

    return calls, reply


async def test_idempotent_calls_retry_with_backoff(resilient, upstream, monkeypatch):
    token_endpoint(upstream, 3600)
    calls, upstream.routes["/item"] = flaky([503, 502, 200])
    async with Client(resilient()) as client:
        result = await client.call_tool("get_item", {})
    assert not result.is_error and len(calls) == 3
    assert calls[1] - calls[0] >= 0.45 and calls[2] - calls[1] >= 0.95  # 0.5 s, then 1 s


async def test_retry_after_is_honoured_and_bounded(resilient, upstream, monkeypatch):
    token_endpoint(upstream, 3600)
    calls, upstream.routes["/item"] = flaky([429, 200], retry_after="2")
    async with Client(resilient()) as client:
        assert not (await client.call_tool("get_item", {})).is_error
        assert len(calls) == 2 and calls[1] - calls[0] >= 1.9
        monkeypatch.setenv(f"{PREFIX}_RETRY_MAX_SECONDS", "1")
        calls, upstream.routes["/item"] = flaky([429, 200], retry_after="30")
        started = time.monotonic()
        result = await client.call_tool("get_item", {})
    assert result.is_error and "HTTP 429" in result.content[0].text
    assert len(calls) == 1 and time.monotonic() - started < 20  # honouring Retry-After would wait 30 s


async def test_non_idempotent_calls_are_not_retried(resilient, upstream):
    calls, upstream.routes["/item"] = flaky([503, 200])
    async with Client(resilient()) as client:
        result = await client.call_tool("post_item", {})
    assert result.is_error and "HTTP 503" in result.content[0].text and len(calls) == 1


async def test_connection_errors_are_retried_for_idempotent_calls(resilient, monkeypatch):
    port = free_port()
    monkeypatch.setenv(f"{PREFIX}_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv(f"{PREFIX}_MACHINE_TOKEN", "direct-token")
    started = time.monotonic()
    async with Client(resilient()) as client:
        result = await client.call_tool("get_item", {})
    assert (
        result.is_error
        and result.content[0].text == f"could not connect to the upstream API at http://127.0.0.1:{port}"
    )
    assert time.monotonic() - started >= 1.4  # two retries: 0.5 s + 1 s


async def test_headers_variable_is_sent_under_the_calls_own(resilient, upstream, monkeypatch, caplog):
    """`<PREFIX>_HEADERS` lines go with every request; a header the call sets itself wins, and the
    values never reach a log or a result."""
    upstream.routes["/item"] = Reply(200, {"id": 1})
    token_endpoint(upstream, lifetime=3600)
    monkeypatch.setenv(f"{PREFIX}_HEADERS", "X-Tenant: acme\n\nX-Secret-Key:  k-42-secret \n")
    async with Client(resilient()) as client:
        result = await client.call_tool("get_item", {})
    assert upstream.seen[-1].raw_path == "/item" and upstream.seen[-1].headers["x-tenant"] == "acme"
    assert upstream.seen[-1].headers["x-secret-key"] == "k-42-secret"
    assert "k-42-secret" not in result.model_dump_json() and "k-42-secret" not in caplog.text


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("Host: admin.internal", "line 1: Host is set by the HTTP client"),
        ("X-Ok: 1\nTransfer-Encoding: chunked", "line 2: Transfer-Encoding is set by the HTTP client"),
        ("Proxy-Authorization: Basic eA==", "line 1: Proxy-Authorization is set by the HTTP client"),
        ("just a line", "line 1: expected 'Name: value'"),
        ("Bad Name: x", "line 1: expected 'Name: value'"),
        ("X-A: a\x7fb", "line 1: a header value may not hold control characters"),
    ],
)
def test_a_bad_headers_variable_stops_the_server_at_start(weather_package, value, problem):
    proc = subprocess.run(
        [sys.executable, "-m", "weather_mcp"],
        env={**os.environ, "PYTHONPATH": str(weather_package / "src"), "WEATHER_MCP_HEADERS": value},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.strip().startswith(
        f"weather_mcp: error: WEATHER_MCP_HEADERS {problem}"
    ), proc.stderr
