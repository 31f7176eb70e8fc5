"""Step 4b: split the generated models into one module per model (a group of mutually recursive
models shares one), so a tool imports only the models it uses.

A big API's models (thousands of classes) take seconds to import all at once, and a server that
pays that on its first call is slow to answer it. Split this way, a tool's first call imports the
few dozen classes it uses, not the whole API. The models package's `__init__` resolves any class
name on first access, so `from pkg.models import Repository` still works. The class text is copied
exactly as the code generator wrote it.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass

from typed_mcp import names
from typed_mcp.errors import OutputError
from typed_mcp.pysource import PySource, parse

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Building the first model of a group of mutually recursive models, pydantic descends through the
# others one after another, some 20 Python frames for each: a group of Stripe's size (hundreds of
# models, every one reachable from every other) needs more than Python's default 1,000.
DEEP_GROUP = 40
FRAMES_PER_MODEL = 20
# In a group of mutually recursive models each model's validator holds the whole group, so building
# them all at import costs the group's size squared (Stripe's shape: 380 models, 17 s and 1.3 GB in
# every process that imports them). The models of a group bigger than this, and every model that
# uses one, are built on first use: based on the runtime's Deferred* classes under the usual names,
# and without `model_rebuild()` (which would build them at once).
LAZY_GROUP = 40
_LAZY_NOTE = "# Built on first use: a big group of mutually recursive models (see _runtime/models.py).\n"
DEFERRED_BASES = {"OpenModel": "DeferredOpenModel", "CountedModel": "DeferredCountedModel"}


@dataclass(frozen=True)
class ModelModules:
    imported: dict[str, tuple[str, str]]  # name -> (module, attribute) of absolute imports, for models/__init__.py
    sources: dict[str, str]  # module name -> source
    module_of: dict[str, str]  # class name -> module name


def split(source: str, file_header: str, tree: ast.Module | None = None) -> ModelModules:
    """`source` (with its `tree`, when the caller has parsed it already) as one module per model."""
    tree = tree if tree is not None else parse(source)
    text_of = PySource(source).segment  # a statement's exact text: cut by the tree, never by lines
    imports: list[ast.ImportFrom | ast.Import] = []
    classes: dict[str, ast.stmt] = {}  # models, and type aliases (`X = TypeAliasType("X", ...)`)
    rebuilds: dict[str, list[ast.stmt]] = {}  # `Node.model_rebuild()` goes with Node
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        elif (name := defined_name(node)) is not None:
            classes[name] = node
        elif (rebuilt := rebuilt_class(node)) in classes:
            rebuilds.setdefault(rebuilt, []).append(node)
        else:  # the code generator wrote something this step does not know how to place
            raise OutputError(
                f"internal error: unexpected statement in the generated models: {ast.unparse(node)[:120]}"
            )
    uses = {name: names_in([node, *rebuilds.get(name, [])]) for name, node in classes.items()}
    # Intersections first, here and below: `classes.keys() - group` is a new set of every class, for
    # each group (quadratic on an API of 20,000 schemas).
    groups = _strongly_connected(
        list(classes), {name: sorted((uses[name] & classes.keys()) - {name}) for name in classes}
    )

    module_of: dict[str, str] = {}
    # `models/__init__.py` imports these names: a submodule of the same name would replace them.
    taken = {(a.asname or a.name).split(".")[0] for node in imports for a in node.names}
    for group in groups:
        module = _module_name(group[0], taken)
        for name in group:
            module_of[name] = module
    sources: dict[str, str] = {}
    lazy: set[str] = set()  # modules whose models are built on first use
    for group in groups:  # dependencies first
        module = module_of[group[0]]
        used = set().union(*(uses[name] for name in group))
        siblings: dict[str, list[str]] = {}
        for name in sorted((used & classes.keys()) - set(group)):
            siblings.setdefault(module_of[name], []).append(name)
        if len(group) > LAZY_GROUP or lazy.intersection(siblings):
            lazy.add(module)
        bases = DEFERRED_BASES if module in lazy else {}
        body = [_import_line(node, used, bases) for node in imports]
        deep = len(group) > DEEP_GROUP and any(name in rebuilds for name in group)
        if deep:
            body.insert(0, "import sys\n")
        body += [f"from .{other} import {', '.join(found)}\n" for other, found in sorted(siblings.items())]
        text = [file_header, "\n", *(line for line in body if line)]
        if module in lazy:
            text.insert(1, _LAZY_NOTE)
        if deep:  # pydantic builds the first model of the group through a chain of all the others
            limit = 1000 + FRAMES_PER_MODEL * len(group)
            text += ["\n", f"sys.setrecursionlimit(max(sys.getrecursionlimit(), {limit}))\n"]
        for name in group:
            text += ["\n\n", text_of(classes[name]), "\n"]
        rebuild = [stmt for name in group for stmt in rebuilds.get(name, [])]
        if rebuild and module not in lazy:
            text += ["\n\n", *(text_of(s) + "\n" for s in rebuild)]
        sources[module] = "".join(text).rstrip("\n") + "\n"
    imported = {  # relative ones one level up, as seen from `models/__init__.py`
        alias.asname or alias.name: ("." * (node.level + 1 if node.level else 0) + node.module, alias.name)
        for node in imports
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    return ModelModules(imported=imported, sources=sources, module_of=module_of)


def defined_name(node: ast.stmt) -> str | None:
    """The name a top-level class or single-name assignment defines."""
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def rebuilt_class(node: ast.stmt) -> str | None:
    """`X` for a statement `X.model_rebuild()`."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Attribute) and func.attr == "model_rebuild" and isinstance(func.value, ast.Name):
            return func.value.id
    return None


def names_in(nodes: Iterable[ast.AST]) -> set[str]:
    """Every identifier a class uses, including those inside string (forward) annotations."""
    found: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                found.add(sub.id)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _IDENTIFIER.fullmatch(sub.value):
                found.add(sub.value)  # a forward reference is a quoted class name
    return found


def _import_line(node: ast.Import | ast.ImportFrom, used: set[str], bases: dict[str, str]) -> str:
    """The import statement limited to the names in `used`; relative imports go one package
    level up, as the modules live in `models/`. `bases`: runtime classes imported under another's
    name (`DeferredOpenModel as OpenModel`), so that the class text stays as it was written."""
    aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
    if not aliases:
        return ""
    if isinstance(node, ast.Import):
        return ast.unparse(ast.Import(names=aliases)) + "\n"
    if node.module == "_runtime" and node.level == 1:
        aliases = [ast.alias(bases[a.name], a.name) if a.name in bases and a.asname is None else a for a in aliases]
    level = node.level + 1 if node.level else 0
    return ast.unparse(ast.ImportFrom(module=node.module, names=aliases, level=level)) + "\n"


def _module_name(class_name: str, taken: set[str]) -> str:
    base = names.snake_case(class_name) or "model"
    if keyword.iskeyword(base) or base[0].isdigit() or base.startswith("_"):
        base = "m_" + base
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    taken.add(name)
    return name


def _strongly_connected(order: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (thousands of models nest deeper than Python's recursion
    limit). Groups come out dependencies first; members keep their order in the source."""
    position = {name: i for i, name in enumerate(order)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in order:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(sorted(group, key=position.__getitem__))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return groups
