"""The packages' runtime loaded straight from the templates, as the package it is in every generated
package (its modules import each other and the contracts relatively): one loader for the tests."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from typed_mcp.runtime import contracts

RUNTIME = Path(__file__).resolve().parents[2] / "templates" / "package" / "_runtime"
NAME = "_typed_mcp_runtime_under_test"


def runtime(module: str) -> ModuleType:
    """The runtime's `module` (e.g. "search", "formats"), its package built once per process."""
    if NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            NAME,
            RUNTIME / "__init__.py",
            submodule_search_locations=[str(RUNTIME), str(Path(contracts.__file__).parent)],
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[NAME] = package
        try:
            spec.loader.exec_module(package)
        except BaseException:
            del sys.modules[NAME]
            raise
    return importlib.import_module(f"{NAME}.{module}")
