from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Every generation in the tests is a fresh one (the cache has tests of its own, in a folder of theirs),
# and nothing is written to the user's ~/.cache.
os.environ["TYPED_MCP_NO_CACHE"] = "1"

from harness import prerequisites  # noqa: E402
from harness.demo.process import demo_api  # noqa: E402
from support import generate  # noqa: E402

TESTS = Path(__file__).resolve().parent
# Only tests/unit/ holds tests that run in-process: every test elsewhere (tests/e2e/, tests/security/,
# tests/corpus/, tests/golden/, or a file not yet sorted into one) starts processes (the CLI, generated
# servers, real clients, upstreams) and is `slow`. In tests/unit/ a test that starts one says so with
# the marker, and the guard below holds every other test to it, so that `make test-fast` runs no process.
IN_PROCESS = "unit"
# The audit events of starting a process (subprocess, asyncio's and anyio's subprocesses, a forked
# multiprocessing worker, os.system/exec/spawn).
PROCESS_EVENTS = {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system"}
_fast_test: str | None = None  # the node id of the running test that must start no process


def _process_guard(event: str, args: tuple) -> None:
    if _fast_test is not None and event in PROCESS_EVENTS:
        raise RuntimeError(
            f"{_fast_test} starts a process ({event}) but is not marked slow: mark it "
            "@pytest.mark.slow, or move it out of tests/unit/ (make test-fast runs no process)"
        )


sys.addaudithook(_process_guard)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.resolve()
        if not path.is_relative_to(TESTS) or path.relative_to(TESTS).parts[0] != IN_PROCESS:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    # What the test needs beyond Python (`needs` marker), checked before its fixtures start anything:
    # a missing tool fails it at once with how to get it, never a skip or a wait.
    for mark in item.iter_markers("needs"):
        problems = [p for p in map(prerequisites.missing, mark.args) if p]
        if problems:
            pytest.fail(f"{item.nodeid} cannot run here: " + "; ".join(problems), pytrace=False)
    with _guarded(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _guarded(item):
        return (yield)


@contextlib.contextmanager
def _guarded(item: pytest.Item) -> Iterator[None]:
    """While a test that is neither slow nor long sets up and runs, starting a process fails it."""
    global _fast_test
    if item.get_closest_marker("slow") or item.get_closest_marker("long"):
        yield
        return
    _fast_test = item.nodeid
    try:
        yield
    finally:
        _fast_test = None


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
