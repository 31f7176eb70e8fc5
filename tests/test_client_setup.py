"""The committed demo package's README, as a user copies it: every JSON snippet parses, and the
command of every stdio setup (Claude Desktop, Claude Code, Cursor, VS Code), `uvx weather-mcp` with
the snippet's environment, runs the package from a real local package index through the MCP Python
SDK client; the hosted setups' URL and headers reach the README's own hosted command."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from harness.index import package_index
from support import REPO, WEATHER_REPORT, WEATHER_TOOLS, build_wheel
from typed_mcp.plan.build import plan as build_plan
from typed_mcp.plan.curation import Curation
from typed_mcp.render.clients import client_setups
from typed_mcp.spec.load import load
from typed_mcp.spec.normalize import normalize

PACKAGE = REPO / "generated" / "weather-mcp"
README = (PACKAGE / "README.md").read_text()
TOKEN = "demo-token"  # the demo API's bearer credential
NETWORK = {
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
}
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README) if lang == language]


def json_setups() -> list[dict]:
    return [json.loads(body) for body in blocks("json")]


def claude_code(transport: str) -> list[str]:
    """The words of the README's `claude mcp add --transport TRANSPORT ...` command."""
    # A line ending in a backslash goes on on the next one, as in sh.
    commands = [shlex.split(body.replace("\\\n", " ")) for body in blocks("sh") if body.startswith("claude mcp add")]
    found = [words for words in commands if words[3:5] == ["--transport", transport]]
    assert len(found) == 1, commands
    return found[0]


def servers(setup: dict) -> dict:
    """The server entries of a client config: Claude Desktop and Cursor say mcpServers, VS Code servers."""
    return setup.get("mcpServers") or setup["servers"]


def filled(env: dict[str, str], demo_url: str, inputs: list[dict]) -> dict[str, str]:
    """The snippet's environment as a user fills it in: the API's address, the credential for each `...`,
    and what VS Code asks for each `${input:ID}` it declares."""
    ids = {item["id"] for item in inputs}
    out = {}
    for name, value in env.items():
        if name.endswith("_BASE_URL"):
            out[name] = demo_url
        elif value == "..." or (value.startswith("${input:") and value[8:-1] in ids):
            out[name] = TOKEN
        else:
            raise AssertionError(f"{name}={value!r}: neither a placeholder nor the base URL")
    return out


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> str:
    """The committed package's wheel on a local index; yields its simple API URL."""
    packages = tmp_path_factory.mktemp("packages")
    build_wheel(PACKAGE, packages)
    with package_index(packages) as url:
        yield f"{url}/simple/"


@pytest.fixture(scope="module")
def uv_env(index: str, tmp_path_factory) -> dict[str, str]:
    """What uvx needs here: the local index first (its first match wins, the dependencies come from
    PyPI), a cache of the test's own, and this Python (uv downloads none)."""
    cache = tmp_path_factory.mktemp("uv")
    # The MCP client passes a server only a few variables of its own: this machine's TLS and proxy
    # settings, which uv needs to reach PyPI, are handed on as a user's shell would.
    network = {k: v for k, v in os.environ.items() if k in NETWORK}
    return {
        **network,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "UV_INDEX": index,
        "UV_CACHE_DIR": str(cache / "cache"),
        "UV_TOOL_DIR": str(cache / "tools"),
        "UV_PYTHON": sys.executable,
        "UV_PYTHON_DOWNLOADS": "never",
    }


def test_every_json_snippet_parses_and_names_the_package():
    setups = json_setups()
    assert len(setups) == 5  # Claude Desktop, Cursor, VS Code; Cursor and VS Code hosted
    for setup in setups:
        assert list(servers(setup)) == ["weather-mcp"]
    # The console script is the package's name, so `uvx weather-mcp` runs it.
    assert (
        '\n[project.scripts]\n"weather-mcp" = "weather_mcp.__main__:main"\n' in (PACKAGE / "pyproject.toml").read_text()
    )


def test_every_table_row_of_the_readme_is_in_a_table():
    """A blank line inside a Markdown table ends it, and the rows after it render as one paragraph of
    pipes: every line of the package README that starts with `|` must belong to a table as CommonMark
    with tables (markdown-it-py) reads it."""
    from markdown_it import MarkdownIt

    text = (PACKAGE / "README.md").read_text()
    in_tables = {
        line
        for token in MarkdownIt("commonmark").enable("table").parse(text)
        if token.type == "table_open" and token.map
        for line in range(*token.map)
    }
    rows = [number for number, line in enumerate(text.splitlines()) if line.startswith("|")]
    assert rows and [n + 1 for n in rows if n not in in_tables] == []


