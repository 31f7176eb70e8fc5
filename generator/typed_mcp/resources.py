"""Where the generated package's templates are: inside the installed package, or at the top of a
checkout (where they live beside `generator/`, as the repository's layout has them); and the runtime
every package carries a copy of (`typed_mcp.runtime`, always inside the package)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def templates_dir() -> Path:
    packaged = resources.files("typed_mcp") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "templates"


def runtime_dir() -> Path:
    """The folder of `typed_mcp.runtime`: every file of it (`*.py`, `*.html`) is copied, byte for byte,
    into each package as `_runtime/`."""
    return Path(__file__).resolve().parent / "runtime"
