"""Post-generation step: import the rendered package in fresh interpreters, register every tool
the MCP SDK's own way, and list them as the SDK's server does. The listing becomes the package's
`catalog.json` (so the published schemas are exactly the SDK's), and is checked: a package that does
not start, or a tool that lost its outputSchema, never replaces a good one."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import IO, Any

from generator.errors import TypedMcpError
from generator.ir import ApiPlan

# A worker imports the SDK at once, while the generator is still writing the models; then it reads
# the package's location, and after that one chunk of tool names per line. For each chunk it answers
# one line: the chunk's tools as the SDK's server lists them (`MCPServer.list_tools()`, each dumped
# as the server's session dumps what it sends). Tool and model modules stay imported between chunks.
# (Listing through an in-memory `Client` gives the same objects, the corpus checks it for every spec,
# but parsing and dumping 10 MB again cost GitHub's listing 1.5 s of CPU.)
_WORKER = r"""
import gc, importlib, json, sys
import anyio
import pydantic
import pydantic.json_schema
from mcp.server import MCPServer

gc.set_threshold({gc_threshold}, 50, 1000)

# Two shortcuts that change how fast schemas are made, never what they are (the catalog tests compare
# with what the eager server lists through a Client). pydantic encodes every `None` default through a
# new TypeAdapter; and the SDK derives the output schema of a model again for each tool returning it.
_encode_default = pydantic.json_schema.GenerateJsonSchema.encode_default
pydantic.json_schema.GenerateJsonSchema.encode_default = lambda self, dft: None if dft is None else _encode_default(self, dft)
_json_schema, _schemas = pydantic.TypeAdapter.json_schema, {{}}
def _memo_json_schema(self, **options):
    try:
        key = (self._type, tuple(sorted(options.items())))
        hash(key)
    except (AttributeError, TypeError):
        return _json_schema(self, **options)
    if getattr(self, "_config", None) is not None:
        return _json_schema(self, **options)
    if key not in _schemas:
        _schemas[key] = json.dumps(_json_schema(self, **options))
    return json.loads(_schemas[key])  # a copy: the caller may change it
pydantic.TypeAdapter.json_schema = _memo_json_schema

where = json.loads(sys.stdin.readline())
sys.path.insert(0, where["src"])
package = importlib.import_module(where["module"] + ".server")
for line in sys.stdin:
    server = MCPServer(name="catalog")
    for name in json.loads(line):
        package._register(server, package.tool_entry(name))  # exactly as the package's eager server registers it
    tools = anyio.run(server.list_tools)
    print("{marker}" + json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools],
                                  ensure_ascii=False, separators=(",", ":")), flush=True)
"""
# Registering tools and generating their schemas allocates millions of short-lived containers: with
# Python's default threshold (700) the cyclic collector runs thousands of times over a heap that only
# grows. Collecting every 50,000 allocations instead takes a fifth off GitHub's listing and
# generation's model step, for the same peak memory (measured: 213 MB per worker either way).
GC_THRESHOLD = 50_000
PARALLEL_MIN_TOOLS = 200  # below this, one process is faster than several imports of the package
CHUNK = 8  # tools per request to a worker: small enough to keep the workers evenly busy


class VerifyError(TypedMcpError):
    exit_code = 7


# Child processes print their result on one line behind this marker: the MCP SDK may log to stdout too.
RESULT_MARKER = "typed-mcp-result: "


def result_line(stdout: str) -> Any:
    for line in reversed(stdout.split("\n")):  # not splitlines(): JSON text may hold U+2028 or U+0085
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    raise TypedMcpError(f"a child process printed no result: {stdout.strip()[-300:]!r}")


def read_result(stream: IO[str]) -> Any | None:
    """The next result a running child prints on `stream` (its stdout), skipping the lines before it
    (which a library may log); None when the stream ends first. No child prints a null result."""
    for line in iter(stream.readline, ""):  # not one line: logged lines would otherwise sit in the buffer
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER):])
    return None


def last_error(proc: subprocess.Popen[str], stderr: IO[bytes]) -> str:
    """Why a child stopped: the last line it wrote to `stderr` (a file), or its exit code."""
    proc.wait()
    stderr.seek(0)
    lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit code {proc.returncode}"


def stop(proc: subprocess.Popen[str]) -> None:
    """Kill a child if it still runs, and close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


