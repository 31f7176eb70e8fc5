"""Hosted mode that lets no one in: the committed demo package (generated/weather-mcp) served over
streamable HTTP as an OAuth 2.1 resource server against a real authorization server process
(`harness.oauth_server`, authlib: token issuance and RFC 7662 introspection), in forwarded mode, on
a non-loopback address, and behind Host/Origin checks; called with the MCP Python SDK client, the
TypeScript SDK client and raw HTTP where status codes and headers are the point."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import environment
from harness.demo.process import free_port, running
from harness.node_tools import NodeToolsError, run_ts_client
from support import INITIALIZE, MCP_HEADERS, REPO, WEATHER_TOOLS
from support import WEATHER_REPORT as REPORT

pytestmark = pytest.mark.anyio

PACKAGE = REPO / "generated" / "weather-mcp"
OPERATOR_TOKEN = "demo-token"  # the upstream credential in the server's environment (the demo API accepts it)
SCOPE = "mcp:tools"


def server_args(port: int, *flags: str, base_url: str) -> list[str]:
    args = [sys.executable, "-m", "weather_mcp", "--base-url", base_url, "--transport", "streamable-http"]
    return [*args, "--port", str(port), *flags]


def serve(port: int, *flags: str, base_url: str, env: dict[str, str] | None = None):
    env = {**environment(PACKAGE / "src"), "WEATHER_MCP_HTTP_BEARER_TOKEN": OPERATOR_TOKEN, **(env or {})}
    return running(server_args(port, *flags, base_url=base_url), f"http://127.0.0.1:{port}/health", env)


@pytest.fixture(scope="module")
def issuer():
    """The authorization server, a real process on 127.0.0.1."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "harness.oauth_server", "--port", str(port)]
    with running(args, f"{url}/.well-known/oauth-authorization-server", environment()):
        yield url


@pytest.fixture(scope="module")
def oauth_server(issuer, demo_url):
    """The demo server as a resource server on 127.0.0.1; yields its MCP endpoint (= its resource URL)."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    flags = ["--auth", "oauth", "--oauth-resource", resource, "--oauth-issuer", issuer]
    flags += ["--oauth-introspection-url", f"{issuer}/introspect", "--oauth-introspection-client", "mcp-server"]
    flags += ["--oauth-scopes", SCOPE]
    with serve(port, *flags, base_url=demo_url, env={"WEATHER_MCP_OAUTH_INTROSPECTION_SECRET": "introspection-secret"}):
        yield resource


def token(issuer: str, resource: str, scope: str = SCOPE, client: tuple[str, str] = ("agent", "agent-secret")) -> str:
    """An access token from the authorization server (client credentials, RFC 8707 `resource`)."""
    data = {"grant_type": "client_credentials", "scope": scope, "resource": resource}
    response = httpx.post(f"{issuer}/token", data=data, auth=client)
    assert response.status_code == 200, response.text
    return response.json()["access_token"]


def upstream_log(demo_url: str) -> list[dict]:
    return httpx.get(f"{demo_url}/_debug/requests").json()


async def call(url: str, headers: dict[str, str], name: str, arguments: dict):
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            return [tool.name for tool in listed.tools], await client.call_tool(name, arguments)


# -- --auth oauth ------------------------------------------------------------------------------------


async def test_oauth_valid_token_calls_work_with_the_servers_own_upstream_credential(issuer, oauth_server, demo_url):
    access = token(issuer, oauth_server)
    names, result = await call(oauth_server, {"Authorization": f"Bearer {access}"}, "create_report", {"body": REPORT})
    assert names == list(WEATHER_TOOLS)
    assert not result.is_error, result.content
    seen = upstream_log(demo_url)[-1]
    # The upstream got the operator's credential from the server's environment, never the client's token.
    assert seen["authorization"] == f"Bearer {OPERATOR_TOKEN}"
    assert access not in str(upstream_log(demo_url))


async def test_oauth_typescript_client_with_a_token_lists_and_calls(issuer, oauth_server):
    access = token(issuer, oauth_server)
    calls = [{"name": "get_temperature", "arguments": {"city": "paris"}}]
    out = run_ts_client(None, url=oauth_server, calls=calls, headers={"Authorization": f"Bearer {access}"})
    assert out["tools"] == len(WEATHER_TOOLS)
    (result,) = out["results"]
    assert result["ok"] and not result["isError"], result  # AJV checked structuredContent too
    with pytest.raises(NodeToolsError, match="invalid_token"):  # and without one it cannot even connect
        run_ts_client(None, url=oauth_server, list_only=True)


async def test_oauth_no_token_is_401_naming_the_metadata_document(issuer, oauth_server):
    response = httpx.post(oauth_server, json=INITIALIZE, headers=MCP_HEADERS)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    port = oauth_server.split(":")[2].split("/")[0]
    metadata_url = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"  # RFC 9728 section 3.1
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata_url}"' in challenge
    metadata = httpx.get(metadata_url).json()
    assert metadata["resource"] == oauth_server
    assert [url.rstrip("/") for url in metadata["authorization_servers"]] == [issuer]
    assert metadata["scopes_supported"] == [SCOPE]
    # The authorization server it names is the one that issues the tokens.
    assert httpx.get(f"{issuer}/.well-known/oauth-authorization-server").json()["issuer"] == issuer


@pytest.mark.parametrize(
    "case, status, error",
    [
        ("valid", 200, None),  # the control: the same raw request with a good token gets in
        ("expired", 401, "invalid_token"),
        ("wrong audience", 401, "invalid_token"),
        ("missing scope", 403, "insufficient_scope"),
        ("unknown token", 401, "invalid_token"),
    ],
)
async def test_oauth_refuses_bad_tokens(issuer, oauth_server, demo_url, case, status, error):
    if case == "expired":
        access = token(issuer, oauth_server, client=("agent-short", "short-secret"))  # lives 1 second
        time.sleep(1.5)
    elif case == "wrong audience":
        access = token(issuer, "http://127.0.0.1:1/another-server/mcp")
    elif case == "missing scope":
        access = token(issuer, oauth_server, scope="profile")
    elif case == "unknown token":
        access = "not-a-token-of-this-issuer"
    else:
        access = token(issuer, oauth_server)
    before = len(upstream_log(demo_url))
    headers = {**MCP_HEADERS, "authorization": f"Bearer {access}"}
    response = httpx.post(oauth_server, json=INITIALIZE, headers=headers)
    assert response.status_code == status, response.text
    if error:
        assert f'error="{error}"' in response.headers["www-authenticate"]
        assert "resource_metadata=" in response.headers["www-authenticate"]
    assert len(upstream_log(demo_url)) == before  # nothing reached the upstream


async def test_oauth_token_does_not_open_a_rebinding_request(issuer, oauth_server):
    headers = {**MCP_HEADERS, "authorization": f"Bearer {token(issuer, oauth_server)}"}
    assert httpx.post(oauth_server, json=INITIALIZE, headers={**headers, "host": "evil.example"}).status_code == 421
    evil = {**headers, "origin": "http://evil.example"}
    assert httpx.post(oauth_server, json=INITIALIZE, headers=evil).status_code == 403


# -- --auth forwarded, non-loopback, Host/Origin -------------------------------------------------------


@pytest.fixture(scope="module")
def forwarded_public(demo_url):
    """Forwarded mode bound to every address (allowed: it has an auth mode), one public host and one
    browser origin named; the operator's credential sits in its environment and must never be used."""
    port = free_port()
    flags = ["--auth", "forwarded", "--host", "0.0.0.0", "--stateless"]
    flags += ["--allowed-hosts", "mcp.example.com", "--allowed-origins", "https://app.example.com"]
    with serve(port, *flags, base_url=demo_url):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("client_token", ["demo-token", None])
