"""The generator's modules, the runtime's among them, and the benchmark's scripts import each other one
way: no import cycle, and none dodged by an import written inside a function (such an import is there
to load a mode's module when it is used, never to hide a cycle). Imports under `if TYPE_CHECKING:` are
left out: they never run."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import typed_mcp
from support import REPO

GENERATOR = Path(typed_mcp.__file__).parent


def _modules(folder: Path, package: str | None) -> dict[str, Path]:
    """Every module under `folder` by its dotted name (`package` the folder's; None: its files are
    top-level modules, as a script's folder on sys.path makes them)."""
    found = {}
    for path in sorted(folder.rglob("*.py") if package else folder.glob("*.py")):
        parts = [*([package] if package else []), *path.relative_to(folder).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _run_time_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth, but those under `if TYPE_CHECKING:`."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of `modules` it imports. `from package import name` is an edge to the
    submodule `package.name` when there is one, else to the package."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    base = ".".join([*here[: len(here) - node.level + 1], *([node.module] if node.module else [])])
                subs = [f"{base}.{alias.name}" for alias in node.names]
                wanted = [s for s in subs if s in modules] + ([base] if any(s not in modules for s in subs) else [])
            for target in wanted:
                while target and target not in modules:  # `a.b.c` where only the module `a.b` is ours
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of `graph`, each as a path that ends where it starts."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for other in sorted(graph[module]):
            visit(other, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_the_graph_sees_imports_inside_functions_and_finds_their_cycle(tmp_path):
    """The checker itself: a cycle closed by an import inside a function is one; an import that only a
    type checker runs is not, and a package's `__init__` importing its own submodule is not."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.sub.b import B\n")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("B = 1\ndef late():\n    from pkg import a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    graph = import_graph(_modules(package, "pkg"))
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.c"] == set()
    assert [set(cycle) for cycle in cycles(graph)] == [{"pkg.a", "pkg.sub.b"}]


def test_the_generator_imports_without_a_cycle():
    modules = _modules(GENERATOR, "typed_mcp")
    assert {"typed_mcp.pipeline", "typed_mcp.render.package", "typed_mcp.runtime.hosting"} <= set(modules)
    assert cycles(import_graph(modules)) == []


def test_the_benchmarks_scripts_import_without_a_cycle():
    modules = _modules(REPO / "bench", None)
    assert {"bench", "payments", "modes"} <= set(modules)
    assert cycles(import_graph(modules)) == []


def private_imports(modules: dict[str, Path]) -> list[str]:
    """Every `from X import _name` between the given modules: a name with a leading underscore is its
    module's own (a dunder such as `__version__` is not), so another module that needs it needs a public name (and the module its contract)."""
    found = []
    for name, path in modules.items():
        for node in _run_time_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                found += [
                    f"{name}: {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.endswith("__")
                ]
    return found


def test_the_check_finds_a_private_name_imported_from_another_module(tmp_path):
    (tmp_path / "a.py").write_text("from .b import _hidden, shown\n")
    (tmp_path / "b.py").write_text("_hidden = shown = 1\n")
    assert private_imports(_modules(tmp_path, "pkg")) == ["pkg.a: _hidden"]


def test_no_module_of_the_generator_or_its_runtime_imports_another_ones_private_name():
    assert private_imports(_modules(GENERATOR, "typed_mcp")) == []