class CatalogWorkers:
    """Fresh interpreters that register a generated package's tools the MCP SDK's way and list them.

    Registering a tool costs milliseconds (argument model, output schema), so a big API is spread
    over one worker per core (at most 4). `start()` them before the models exist, as soon as cores
    are free, so the SDK import overlaps model generation; they take small chunks of tools in turn, so
    the slowest one finishes at most a chunk after the others. Use as a context manager: leaving it
    stops them.
    """

    def __init__(self, tool_count: int) -> None:
        self._count = max(1, min(os.cpu_count() or 1, 4)) if tool_count >= PARALLEL_MIN_TOOLS else 1
        self._stderr: list[Any] = []
        self._procs: list[subprocess.Popen[str]] = []
        self.chunks_done = [0] * self._count

    def start(self) -> None:
        """Start the workers (once): each imports the MCP SDK, about a second of CPU, then waits."""
        if self._procs:
            return
        self._stderr = [tempfile.TemporaryFile() for _ in range(self._count)]  # a file: a chatty worker never blocks
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-B", "-c", _WORKER.format(marker=RESULT_MARKER, gc_threshold=GC_THRESHOLD)],  # -B: no __pycache__ in the output
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, encoding="utf-8",
            )
            for err in self._stderr
        ]

    def __enter__(self) -> CatalogWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for proc in self._procs:
            stop(proc)
        for err in self._stderr:
            err.close()

    def tools(self, src: Path, module: str, names: list[str], *, timeout: float = 1200) -> list[dict[str, Any]]:
        """The tools/list result for `names` (in that order) of the package `module` in `src`, as JSON
        objects. Once per set of workers: they keep the package imported."""
        if not names:
            return []
        self.start()
        deadline = time.monotonic() + timeout
        chunks = [names[i:i + CHUNK] for i in range(0, len(names), CHUNK)]
        results: list[list[dict[str, Any]] | None] = [None] * len(chunks)
        # Each worker walks its own contiguous share of the tools (neighbours share models, so it
        # imports fewer of them); one that runs out takes chunks from the far end of the largest share.
        share = -(-len(chunks) // len(self._procs))
        pending = [deque(range(start, min(start + share, len(chunks)))) for start in range(0, share * len(self._procs), share)]
        working: dict[int, int] = {}  # worker -> chunk
        with selectors.DefaultSelector() as selector:
            for worker, proc in enumerate(self._procs):
                self._send(worker, {"src": str(src), "module": module})
                selector.register(proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
                self._next(worker, pending, chunks, working)
            while working:
                ready = selector.select(timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise VerifyError(f"listing the generated package's tools took longer than {timeout:.0f} s")
                for key, _ in ready:
                    worker = key.data
                    results[working.pop(worker)] = self._result(worker)
                    self.chunks_done[worker] += 1
                    self._next(worker, pending, chunks, working)
        return [tool for chunk in results for tool in chunk or []]

    def _result(self, worker: int) -> Any:
        # Read up to the result line, not just one line: lines the SDK may log before it would
        # otherwise sit in the stream's buffer, where the selector cannot see them.
        stdout = self._procs[worker].stdout
        assert stdout is not None
        result = read_result(stdout)
        if result is None:
            raise VerifyError(f"the generated package does not start: {last_error(self._procs[worker], self._stderr[worker])}")
        return result

    def _send(self, worker: int, message: Any) -> None:
        stdin = self._procs[worker].stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise VerifyError(f"the generated package does not start: {last_error(self._procs[worker], self._stderr[worker])}") from None

    def _next(self, worker: int, pending: list[deque[int]], chunks: list[list[str]], working: dict[int, int]) -> None:
        own = pending[worker]
        if own:
            chunk = own.popleft()
        else:
            largest = max(pending, key=len)
            if not largest:
                return
            chunk = largest.pop()
        working[worker] = chunk
        self._send(worker, chunks[chunk])

def check_catalog(tools: list[dict[str, Any]], plan: ApiPlan) -> None:
    """The catalog lists every planned tool, and every tool with a JSON response has an outputSchema."""
    listed = {tool["name"]: "outputSchema" in tool for tool in tools}
    expected = {op.tool_name: op.response.kind == "json" for op in plan.operations}
    if set(listed) != set(expected):
        missing = sorted(set(expected) - set(listed))
        raise VerifyError(f"the generated server lists {len(listed)} tools, expected {len(expected)} (missing: {', '.join(missing[:5])})")
    lost = sorted(name for name, wants in expected.items() if wants and not listed[name])
    if lost:
        raise VerifyError(f"tool(s) without outputSchema despite a JSON response: {', '.join(lost[:5])}")
