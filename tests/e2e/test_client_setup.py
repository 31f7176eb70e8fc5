"""The committed demo package's README, as a user copies it: every JSON snippet parses, every one-click
install link (Cursor's deeplink, VS Code's link and `code --add-mcp`) holds exactly the JSON beside it,
and the command of every stdio setup (Claude Desktop, Claude Code and its project `.mcp.json`, Cursor,
VS Code), `uvx weather-mcp` with the snippet's environment, runs the package from a real local package
index through the MCP Python SDK client; the hosted setups' URL and headers reach the README's own
hosted command."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from harness.index import package_index
from support import REPO, WEATHER_REPORT, WEATHER_TOOLS, build_wheel, package_stdio
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
    """The server entries of a client config: Claude Desktop, Claude Code and Cursor say mcpServers, VS
    Code servers; `code --add-mcp`'s JSON is one entry with its name."""
    if "name" in setup:
        return {setup["name"]: {k: v for k, v in setup.items() if k not in ("name", "inputs")}}
    return setup.get("mcpServers") or setup["servers"]


def filled(env: dict[str, str], demo_url: str, inputs: list[dict]) -> dict[str, str]:
    """The snippet's environment as a user fills it in: the API's address, the credential for each `...`,
    what VS Code asks for each `${input:ID}` it declares, and what Claude Code expands each
    `${NAME:-default}` of a project's .mcp.json to from the user's environment (which has both)."""
    ids = {item["id"] for item in inputs}
    user = {"WEATHER_MCP_BASE_URL": demo_url, "WEATHER_MCP_HTTP_BEARER_TOKEN": TOKEN}
    out = {}
    for name, value in env.items():
        expansion = re.fullmatch(r"\$\{([A-Z0-9_]+)(?::-([^}]*))?\}", value)
        if expansion and expansion.group(1) == name:
            out[name] = user.get(name, expansion.group(2) or "")
        elif name.endswith("_BASE_URL"):
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
    # Claude Desktop, Claude Code's .mcp.json, Cursor, VS Code and its install JSON; Cursor and VS Code hosted
    assert len(setups) == 7
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


def link_text(label: str) -> str:
    """The URL of the README's Markdown link `[label](URL)`."""
    (url,) = re.findall(rf"\[{re.escape(label)}\]\(([^)\s]+)\)", README)
    return url


def json_around(marker: str, *, after: bool = False) -> dict:
    """The JSON snippet right before (or after) `marker` in the README."""
    at = README.index(marker)
    fences = [(m.start(), m.group(2)) for m in FENCE.finditer(README) if m.group(1) == "json"]
    if after:
        return json.loads(next(body for start, body in fences if start > at))
    return json.loads([body for start, body in fences if start < at][-1])


def test_each_install_link_holds_the_json_beside_it():
    """Decoded as each client decodes it, every one-click link is exactly the JSON the README shows
    beside it: Cursor's deeplink (and its web page) the `.cursor/mcp.json` entry in base64; VS Code's
    link (and its redirect page) and `code --add-mcp` the JSON shown, which is the `.vscode/mcp.json`
    entry with its name and inputs."""
    (cursor_link,) = [body.strip() for lang, body in FENCE.findall(README) if body.startswith("cursor://")]
    cursor_json = json_around(cursor_link)
    assert cursor_json == json_around("Cursor, `.cursor/mcp.json`", after=True)
    cursor_web = link_text("Add weather-mcp to Cursor")
    for link, base in (
        (cursor_link, "cursor://anysphere.cursor-deeplink/mcp/install"),
        (cursor_web, "https://cursor.com/en/install-mcp"),
    ):
        parts = urlsplit(link)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == base
        query = parse_qs(parts.query, strict_parsing=True)
        (name,), (config,) = query["name"], query["config"]
        assert {name: json.loads(base64.b64decode(config, validate=True))} == cursor_json["mcpServers"]

    (vscode_link,) = [body.strip() for lang, body in FENCE.findall(README) if body.startswith("vscode:")]
    add = json_around(vscode_link)
    assert vscode_link.startswith("vscode:mcp/install?")
    assert json.loads(unquote(vscode_link.removeprefix("vscode:mcp/install?"))) == add
    vscode_web = link_text("Install weather-mcp in VS Code")
    assert vscode_web.startswith("https://insiders.vscode.dev/redirect?")
    assert parse_qs(urlsplit(vscode_web).query, strict_parsing=True) == {"url": [vscode_link]}
    assert add == json_around(vscode_web, after=True)
    (command,) = [shlex.split(body) for lang, body in FENCE.findall(README) if body.startswith("code --add-mcp")]
    assert command[:2] == ["code", "--add-mcp"] and len(command) == 3 and json.loads(command[2]) == add
    assert json_around("code --add-mcp") == add
    vscode = json_around("VS Code, `.vscode/mcp.json`", after=True)
    assert {add["name"]: {k: v for k, v in add.items() if k not in ("name", "inputs")}} == vscode["servers"]
    assert add["inputs"] == vscode["inputs"]