async def test_forwarded_sends_the_clients_credential_or_none(forwarded_public, demo_url, client_token):
    headers = {"Authorization": f"Bearer {client_token}"} if client_token else {}
    _, result = await call(forwarded_public, headers, "create_report", {"body": REPORT})
    seen = upstream_log(demo_url)[-1]
    assert seen["authorization"] == (f"Bearer {client_token}" if client_token else None)
    assert result.is_error is (client_token is None)  # without a credential the upstream says 401
    if client_token is None:
        assert "HTTP 401" in result.content[0].text


async def test_forwarded_mode_from_the_environment(demo_url):
    port = free_port()
    env = {"WEATHER_MCP_AUTH": "forwarded"}
    with serve(port, base_url=demo_url, env=env):
        _, result = await call(f"http://127.0.0.1:{port}/mcp", {}, "create_report", {"body": REPORT})
    assert upstream_log(demo_url)[-1]["authorization"] is None  # not the operator's env credential
    assert result.is_error and "HTTP 401" in result.content[0].text


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"host": "evil.example"}, 421),  # DNS rebinding: a page of evil.example resolved to this address
        ({"host": "evil.example:8000"}, 421),
        ({"origin": "http://evil.example"}, 403),
        ({"host": "mcp.example.com"}, 200),  # the named public host
        ({"host": "mcp.example.com:443", "origin": "https://app.example.com"}, 200),  # and the named origin
        ({"origin": "http://127.0.0.1:9999"}, 200),  # loopback stays allowed
    ],
)
async def test_host_and_origin_are_checked_with_an_allow_list(forwarded_public, headers, status):
    response = httpx.post(forwarded_public, json=INITIALIZE, headers={**MCP_HEADERS, **headers})
    assert response.status_code == status, response.text


@pytest.mark.parametrize("host", ["0.0.0.0", "mcp.example.com"])
def test_non_loopback_bind_without_an_auth_mode_exits_with_one_line(host):
    args = server_args(free_port(), "--host", host, base_url="http://127.0.0.1:9")
    proc = subprocess.run(args, env=environment(PACKAGE / "src"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert f"--host {host} is not a loopback address" in line
    assert "--auth oauth" in line and "--auth forwarded" in line and "--insecure-no-auth" in line


def test_insecure_no_auth_lets_a_non_loopback_bind_start(demo_url):
    port = free_port()
    with serve(port, "--host", "0.0.0.0", "--insecure-no-auth", base_url=demo_url) as proc:
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["status"] == "ok"
        assert proc.poll() is None


def test_only_loopback_addresses_count_as_loopback():
    from typed_mcp.runtime import hosting  # the runtime every package carries

    is_loopback_host = hosting.is_loopback_host

    loopback = ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost"]
    other = ["0.0.0.0", "::", "", "192.0.2.10", "10.0.0.1", "localhost.evil.example", "host"]
    assert [is_loopback_host(h) for h in loopback] == [True] * len(loopback)
    assert [is_loopback_host(h) for h in other] == [False] * len(other)
