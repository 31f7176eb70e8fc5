"""What a server builds once is frozen out of the cyclic collector's sight (`runtime/heap.py`): the
ASGI app's start-up, and each tool's module, models and argument model when the tool is first used.
Under 400 calls a second a full collection walking them paused the demo server 45-67 ms every few
seconds (bench/LOAD.md); frozen, 2.5-3.2 ms. Run in a child process: freezing is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness import environment
from support import REPO

PROBE = """
import gc, json
from weather_mcp.asgi import create_app
before = gc.get_freeze_count()
create_app()
started = gc.get_freeze_count()
from weather_mcp.server import build_server
catalog = build_server().typed_mcp
catalog.register("get_weather")
registered = gc.get_freeze_count()
catalog.register("get_weather")  # already there: nothing new to freeze
print(json.dumps([before, started, registered, gc.get_freeze_count()]))
"""


@pytest.mark.slow  # a child process
def test_start_up_and_a_tools_first_use_are_frozen():
    env = {**environment(REPO / "generated" / "weather-mcp" / "src"), "WEATHER_MCP_BASE_URL": "http://127.0.0.1:9"}
    run = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    before, started, registered, again = json.loads(run.stdout.splitlines()[-1])
    assert before == 0 and started > 10_000, (before, started)  # the app's modules and catalog
    assert registered > started, (started, registered)  # the tool's module, models, argument model
    assert again >= registered
