"""The protocol between the generator and the helper interpreters it starts (model generation, tool
listing): a child prints each result as one JSON line behind a marker, because the libraries it
imports may log to stdout too. And `forked`: work of this process's own, on a second core."""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from typed_mcp.errors import OutputError, SpecError, TypedMcpError

T = TypeVar("T")

RESULT_MARKER = "typed-mcp-result: "
# The folder holding the `typed_mcp` package, so a child finds this very copy of it (a checkout
# that is not installed, or an installed wheel, alike).
_IMPORT_ROOT = str(Path(__file__).resolve().parent.parent)


def print_result(value: Any) -> None:
    """In a child: send one result, one line written whole with `os.write`. Through `print`, a line
    longer than the pipe's buffer lost bytes when the child was stopped and continued while writing it
    (SIGSTOP and SIGCONT; a profiler attaching does the same)."""
    sys.stdout.flush()  # what the child's libraries printed comes first
    line = RESULT_MARKER + json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    rest = memoryview(line.encode("utf-8"))
    while rest:
        rest = rest[os.write(sys.stdout.fileno(), rest) :]


def result_line(stdout: str) -> Any:
    """The last result in the whole output of a child that has ended."""
    for line in reversed(stdout.split("\n")):  # not splitlines(): JSON text may hold U+2028 or U+0085
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    raise TypedMcpError(f"a child process printed no result: {stdout.strip()[-300:]!r}")


def read_result(stream: IO[str]) -> Any | None:
    """The next result a running child prints on `stream` (its stdout), skipping the lines before it
    (which a library may log); None when the stream ends first. No child prints a null result."""
    for line in iter(stream.readline, ""):  # not one line: logged lines would otherwise sit in the buffer
        if line.startswith(RESULT_MARKER):
            return json.loads(line[len(RESULT_MARKER) :])
    return None


def last_error(proc: subprocess.Popen[str], stderr: IO[bytes]) -> str:
    """Why a child stopped: the last line it wrote to `stderr` (a file), or its exit code."""
    proc.wait()
    return last_line(stderr) or f"exit code {proc.returncode}"


def last_line(stderr: IO[bytes]) -> str | None:
    """The last line a child wrote to `stderr` (a file), None when it wrote nothing."""
    stderr.seek(0)
    lines = stderr.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else None


def stop(proc: subprocess.Popen[str]) -> None:
    """Kill a child if it still runs, and close its pipes."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def command(module: str, *args: str) -> list[str]:
    """The command line that runs `python -m module args` in a fresh interpreter (-B: no __pycache__
    is written next to the generated package it imports)."""
    return [sys.executable, "-B", "-m", module, *args]


def child_env(*paths: str | Path) -> dict[str, str]:
    """This process's environment, with `paths` and this copy of typed_mcp first on PYTHONPATH."""
    entries = [str(path) for path in paths] + [_IMPORT_ROOT]
    if os.environ.get("PYTHONPATH"):
        entries.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(entries)}


@contextlib.contextmanager
def forked(work: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """Start `work` now in a forked copy of this process, which sees its objects as they are without
    pickling them; yield the call that waits for what it returns (pickled back) and raises the
    SpecError it raised. On Linux only (macOS's system libraries, which a proxy lookup loads, may
    abort a forked child; Windows has no fork) and with two cores or more; elsewhere `work` runs in
    this process when its result is asked for. A child still running when the block ends is stopped.

    Only for work that is pure computation on this process's objects: the child runs no code that
    takes a lock another thread may hold (Python 3.12 warns of a fork while threads run, as a live
    progress display's thread may; that is why the warning is silenced)."""
    if not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2:
        yield work
        return
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def run() -> None:
        gc.disable()  # short-lived: walking the parent's objects would copy every page of them
        try:
            send.send(("done", work()))
        except SpecError as exc:
            send.send(("refused", str(exc)))
        except BaseException as exc:  # noqa: BLE001 (sent to the parent, which raises it)
            send.send(("failed", repr(exc)))

    child = context.Process(target=run, daemon=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        child.start()
    send.close()

    def result() -> T:
        try:
            kind, value = receive.recv()
        except EOFError:
            raise OutputError(f"internal error: a forked helper stopped (exit code {child.exitcode})") from None
        if kind == "refused":
            raise SpecError(value)
        if kind == "failed":
            raise OutputError(f"internal error in a forked helper: {value}")
        return value  # type: ignore[no-any-return]  # what `work` returned

    try:
        yield result
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()
