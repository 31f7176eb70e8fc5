from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Every generation in the tests is a fresh one (the cache has tests of its own, in a folder of theirs),
# and nothing is written to the user's ~/.cache.
os.environ["TYPED_MCP_NO_CACHE"] = "1"

from harness.demo.process import demo_api  # noqa: E402
from support import generate  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_url():
    """The demo Weather API, a real FastAPI service on a free port."""
    with demo_api() as base:
        yield base


@pytest.fixture(scope="session")
def weather_package(demo_url, tmp_path_factory) -> Path:
    """A package generated from the demo API's live /v1/openapi.json by the CLI."""
    out = tmp_path_factory.mktemp("live") / "weather-mcp"
    generate(f"{demo_url}/v1/openapi.json", out, "weather-mcp")
    return out
