"""A server loads the runtime modules of the mode it serves, no others (issue 26): over stdio in full
mode nothing of discovery, search, hosting, OAuth or table views; discovery mode its search; a hosted
server its hosting, and the token introspection only with `--auth oauth`. Measured on the committed
demo package in a process of its own, by the modules it holds once it has answered (over stdio, and
served over streamable HTTP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from support import DEMO

pytestmark = pytest.mark.anyio

# What a server of each mode must not load (besides each other's).
LAZY = {"discovery", "search", "vocabulary", "hosting", "introspection", "views", "streamable", "deadlines"}

# Runs the package's own command line, then writes the runtime modules it loaded to $LOADED at exit
# (when the client closes stdin, the server returns and the process ends normally; an HTTP server ends
# on SIGTERM, which uvicorn passes on once it has shut down: made a normal exit here).
LAUNCHER = """
import atexit, json, os, runpy, signal, sys

def report():
    loaded = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("weather_mcp._runtime."))
    with open(os.environ["LOADED"], "w") as out:
        json.dump(loaded, out)

atexit.register(report)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
sys.argv = ["weather_mcp", *json.loads(os.environ["FLAGS"])]
runpy.run_module("weather_mcp", run_name="__main__")
"""


def _env(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("WEATHER_MCP_")}
    return {**clean, "PYTHONPATH": str(DEMO / "src"), **extra}


async def _served(tmp_path: Path, base_url: str, flags: list[str], tool: str, arguments: dict) -> set[str]:
    launcher, loaded = tmp_path / "launch.py", tmp_path / "loaded.json"
    launcher.write_text(LAUNCHER)
    env = _env(LOADED=str(loaded), FLAGS=json.dumps(flags), WEATHER_MCP_BASE_URL=base_url)
    params = StdioServerParameters(command=sys.executable, args=[str(launcher)], env=env)
    with anyio.fail_after(120):  # a hang, not a speed
        async with Client(params) as client:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content
    for _ in range(200):  # the process ends after the client closed its stdin
        if loaded.is_file():
            break
        await anyio.sleep(0.1)
    return set(json.loads(loaded.read_text()))


async def test_full_mode_over_stdio_loads_no_module_of_another_mode(tmp_path, demo_url):
    loaded = await _served(tmp_path, demo_url, [], "get_weather", {"city": "Paris"})
    assert {"server", "http", "registry", "wire"} <= loaded  # it did serve the call, over aiohttp's wire
    assert loaded & LAZY == set(), loaded & LAZY


async def test_discovery_mode_loads_its_search_and_nothing_of_hosting(tmp_path, demo_url):
    loaded = await _served(tmp_path, demo_url, ["--discovery"], "search_tools", {"query": "weather"})
    assert {"discovery", "search", "vocabulary"} <= loaded
    assert "wire" not in loaded  # a search sends nothing upstream: aiohttp is not imported
    assert loaded & (LAZY - {"discovery", "search", "vocabulary"}) == set(), loaded


async def test_a_server_hosted_over_http_loads_its_hosting_and_nothing_of_discovery_oauth_or_views(tmp_path, demo_url):
    """Served by its own command line over streamable HTTP (no auth mode: loopback only), one call."""
    launcher, loaded, port = tmp_path / "launch.py", tmp_path / "loaded.json", free_port()
    launcher.write_text(LAUNCHER)
    flags = ["--transport", "streamable-http", "--port", str(port)]
    env = _env(LOADED=str(loaded), FLAGS=json.dumps(flags), WEATHER_MCP_BASE_URL=demo_url)
    with running([sys.executable, str(launcher)], f"http://127.0.0.1:{port}/health", env, timeout=120):
        with anyio.fail_after(120):  # a hang, not a speed
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as client:
                result = await client.call_tool("get_weather", {"city": "Paris"})
                assert not result.is_error, result.content
    served = set(json.loads(loaded.read_text()))
    assert {"server", "http", "hosting", "streamable", "deadlines", "wire"} <= served, served
    assert served & {"discovery", "search", "vocabulary", "introspection", "views"} == set(), served


def _asgi_modules(**env: str) -> set[str]:
    probe = (
        "import json, sys\nfrom weather_mcp.asgi import create_app\ncreate_app()\n"
        "print(json.dumps(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('weather_mcp._runtime.'))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=_env(**env), timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_a_hosted_server_loads_its_hosting_and_oauth_only_with_its_mode():
    forwarded = _asgi_modules(WEATHER_MCP_AUTH="forwarded")
    assert {"hosting", "streamable"} <= forwarded
    assert forwarded & {"introspection", "discovery", "search", "views"} == set(), forwarded
    oauth = _asgi_modules(
        WEATHER_MCP_AUTH="oauth",
        WEATHER_MCP_OAUTH_RESOURCE="http://127.0.0.1:8000",
        WEATHER_MCP_OAUTH_ISSUER="http://127.0.0.1:9000",
        WEATHER_MCP_OAUTH_INTROSPECTION_URL="http://127.0.0.1:9000/introspect",
        WEATHER_MCP_OAUTH_INTROSPECTION_CLIENT="weather",
        WEATHER_MCP_OAUTH_INTROSPECTION_SECRET="secret",
    )
    assert {"hosting", "streamable", "introspection"} <= oauth
