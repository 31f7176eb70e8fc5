"""Post-generation step: import the rendered package in fresh interpreters, register every tool
the MCP SDK's own way, and list them as the SDK's server does. The listing becomes the package's
`catalog.json` (so the published schemas are exactly the SDK's), and is checked: a package that does
not start, or a tool that lost its outputSchema, never replaces a good one."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from typed_mcp import children
from typed_mcp.catalog.budget import BUDGET
from typed_mcp.catalog.pack import Listed, unpacked
from typed_mcp.children import last_error, read_result, stop
from typed_mcp.errors import TypedMcpError
from typed_mcp.plan.ir import ApiPlan
from typed_mcp.profile import Profile

# Registering tools and generating their schemas allocates millions of short-lived containers: with
# Python's default threshold (700) the cyclic collector runs thousands of times over a heap that only
# grows. Collecting every 50,000 allocations instead takes about a fifth off a big API's listing and
# generation's model step, for the same peak memory.
GC_THRESHOLD = 50_000
PARALLEL_MIN_TOOLS = 200  # below this, one process is faster than several imports of the package
CHUNK = 8  # tools per request to a worker: small enough to keep the workers evenly busy
# Below this many tools to list, a worker derives each tool's schemas alone: one pass over every model
# of a big API (`worker._Pool`) costs more than that many tools (Graph beta: 15 s and 1.2 GB for one).
POOL_TOOLS = 50


T = TypeVar("T")


class VerifyError(TypedMcpError):
    exit_code = 7


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
                children.command("typed_mcp.catalog.worker", str(GC_THRESHOLD)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=children.child_env(),
                text=True,
                encoding="utf-8",
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

    def tools(
        self,
        src: Path,
        module: str,
        names: list[str],
        *,
        timeout: float = 1200,
        budget: int = BUDGET,
        progress: Callable[[int, int], None] = lambda done, total: None,
        keep: Callable[[Listed], T] = unpacked,  # type: ignore[assignment]  # T is the dict then
    ) -> list[T]:
        """The tools/list result for `names` (in that order) of the package `module` in `src`, as JSON
        objects, each tool's schemas within `budget` bytes (`trimmed`: tool -> depth of references
        kept, for those that were cut). Once per set of workers: they keep the package imported.
        `progress(done, total)` is told how many tools are listed after each chunk. Each tool is
        `keep(listed)` as soon as its chunk comes, as its worker sent it (`pack.Listed`: each shared
        definition sent once; the default keeps the whole tool), so a big API's whole tools need
        never be held."""
        self.trimmed: dict[str, int] = {}
        if not names:
            return []
        self.start()
        deadline = time.monotonic() + timeout
        chunks = [names[i : i + CHUNK] for i in range(0, len(names), CHUNK)]
        results: list[tuple[list[T], dict[str, int]]] = [([], {})] * len(chunks)
        # Each worker walks its own contiguous share of the tools (neighbours share models, so it
        # imports fewer of them); one that runs out takes chunks from the far end of the largest share.
        share = -(-len(chunks) // len(self._procs))
        pending = [
            deque(range(start, min(start + share, len(chunks)))) for start in range(0, share * len(self._procs), share)
        ]
        working: dict[int, int] = {}  # worker -> chunk
        shared: list[list[str]] = [[] for _ in self._procs]  # each worker's definitions, by number
        listed = 0
        with selectors.DefaultSelector() as selector:
            for worker, proc in enumerate(self._procs):
                self._send(
                    worker, {"src": str(src), "module": module, "budget": budget, "pool": len(names) >= POOL_TOOLS}
                )
                selector.register(proc.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]  # a pipe: never None
                self._next(worker, pending, chunks, working)
            while working:
                ready = selector.select(timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise VerifyError(f"listing the generated package's tools took longer than {timeout:.0f} s")
                for key, _ in ready:
                    worker = key.data
                    chunk = working.pop(worker)
                    result = self._result(worker)
                    texts = shared[worker]
                    texts.extend(result["shared"])
                    sent = zip(result["tools"], result["sizes"], strict=True)
                    results[chunk] = ([keep(Listed(tool, texts, size)) for tool, size in sent], result["trimmed"])
                    self.chunks_done[worker] += 1
                    listed += len(chunks[chunk])
                    progress(listed, len(names))
                    self._next(worker, pending, chunks, working)
        for _, trimmed in results:  # in the order of the tools, whichever worker listed them
            self.trimmed.update(trimmed)
        return [tool for kept, _ in results for tool in kept]

    def _result(self, worker: int) -> Any:
        # Read up to the result line, not just one line: lines the SDK may log before it would
        # otherwise sit in the stream's buffer, where the selector cannot see them.
        stdout = self._procs[worker].stdout
        assert stdout is not None
        result = read_result(stdout)
        if result is None:
            raise VerifyError(
                f"the generated package does not start: {last_error(self._procs[worker], self._stderr[worker])}"
            )
        return result

    def _send(self, worker: int, message: Any) -> None:
        stdin = self._procs[worker].stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise VerifyError(
                f"the generated package does not start: {last_error(self._procs[worker], self._stderr[worker])}"
            ) from None

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


def check_catalog(listed: dict[str, bool], plan: ApiPlan) -> None:
    """The catalog (`listed`: each tool's name -> whether it has an outputSchema) lists every planned
    tool, and every tool with a JSON response has an outputSchema (in the data-tools profile, every
    tool: the `{sources, data}` envelope)."""
    every = plan.profile is Profile.DATA_TOOLS
    expected = {op.tool_name: every or op.has_output_schema for op in plan.operations}
    if set(listed) != set(expected):
        missing = sorted(set(expected) - set(listed))
        raise VerifyError(
            f"the generated server lists {len(listed)} tools, expected {len(expected)} "
            f"(missing: {', '.join(missing[:5])})"
        )
    lost = sorted(name for name, wants in expected.items() if wants and not listed[name])
    if lost:
        raise VerifyError(f"tool(s) without outputSchema despite a JSON response: {', '.join(lost[:5])}")
    dropped = sorted(name for name, wants in expected.items() if not wants and listed[name])
    if dropped:
        raise VerifyError(f"tool(s) with an outputSchema the plan leaves out: {', '.join(dropped[:5])}")
