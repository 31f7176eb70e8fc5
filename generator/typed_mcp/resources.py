"""Where the generated package's templates are: inside the installed package, or at the top of a
checkout (where they live beside `generator/`, as the repository's layout has them)."""

from __future__ import annotations

import functools
import importlib.util
from importlib import resources
from pathlib import Path
from types import ModuleType


def templates_dir() -> Path:
    packaged = resources.files("typed_mcp") / "templates"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "templates"


@functools.cache
def runtime_module(name: str) -> ModuleType:
    """A module of the packages' runtime that imports nothing (`_runtime/meta.py`), loaded from the
    templates: the generator reads the very definitions every package carries, not a copy of them."""
    path = templates_dir() / "package" / "_runtime" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"typed_mcp._runtime_{name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
