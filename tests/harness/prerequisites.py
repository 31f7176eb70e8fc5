"""What tests need beyond the Python environment, and how to get it. A test says what it needs with
`@pytest.mark.needs("node", ...)` (or the module's `pytestmark`); tests/conftest.py checks before the
test's fixtures start anything and fails it at once with the line below: never a skip, never a wait on
a tool that is not there. `make test` installs all of them first."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from harness import node_tools
from harness.pod import bwrap_missing
from harness.replicas import nginx_missing

REPO = Path(__file__).resolve().parent.parent.parent


def _node() -> str | None:
    for program in ("node", "npm"):
        if shutil.which(program) is None:
            return f"`{program}` is not on PATH: Node.js 20+ and npm (Debian: apt-get install nodejs npm)"
    if not node_tools.installed_matches_lock():
        return "tests/node/node_modules is not what package-lock.json pins: make tests/node/node_modules/.installed"
    return None


def _chromium() -> str | None:
    path = os.environ.get("TYPED_MCP_CHROMIUM", "/usr/bin/chromium")
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        return f"no Chromium at {path}: apt-get install chromium (make test does it as root), or set TYPED_MCP_CHROMIUM"
    return None


def _live() -> str | None:
    missing = [name for name in ("kinto", "chroma") if not (REPO / ".venv-live" / "bin" / name).is_file()]
    return f"no {', '.join(missing)} in .venv-live: make live-venv" if missing else None


def _checkov() -> str | None:
    path = Path(os.environ.get("TYPED_MCP_CHECKOV") or REPO / ".venv-checkov" / "bin" / "checkov")
    return None if path.is_file() else f"no checkov at {path}: make .venv-checkov/.installed"


CHECKS: dict[str, Callable[[], str | None]] = {
    "node": _node,
    "chromium": _chromium,
    "nginx": nginx_missing,
    "bwrap": bwrap_missing,
    "live": _live,
    "checkov": _checkov,
}


def missing(name: str) -> str | None:
    """What is missing for `name` and how to get it, or None when it is there."""
    return CHECKS[name]()
