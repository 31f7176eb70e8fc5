"""The runtime is one package of the generator, `typed_mcp.runtime`, and every generated package
carries it byte for byte as `_runtime/`: what the generator's tests exercise is what a package runs."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

from support import DEMO
from typed_mcp import runtime
from typed_mcp.resources import runtime_dir

# Only in packages generated with --profile data-tools, and with `[search] semantic = true` (the demo is
# generated with neither).
PROFILE_ONLY = {"datatools.py", "semantic.py"}


def test_the_demo_package_carries_the_generators_runtime_byte_for_byte():
    copy = DEMO / "src" / "weather_mcp" / "_runtime"
    source = {path.name: path.read_bytes() for path in runtime_dir().iterdir() if path.suffix in (".py", ".html")}
    carried = {path.name: path.read_bytes() for path in copy.iterdir() if path.is_file()}
    assert set(carried) == set(source) - PROFILE_ONLY
    assert [name for name in carried if carried[name] != source[name]] == []


def test_the_runtimes_exports_are_the_names_of_its_modules():
    """`__all__`, the names a type checker sees and the names imported on first use agree, and each is
    the very object of the module it names."""
    tree = ast.parse((runtime_dir() / "__init__.py").read_text(encoding="utf-8"))
    checked = next(node for node in tree.body if isinstance(node, ast.If))  # `if TYPE_CHECKING:`
    seen = {
        alias.name: ("." * node.level) + (node.module or "")
        for node in checked.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == runtime._SOURCES
    assert sorted(runtime.__all__) == sorted(seen)
    for name, source in seen.items():
        assert getattr(runtime, name) is getattr(importlib.import_module(source, "typed_mcp.runtime"), name)


@pytest.mark.slow  # imports in a fresh interpreter
def test_importing_the_runtime_imports_none_of_its_modules():
    """A package's models and tools import from `_runtime`; the package (and the generator, reading its
    contracts) loads only the modules whose names are used."""
    probe = (
        "import sys, typed_mcp.runtime as r; r.OpenModel; "
        "print(sorted(m for m in sys.modules if m.startswith('typed_mcp.runtime.')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(["typed_mcp.runtime.models"])


def test_the_runtimes_modules_import_each_other_without_a_cycle():
    """Every import between the runtime's modules, those inside functions included (they load a
    mode's modules when it is served, never to dodge a cycle), goes one way."""
    graph: dict[str, set[str]] = {}
    for path in runtime_dir().glob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                imported |= {node.module.split(".")[0]} if node.module else {alias.name for alias in node.names}
        graph[path.stem] = imported - {path.stem}
    assert {"server", "cli", "hosting", "introspection"} <= set(graph)
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for other in sorted(graph.get(module, ())):
            visit(other, (*path, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())
