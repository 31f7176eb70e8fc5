"""The workers that list a generated package's tools: every tool in the planned order, whatever
worker registered it; a package that cannot start or hangs is refused with its reason."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_scale import pages

from harness.replicas import children_of
from support import REPO, generate
from typed_mcp import children
from typed_mcp.catalog import verify
from typed_mcp.catalog.pack import Listed, unpacked
from typed_mcp.catalog.verify import CatalogWorkers, VerifyError

# The catalog workers are processes.
pytestmark = pytest.mark.slow

WEATHER = REPO / "generated" / "weather-mcp"


def _spread(monkeypatch: pytest.MonkeyPatch, cores: int, chunk: int = 1) -> None:
    """One worker per core of `cores`, whatever the number of tools, each taking `chunk` tools at a time."""
    monkeypatch.setattr(verify, "PARALLEL_MIN_TOOLS", 1)
    monkeypatch.setattr(verify, "CHUNK", chunk)
    monkeypatch.setattr(verify.os, "cpu_count", lambda: cores)


def test_several_workers_list_exactly_what_one_server_lists(monkeypatch):
    src = WEATHER / "src"
    names = [tool["name"] for tool in json.loads((src / "weather_mcp" / "catalog.json").read_text())["tools"]]
    _spread(monkeypatch, cores=3)
    with CatalogWorkers(len(names)) as workers:
        listed = workers.tools(src, "weather_mcp", list(reversed(names)))
        done, started = workers.chunks_done, len(workers._procs)
    assert len(done) == 3 and all(done) and sum(done) == len(names)  # each worker took a share
    assert started == (1 if sys.platform.startswith("linux") else 3)  # on Linux, two are forked from the first
    assert listed == list(reversed(_eager(src)))  # the order asked for, the SDK's own listing


def _eager(src: Path) -> list[dict[str, Any]]:
    """The weather package's tools as its eager server lists them to a client."""
    sys.path.insert(0, str(src))
    try:
        from weather_mcp.server import build_server

        return anyio.run(pages, build_server(eager=True))[0]  # type: ignore[no-any-return]
    finally:
        sys.path.remove(str(src))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_forked_workers_share_the_prepared_models_and_stop_with_the_first(monkeypatch):
    """`prepare` has the first worker import the models before any tool is asked for; the others are
    forked from it, list their share, and end when the workers are closed (the first is killed: each
    forked one with it)."""
    src = WEATHER / "src"
    names = [tool["name"] for tool in json.loads((src / "weather_mcp" / "catalog.json").read_text())["tools"]]
    _spread(monkeypatch, cores=2)
    with CatalogWorkers(len(names)) as workers:
        workers.prepare(src, "weather_mcp", len(names))
        listed = workers.tools(src, "weather_mcp", names)
        (first,) = workers._procs
        forked = children_of(first.pid)
        assert len(forked) == 1 and all(workers.chunks_done)
        # Killed outright, while the generator still holds the pipes to the forked one: it ends too.
        first.kill()
        deadline = time.monotonic() + 10
        while any(_state(pid) != "Z" for pid in forked):
            assert time.monotonic() < deadline, "a forked worker outlived the first one"
            time.sleep(0.05)
    assert listed == _eager(src)


