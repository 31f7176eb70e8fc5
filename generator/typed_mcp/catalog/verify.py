"""Post-generation step: import the rendered package in fresh interpreters, register every tool
the MCP SDK's own way, and list them as the SDK's server does. The listing becomes the package's
`catalog.json` (so the published schemas are exactly the SDK's), and is checked: a package that does
not start, or a tool that lost its outputSchema, never replaces a good one."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from typed_mcp import children
from typed_mcp.catalog.budget import BUDGET
from typed_mcp.catalog.pack import Listed, unpacked
from typed_mcp.children import last_error, last_line, read_result, stop
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


class _Worker:
    """The generator's end of one worker: the pipes to it and the file its errors go to. `proc` is the
    process when the generator started it, None when it is a forked copy of the first worker."""

    def __init__(self, stdin: IO[str], stdout: IO[str], stderr: IO[bytes], proc: subprocess.Popen[str] | None) -> None:
        self.stdin, self.stdout, self.stderr, self.proc = stdin, stdout, stderr, proc

    def failure(self, first: _Worker) -> str:
        """Why it stopped: its last error line, else its exit code; a forked worker that wrote nothing
        (it may never have begun), the first worker's reason once that one has stopped too."""
        if self.proc is not None:
            return last_error(self.proc, self.stderr)
        written = last_line(self.stderr)
        if written is not None:
            return written
        if first.proc is not None and first.proc.poll() is not None:
            return first.failure(first)
        return "a worker stopped without saying why (killed by a signal)"

    def close(self) -> None:
        if self.proc is not None:
            stop(self.proc)  # its forked copies stop with it (worker._stop_with)
        for stream in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self.stderr.close()


