"""The packages' runtime as the tests load it: `typed_mcp.runtime`, the generator's package that every
generated package carries byte for byte as `_runtime/` (its modules import each other relatively)."""

from __future__ import annotations

import importlib
from types import ModuleType


def runtime(module: str) -> ModuleType:
    """The runtime's `module` (e.g. "search", "formats")."""
    return importlib.import_module(f"typed_mcp.runtime.{module}")