def stdio_commands(demo_url: str) -> list[tuple[str, list[str], dict[str, str]]]:
    """(command, args, filled-in environment) of every stdio setup in the README."""
    found = []
    for setup in json_setups():
        entry = servers(setup)["weather-mcp"]
        if "command" in entry:
            found.append((entry["command"], entry["args"], filled(entry["env"], demo_url, setup.get("inputs", []))))
    words = claude_code("stdio")
    env = dict(w.split("=", 1) for flag, w in zip(words, words[1:], strict=False) if flag == "--env")
    separator = words.index("--")
    assert words[separator - 1] == "weather-mcp"  # the server's name in Claude Code
    found.append((words[separator + 1], words[separator + 2 :], filled(env, demo_url, [])))
    return found


def test_the_stdio_setups_run_uvx_from_the_index_through_a_real_client(demo_url, uv_env):
    commands = stdio_commands(demo_url)
    assert len(commands) == 4
    # All four clients start the same command with the same environment once filled in: it runs once
    # here (the setups' differences are their files' formats, checked above and below).
    assert all(c == commands[0] for c in commands), commands
    command, args, env = commands[0]
    assert (command, args) == ("uvx", ["weather-mcp"])
    assert set(env) == {"WEATHER_MCP_BASE_URL", "WEATHER_MCP_HTTP_BEARER_TOKEN"}

    version = subprocess.run(
        [command, *args, "--version"], env={**os.environ, **uv_env}, capture_output=True, text=True, timeout=600
    )
    assert version.returncode == 0, version.stderr[-2000:]
    # From the local index (a package of the same name elsewhere would not carry this spec's digest).
    about = (PACKAGE / "src" / "weather_mcp" / "_about.py").read_text()
    digest = re.search(r"SPEC_SHA256 = '([0-9a-f]{64})'", about).group(1)
    assert version.stdout.startswith(f"weather-mcp 1.2.0 (API 1.2.0; spec sha256 {digest}")

    async def session():
        params = StdioServerParameters(command=command, args=args, env={**uv_env, **env})
        async with Client(params) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            return listed, await client.call_tool("create_report", {"body": WEATHER_REPORT})

    listed, result = anyio.run(session)
    assert listed == list(WEATHER_TOOLS)
    # create_report needs the bearer token: the variable the snippet names is the one the package reads.
    assert not result.is_error, result.content
    assert httpx.get(f"{demo_url}/_debug/requests").json()[-1]["authorization"] == f"Bearer {TOKEN}"


def test_the_hosted_setups_reach_the_readmes_hosted_command(demo_url, uv_env):
    words = claude_code("http")
    url, header = words[6], words[words.index("--header") + 1]
    hosted = [servers(s)["weather-mcp"] for s in json_setups() if "url" in servers(s)["weather-mcp"]]
    assert len(hosted) == 2 and all(h["url"] == url for h in hosted)
    assert all(h["headers"] == dict([header.split(": ", 1)]) for h in hosted)
    assert [h.get("type") for h in hosted] == [None, "http"]  # Cursor infers it, VS Code wants it

    command = re.search(r"`(uvx weather-mcp --transport streamable-http [^`]*)`", README).group(1)
    port = free_port()
    args = [*shlex.split(command), "--port", str(port)]
    env = {**uv_env, "WEATHER_MCP_BASE_URL": demo_url}
    headers = {name: value.replace("...", TOKEN) for name, value in hosted[0]["headers"].items()}

    async def call():
        async with httpx2.AsyncClient(headers=headers) as http:
            local = f"http://127.0.0.1:{port}{urlsplit(url).path}"
            async with Client(streamable_http_client(local, http_client=http)) as client:
                return await client.call_tool("create_report", {"body": WEATHER_REPORT})

    with running(args, f"http://127.0.0.1:{port}/health", env):
        result = anyio.run(call)
    # Forwarded mode: the client's header is the upstream credential.
    assert not result.is_error, result.content
    assert httpx.get(f"{demo_url}/_debug/requests").json()[-1]["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    ("server", "shown"),
    [
        ("https://api.weather.example/v1", "https://api.weather.example/v1"),
        ("https://x.example/```\n# injected", "https://api.example.com"),  # could end the code fence
        ("javascript:alert(1)", "https://api.example.com"),
    ],
)
def test_the_spec_server_url_is_shown_only_when_plain(server: str, shown: str):
    doc = normalize(load(str(REPO / "specs" / "weather-api.json")))
    api = build_plan(doc, package_name="weather-mcp", module="weather_mcp", spec_url=None, curation=Curation(None, []))
    api.default_base_url = server
    setups = client_setups(api)
    assert setups.env[0] == ("WEATHER_MCP_BASE_URL", shown, False)
    assert json.loads(setups.claude_desktop)["mcpServers"]["weather-mcp"]["env"]["WEATHER_MCP_BASE_URL"] == shown
    assert f"--env WEATHER_MCP_BASE_URL={shown}" in setups.claude_code