def _state(pid: int) -> str:
    """The process's state letter; Z (a zombie) when it is gone too."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "Z"  # gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_a_forked_worker_that_dies_is_an_error_not_a_wait(tmp_path, monkeypatch):
    """A forked worker's pipes are its alone: when it dies the generator reads the end of its output at
    once (no copy of its pipe is left open in the first worker), and says why."""
    # Each tool's module kills the forked worker that imports it, and keeps the first one busy.
    tool = (
        f"import os, signal, time\nif os.getppid() != {os.getpid()}:\n    os.kill(os.getpid(), signal.SIGKILL)\n"
        "time.sleep(300)\n"
    )
    src = _package(tmp_path, "", tool)
    (src / "pkg" / "tools" / "__init__.py").write_text("INDEX = {'a': 'a', 'b': 'b'}\nVIEWS = {}\n")
    (src / "pkg" / "tools" / "b.py").write_text(tool)
    _spread(monkeypatch, cores=2)
    started = time.monotonic()
    with CatalogWorkers(2) as workers, pytest.raises(VerifyError, match="does not start: a worker stopped"):
        workers.tools(src, "pkg", ["a", "b"], timeout=60)
    assert time.monotonic() - started < 30


def test_a_first_worker_that_fails_to_prepare_is_refused_with_its_error(tmp_path, monkeypatch):
    """Models that do not import: the first worker stops while preparing, before forking; every worker
    is refused with its error (a forked one that never began says the first one's)."""
    src = _package(tmp_path, "")
    (src / "pkg" / "models").mkdir()
    (src / "pkg" / "models" / "__init__.py").write_text("raise RuntimeError('the models module is broken')\n")
    _spread(monkeypatch, cores=2, chunk=verify.CHUNK)
    with (
        CatalogWorkers(2) as workers,
        pytest.raises(VerifyError, match="does not start: RuntimeError: the models module is broken"),
    ):
        workers.prepare(src, "pkg", verify.POOL_TOOLS)
        workers.tools(src, "pkg", ["a", "b"], timeout=120)


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


def _wide_spec() -> dict[str, Any]:
    """An API whose schemas each reach more than `worker.POOL_DEFS` models, in answers and in request
    bodies, with a recursive model and an enum among them."""
    schemas: dict[str, Any] = {
        f"C{i}": {
            "type": "object",
            "properties": {f"c{i}": {"type": "string"}, "kind": {"$ref": "#/components/schemas/Kind"}},
        }
        for i in range(240)
    }
    schemas["Kind"] = {"type": "string", "enum": ["small", "large"]}
    schemas["Node"] = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    refs = {f"p{i}": {"$ref": f"#/components/schemas/C{i}"} for i in range(240)}
    schemas["Root"] = {"type": "object", "properties": {**refs, "node": {"$ref": "#/components/schemas/Node"}}}
    schemas["Wrapper"] = {
        "type": "object",
        "required": ["root"],
        "properties": {"root": {"$ref": "#/components/schemas/Root"}},
    }

    def answer(name: str | dict[str, Any]) -> dict[str, Any]:
        schema = {"$ref": f"#/components/schemas/{name}"} if isinstance(name, str) else name
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    def body(name: str) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}}

    kind = {"name": "kind", "in": "query", "schema": {"$ref": "#/components/schemas/Kind"}}
    root = {"$ref": "#/components/schemas/Root"}
    counted = {"type": "object", "required": ["count"], "properties": {"count": {"type": "integer"}, "first": root}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Wide", "version": "1"},
        "paths": {
            "/roots": {
                "get": {"operationId": "getRoot", "responses": answer("Root")},
                "post": {"operationId": "createRoot", "requestBody": body("Root"), "responses": answer("Root")},
            },
            "/wrappers": {
                "get": {"operationId": "getWrapper", "parameters": [kind], "responses": answer("Wrapper")},
                "put": {
                    "operationId": "putWrapper",
                    "parameters": [kind],
                    "requestBody": body("Wrapper"),
                    "responses": answer("Wrapper"),
                },
            },
            # a list: the SDK wraps it in a model of its own, `{"result": [...]}`
            "/roots/all": {"get": {"operationId": "listRoots", "responses": answer({"type": "array", "items": root})}},
            # an object of its own: a model of the tool's module that holds a pooled one
            "/roots/counted": {"get": {"operationId": "countRoots", "responses": answer(counted)}},
            "/nodes": {
                "get": {"operationId": "getNode", "responses": answer("Node")},
                "post": {"operationId": "createNode", "requestBody": body("Node"), "responses": answer("Node")},
            },
        },
        "components": {"schemas": schemas},
    }


