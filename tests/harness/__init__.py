"""The test harness: the demo API, real-spec corpus runs, fidelity checks, strict-client runs
against Prism. Used by the tests, `make corpus`, `make demo` and the benchmark; not shipped."""

from __future__ import annotations

from pathlib import Path

from typed_mcp import children

TESTS = Path(__file__).resolve().parent.parent  # the folder that holds `harness`


def environment(*paths: str | Path) -> dict[str, str]:
    """The environment of a child that imports `paths` (a generated package's src), the harness and typed_mcp."""
    return children.environment(*paths, TESTS)