class CatalogWorkers:
    """Interpreters that register a generated package's tools the MCP SDK's way and list them.

    Registering a tool costs milliseconds (argument model, output schema), so a big API is spread
    over one worker per core (at most 4). `start()` them before the models exist, as soon as cores
    are free, so the SDK import overlaps model generation; they take small chunks of tools in turn, so
    the slowest one finishes at most a chunk after the others. On Linux the generator starts one
    interpreter and the others are forked from it once it has imported the package's models and
    derived their schemas (`prepare`, while the generator still renders and checks the rest): that work
    is done once, not once per worker, and their memory is shared. Use as a context manager: leaving
    it stops them.
    """

    def __init__(self, tool_count: int) -> None:
        self._count = max(1, min(os.cpu_count() or 1, 4)) if tool_count >= PARALLEL_MIN_TOOLS else 1
        self._workers: list[_Worker] = []
        self._forks: list[list[int]] = []  # the descriptors the first worker hands to its forked copies
        self._told = False  # the first message (where the package is) is sent
        self.chunks_done = [0] * self._count

    @property
    def _procs(self) -> list[subprocess.Popen[str]]:
        return [worker.proc for worker in self._workers if worker.proc is not None]

    def start(self) -> None:
        """Start the workers (once): each imports the MCP SDK, about a second of CPU, then waits."""
        if self._workers:
            return
        forking = self._count > 1 and sys.platform.startswith("linux")
        forked = self._pipes(self._count - 1) if forking else []
        for _ in range(self._count - len(forked)):
            err = tempfile.TemporaryFile()  # a file: a chatty worker never blocks
            proc = subprocess.Popen(
                children.command("typed_mcp.catalog.worker", str(GC_THRESHOLD)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=children.child_env(),
                text=True,
                encoding="utf-8",
                pass_fds=[fd for fds in self._forks for fd in fds],
            )
            assert proc.stdin is not None and proc.stdout is not None  # both are pipes
            self._workers.append(_Worker(proc.stdin, proc.stdout, err, proc))
        self._workers += forked  # after the first worker, which forks them
        for fds in self._forks:
            os.close(fds[0])  # the forked workers' ends, now the first worker's
            os.close(fds[1])

    def _pipes(self, count: int) -> list[_Worker]:
        """Pipes and an error file for each of `count` workers that the first one will fork (the
        descriptors it is given: `_forks`)."""
        forked = []
        for _ in range(count):
            their_stdin, to_them = os.pipe()
            from_them, their_stdout = os.pipe()
            err = tempfile.TemporaryFile()
            stdin = open(to_them, "w", encoding="utf-8")  # noqa: SIM115  # closed by _Worker.close
            stdout = open(from_them, encoding="utf-8")  # noqa: SIM115  # as above
            forked.append(_Worker(stdin, stdout, err, None))
            self._forks.append([their_stdin, their_stdout, err.fileno()])
        return forked

    def __enter__(self) -> CatalogWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            worker.close()

    def prepare(self, src: Path, module: str, tool_count: int) -> None:
        """Tell the workers where the package is once its models, and all an import of them runs, are
        checked: they import every model and derive their schemas now (`worker._Pool`), before any
        tool is asked for, while the generator renders and checks the rest."""
        self.start()
        self._tell(src, module, BUDGET, tool_count >= POOL_TOOLS, prepare=True)

    def _tell(self, src: Path, module: str, budget: int, pool: bool, *, prepare: bool = False) -> None:
        if self._told:
            return
        self._told = True
        where = {"src": str(src), "module": module, "budget": budget, "pool": pool, "prepare": prepare}
        for number, worker in enumerate(self._workers):
            if worker.proc is not None:  # a forked copy knows what its first worker was told
                self._send(number, {**where, "forks": self._forks} if number == 0 else where)

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
        self._tell(src, module, budget, len(names) >= POOL_TOOLS)  # unless `prepare` told them
        deadline = time.monotonic() + timeout
        chunks = [names[i : i + CHUNK] for i in range(0, len(names), CHUNK)]
        results: list[tuple[list[T], dict[str, int]]] = [([], {})] * len(chunks)
        # Each worker walks its own contiguous share of the tools (neighbours share models, so it
        # imports fewer of them); one that runs out takes chunks from the far end of the largest share.
        share = -(-len(chunks) // len(self._workers))
        pending = [
            deque(range(start, min(start + share, len(chunks))))
            for start in range(0, share * len(self._workers), share)
        ]
        working: dict[int, int] = {}  # worker -> chunk
        shared: list[list[str]] = [[] for _ in self._workers]  # each worker's definitions, by number
        listed = 0
        with selectors.DefaultSelector() as selector:
            for number, worker in enumerate(self._workers):
                selector.register(worker.stdout, selectors.EVENT_READ, number)
                self._next(number, pending, chunks, working)
            while working:
                ready = selector.select(timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise VerifyError(f"listing the generated package's tools took longer than {timeout:.0f} s")
                for key, _ in ready:
                    number = key.data
                    if number not in working:  # one with nothing left to list that ended: not listened to
                        selector.unregister(key.fileobj)
                        continue
                    chunk = working.pop(number)
                    result = self._result(number)
                    texts = shared[number]
                    texts.extend(result["shared"])
                    sent = zip(result["tools"], result["sizes"], strict=True)
                    results[chunk] = ([keep(Listed(tool, texts, size)) for tool, size in sent], result["trimmed"])
                    self.chunks_done[number] += 1
                    listed += len(chunks[chunk])
                    progress(listed, len(names))
                    self._next(number, pending, chunks, working)
        for _, trimmed in results:  # in the order of the tools, whichever worker listed them
            self.trimmed.update(trimmed)
        return [tool for kept, _ in results for tool in kept]

    def _result(self, number: int) -> Any:
        # Read up to the result line, not just one line: lines the SDK may log before it would
        # otherwise sit in the stream's buffer, where the selector cannot see them.
        result = read_result(self._workers[number].stdout)
        if result is None:
            raise self._failed(number)
        return result

    def _failed(self, number: int) -> VerifyError:
        why = self._workers[number].failure(self._workers[0])
        return VerifyError(f"the generated package does not start: {why}")

    def _send(self, number: int, message: Any) -> None:
        stdin = self._workers[number].stdin
        try:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()
        except BrokenPipeError:
            raise self._failed(number) from None

    def _next(self, number: int, pending: list[deque[int]], chunks: list[list[str]], working: dict[int, int]) -> None:
        own = pending[number]
        if own:
            chunk = own.popleft()
        else:
            largest = max(pending, key=len)
            if not largest:
                return
            chunk = largest.pop()
        working[number] = chunk
        self._send(number, chunks[chunk])


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