def test_schemas_from_the_one_pass_are_byte_for_byte_those_derived_alone(tmp_path):
    """On an API whose closures are big, a worker derives the first schemas alone and the rest from one
    pass over every model (`worker._Pool`, for answers and for request bodies). The catalog keeps the
    order of keys, so both ways must give the same bytes: else `catalog.json` would depend on which
    worker happened to list a tool first."""
    out = tmp_path / "wide-mcp"
    generate(_wide_spec(), out, "wide-mcp")
    src = out / "src"
    names = [tool["name"] for tool in json.loads((src / "wide_mcp" / "catalog.json").read_text())["tools"]]
    pooled, alone = _listed(src, "wide_mcp", names), _listed(src, "wide_mcp", names, pool_defs=10**9)
    assert len(pooled) == 8 and [tool["name"] for tool in pooled] == names
    (wrapped,) = [tool["outputSchema"] for tool in pooled if tool["name"] == "list_roots"]
    assert wrapped["properties"]["result"]["items"] == {"$ref": "#/$defs/Root"} and len(wrapped["$defs"]) > 240
    bodies = [tool["inputSchema"] for tool in pooled if "Root" in tool["inputSchema"].get("$defs", {})]
    assert len(bodies) == 2 and all(len(schema["$defs"]) > 240 for schema in bodies)  # whole, not trimmed
    assert json.dumps(pooled) == json.dumps(alone)
    # Prepared (every model imported and the pool built before any tool is asked for): the same bytes.
    assert json.dumps(_listed(src, "wide_mcp", names, prepare=True)) == json.dumps(pooled)
    # A listing of fewer than POOL_TOOLS tools (a spec change's few) tells the workers to build no pool.
    assert json.dumps(_listed(src, "wide_mcp", names, pool=False)) == json.dumps(pooled)


def _listed(
    src: Path, module: str, names: list[str], pool_defs: int | None = None, pool: bool = True, prepare: bool = False
) -> list[dict[str, Any]]:
    """`names` listed in that order by one worker, with no schema budget (and no pool when `pool_defs`
    is that big, or without `pool`; the pool built first with `prepare`)."""
    code = "from typed_mcp.catalog import worker\n"
    if pool_defs is not None:
        code += f"worker.POOL_DEFS = {pool_defs}\n"
    code += "worker.main()\n"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(verify.GC_THRESHOLD)],
        input=json.dumps({"src": str(src), "module": module, "budget": 10**9, "pool": pool, "prepare": prepare})
        + "\n"
        + json.dumps(names)
        + "\n",
        capture_output=True,
        text=True,
        env=children.child_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result = children.result_line(proc.stdout)
    sent = zip(result["tools"], result["sizes"], strict=True)
    tools = [unpacked(Listed(tool, result["shared"], size)) for tool, size in sent]
    # Each tool's size is that of its whole JSON, as catalog.json measures it.
    assert result["sizes"] == [
        len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")).encode()) for tool in tools
    ]
    return tools


def test_a_result_line_survives_the_child_being_stopped_and_continued_while_it_writes():
    """A result line is longer than the pipe's buffer (a chunk of big tools); the child writing it may
    be stopped and continued (job control, a debugger or profiler attaching). Each line must arrive
    whole: through `print`, lines arrived with bytes missing (JSON errors, broken UTF-8)."""
    code = (
        "import sys\nfrom typed_mcp.children import print_result\n"
        "value = {'tools': [{'name': f't{i}', 'text': 'é' * 50 + 'x' * 300} for i in range(2000)]}\n"
        "for line in sys.stdin:\n    print_result(value)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=children.child_env()
    )
    assert proc.stdin is not None and proc.stdout is not None
    done = threading.Event()

    def stop_and_continue() -> None:
        while not done.wait(0.002):
            os.kill(proc.pid, signal.SIGSTOP)
            done.wait(0.001)
            os.kill(proc.pid, signal.SIGCONT)
        os.kill(proc.pid, signal.SIGCONT)

    def end() -> None:  # a line that lost its end would leave the read waiting: end the child instead
        done.set()
        proc.kill()

    poking = threading.Thread(target=stop_and_continue)
    watchdog = threading.Timer(60, end)
    poking.start()
    watchdog.start()
    try:
        for _ in range(60):
            proc.stdin.write("go\n")
            proc.stdin.flush()
            result = children.read_result(proc.stdout)
            assert result is not None and len(result["tools"]) == 2000 and result["tools"][-1]["name"] == "t1999"
    finally:
        watchdog.cancel()
        done.set()
        poking.join()
        children.stop(proc)
