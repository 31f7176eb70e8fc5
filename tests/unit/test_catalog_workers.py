"""The workers that list a generated package's tools: every tool in the planned order, whatever
worker registered it; a package that cannot start or hangs is refused with its reason."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from test_scale import pages

from support import REPO
from typed_mcp.catalog import verify
from typed_mcp.catalog.verify import CatalogWorkers, VerifyError

# The catalog workers are processes.
pytestmark = pytest.mark.slow

WEATHER = REPO / "generated" / "weather-mcp"


def test_several_workers_list_exactly_what_one_server_lists(monkeypatch):
    src = WEATHER / "src"
    names = [tool["name"] for tool in json.loads((src / "weather_mcp" / "catalog.json").read_text())["tools"]]
    monkeypatch.setattr(verify, "PARALLEL_MIN_TOOLS", 1)
    monkeypatch.setattr(verify, "CHUNK", 1)
    monkeypatch.setattr(verify.os, "cpu_count", lambda: 3)
    with CatalogWorkers(len(names)) as workers:
        listed = workers.tools(src, "weather_mcp", list(reversed(names)))
        done = workers.chunks_done
    assert len(done) == 3 and all(done) and sum(done) == len(names)  # each worker took a share
    sys.path.insert(0, str(src))
    try:
        from weather_mcp.server import build_server

        eager = anyio.run(pages, build_server(eager=True))[0]
    finally:
        sys.path.remove(str(src))
    assert listed == list(reversed(eager))  # the order asked for, the SDK's own listing


def _package(root: Path, tools_py: str, tool_a: str = "") -> Path:
    """A package whose tools module is `tools_py` (and its tool `a`'s module `tool_a`), beside the demo's
    runtime (the workers register tools with the package's own copy of it)."""
    (root / "pkg" / "tools").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "_about.py").write_text("PACKAGE = 'pkg'\nICONS = []\n")
    shutil.copytree(WEATHER / "src" / "weather_mcp" / "_runtime", root / "pkg" / "_runtime")
    (root / "pkg" / "tools" / "__init__.py").write_text(tools_py + "\nINDEX = {'a': 'a'}\nVIEWS = {}\n")
    (root / "pkg" / "tools" / "a.py").write_text(tool_a)
    return root


def test_a_package_that_does_not_start_is_refused_with_its_error(tmp_path):
    src = _package(tmp_path, "raise RuntimeError('the models module is broken')\n")
    with (
        CatalogWorkers(1) as workers,
        pytest.raises(VerifyError, match="does not start: RuntimeError: the models module is broken"),
    ):
        workers.tools(src, "pkg", ["a", "b"])


def test_a_tool_that_fails_to_register_is_refused_with_its_error(tmp_path):
    src = _package(tmp_path, "", "raise TypeError(f'no output schema for {__name__}')\n")
    with CatalogWorkers(1) as workers, pytest.raises(VerifyError, match="TypeError: no output schema for pkg.tools.a"):
        workers.tools(src, "pkg", ["a"])


def test_a_hanging_package_is_stopped_at_the_timeout(tmp_path):
    src = _package(tmp_path, "", "import time\ntime.sleep(60)\n")
    workers = CatalogWorkers(1)
    with workers, pytest.raises(VerifyError, match="longer than 2 s"):
        workers.tools(src, "pkg", ["a"], timeout=2)
    assert all(proc.poll() is not None for proc in workers._procs)  # stopped, not left running


def test_the_workers_never_run_the_package_server_module(tmp_path):
    """The catalog is what the runtime registers: the generator calls no function of the package's
    `server.py` (a broken one is still listed alike; the package's own tests import it)."""
    shutil.copytree(WEATHER / "src", tmp_path / "src")
    names = [
        tool["name"] for tool in json.loads((tmp_path / "src" / "weather_mcp" / "catalog.json").read_text())["tools"]
    ]
    (tmp_path / "src" / "weather_mcp" / "server.py").write_text("raise RuntimeError('not the runtime')\n")
    with CatalogWorkers(1) as workers:
        listed = workers.tools(tmp_path / "src", "weather_mcp", names)
    assert [tool["name"] for tool in listed] == names
    catalog = json.loads((WEATHER / "src" / "weather_mcp" / "catalog.json").read_text())
    assert [tool["_meta"] for tool in listed] == [tool["_meta"] for tool in catalog["tools"]]


def test_the_workers_register_with_the_generators_runtime(tmp_path):
    """The catalog is listed by `typed_mcp.runtime` itself (the package carries it byte for byte):
    a package whose copy of the registration's helpers is broken is listed alike."""
    shutil.copytree(WEATHER / "src", tmp_path / "src")
    runtime = tmp_path / "src" / "weather_mcp" / "_runtime"
    for module in ("schemas.py", "views.py"):
        (runtime / module).write_text("raise RuntimeError('not the generator runtime')\n")
    catalog = json.loads((WEATHER / "src" / "weather_mcp" / "catalog.json").read_text())
    names = [tool["name"] for tool in catalog["tools"]]
    with CatalogWorkers(1) as workers:
        listed = workers.tools(tmp_path / "src", "weather_mcp", names)
    assert [tool["_meta"] for tool in listed] == [tool["_meta"] for tool in catalog["tools"]]
