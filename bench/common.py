"""The benchmarks' paths, pinned peer versions and sizes, the test harness on sys.path, the
re-execution with the repository's venv, logging and the statistics every table uses."""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(
    0, str(REPO / "tests")
)  # the test harness (`harness`): the demo API, argument synthesis, timed children
WORK = BENCH / ".work"
LOGS = WORK / "logs"
CORPUS = REPO.parent / "shared" / "corpus"
DEFAULT_SPEC = CORPUS / "github__api.github.com.json"
MAIN_PYTHON = REPO / ".venv" / "bin" / "python"
TYPED_MCP = REPO / ".venv" / "bin" / "typed-mcp"
FASTMCP_VENV = BENCH / ".venv-fastmcp"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
FASTMCP_VERSION = "4.2.3"  # latest 4.x on PyPI when this was written (`pip index versions fastmcp`)
# The generation peer named by the issue: a client generator (not MCP), timed on the same spec in the
# same runs, interleaved with typed-mcp's, so both see the same machine (its load varies by 20%).
OPC_VENV = BENCH / ".venv-openapi-python-client"
OPC_VERSION = "0.29.1"  # latest on PyPI when this was written
FASTMCP_SERVER = BENCH / "fastmcp_server.py"
INPROC = BENCH / "inproc_calls.py"

WARM_LISTS = 20
INPROC_CALLS = 500
CALL_TIMEOUT_S = 60.0
SCALING_SIZES = (100, 1000, 5000)
# Called in-process without arguments: an operation whose response model `{}` satisfies.
DEFAULT_CALL_OPERATION = "GET /emojis"

MIB = 1024 * 1024


def reexec_with_repo_venv() -> None:
    """The benchmark needs the MCP SDK and typed-mcp from the repository's .venv."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        if MAIN_PYTHON.exists() and Path(sys.prefix).resolve() != MAIN_PYTHON.parent.parent.resolve():
            os.execv(str(MAIN_PYTHON), [str(MAIN_PYTHON), *sys.argv])
        raise


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