def test_the_project_mcp_json_holds_no_secret_and_expands_every_variable():
    """Claude Code's project `.mcp.json` can be committed: each variable is `${NAME:-}`, filled from the
    environment Claude Code runs in, and empty (the package's own default, no credential) when unset."""
    project = json_around("Cursor, `.cursor/mcp.json`")
    entry = project["mcpServers"]["weather-mcp"]
    assert (entry["type"], entry["command"], entry["args"]) == ("stdio", "uvx", ["weather-mcp"])
    assert entry["env"] == {
        name: f"${{{name}:-}}" for name in ("WEATHER_MCP_BASE_URL", "WEATHER_MCP_HTTP_BEARER_TOKEN")
    }


def claude_code_expanded(value: str, environ: dict[str, str]) -> str:
    """`value` as Claude Code expands a `.mcp.json` value: `${VAR}` and `${VAR:-default}` from the
    environment it runs in."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: environ.get(m[1]) or m[2] or "", value)


def test_the_project_mcp_json_with_a_variable_unset_runs_as_if_it_were_not_there(demo_url):
    """What Claude Code starts from the committed `.mcp.json` in a shell that sets the base URL but no
    token: the token is an empty string, which the package takes as no credential (never a `Bearer`
    header with nothing after it), and the base URL is the one the shell set."""
    entry = json_around("Cursor, `.cursor/mcp.json`")["mcpServers"]["weather-mcp"]
    shell = {"WEATHER_MCP_BASE_URL": demo_url}
    env = {name: claude_code_expanded(value, shell) for name, value in entry["env"].items()}
    assert env == {"WEATHER_MCP_BASE_URL": demo_url, "WEATHER_MCP_HTTP_BEARER_TOKEN": ""}
    params = package_stdio(PACKAGE, "weather_mcp")
    params.env = {**(params.env or {}), **env}

    async def calls():
        async with Client(params) as client:
            read = await client.call_tool("get_weather", {"city": "Paris"})
            return read, await client.call_tool("create_report", {"body": WEATHER_REPORT})

    read, write = anyio.run(calls)
    assert not read.is_error, read.content
    assert write.is_error  # the demo refuses a report without the station's token
    # Both calls reached the shell's base URL, and the write went out without a credential. The demo
    # keeps its last 50 requests, which a shared demo has filled: read the newest two.
    sent = httpx.get(f"{demo_url}/_debug/requests").json()[-2:]
    assert [(r["method"], r["raw_path"], r["authorization"]) for r in sent] == [
        ("GET", "/v1/weather/Paris", None),
        ("POST", "/v1/reports", None),
    ], sent


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
    assert len(commands) == 6
    # All six setups start the same command with the same environment once filled in: it runs once
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
    digest = re.search(r'SPEC_SHA256 = "([0-9a-f]{64})"', about).group(1)
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
    api = dataclasses.replace(api, default_base_url=server)  # the plan is frozen: a new one, with that URL
    setups = client_setups(api)
    assert setups.env[0] == ("WEATHER_MCP_BASE_URL", shown, False)
    assert json.loads(setups.claude_desktop)["mcpServers"]["weather-mcp"]["env"]["WEATHER_MCP_BASE_URL"] == shown
    assert f"--env WEATHER_MCP_BASE_URL={shown}" in setups.claude_code
