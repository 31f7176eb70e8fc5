"""Step 4a: a big API's models generated in two parts at once, then merged.

datamodel-code-generator runs on one core: thousands of models take seconds while the other core
idles. So the schemas the operations use are cut into two contiguous parts (neighbouring operations
share component schemas), each generated with only the components it reaches, the second in a
helper process, and the outputs are merged class by class.

A class both parts define is kept once. The code generator numbers inline models whose names clash
(`Repository1`) in the order it meets them, so two parts can give one name to different models: the
second part's class is then renamed (`Repository1` + a hash of its text), and so is every reference
to it in that part, and so, in turn, is every class of that part that uses it. A schema's class (its
name is chosen for it, and other code refers to it) means the same in both parts, so the first
part's text is kept, and the second part's inline classes that only its copy used are dropped.
Parts that cannot be merged (a class named like an import of the other part) raise MergeError: the
caller generates the models in one run instead."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typed_mcp import children, names
from typed_mcp.children import last_error, read_result, stop
from typed_mcp.models import modules as model_modules
from typed_mcp.pysource import PySource, parse

# Below this many schemas (components and operation schemas), one run in this process is faster
# than starting another interpreter and importing the code generator there (about 0.5 s).
SPLIT_MIN_SCHEMAS = 400

WORKER = "typed_mcp.models.parts_worker"  # the module the other process runs


def should_split(schema_count: int) -> bool:
    return schema_count >= SPLIT_MIN_SCHEMAS and (os.cpu_count() or 1) >= 2


# How much heavier (in schemas) this process's part is than the other's. The other process first
# imports the code generator, but this one's heap is bigger; measured on the biggest specs (Microsoft
# Graph v1.0 and beta, bench/GENERATION.md), equal parts finish together, and 1.15 took 2 s longer on beta.
HEAD_START = 1.0


def halves(keys: list[str], weight: Callable[[list[str]], int]) -> list[list[str]]:
    """`keys` cut in two contiguous parts (neighbouring operations share components), where the
    first part's `weight` (the number of schemas it generates) is about HEAD_START times the second's."""
    low, high = 1, len(keys) - 1
    while low < high:  # the first cut where the first part is heavy enough
        middle = (low + high) // 2
        if weight(keys[:middle]) >= HEAD_START * weight(keys[middle:]):
            high = middle
        else:
            low = middle + 1
    return [keys[:low], keys[low:]]


class CodegenProcess:
    """A fresh interpreter that runs the code generator on the jobs it is sent, one at a time,
    started by the first job. Use as a context manager: leaving it stops the process."""

    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        self._folder = tempfile.TemporaryDirectory(prefix="typed-mcp-models-")
        self._sent = 0
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None:
            self._proc = subprocess.Popen(
                children.command(WORKER),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=children.child_env(),
                text=True,
                encoding="utf-8",
            )
        return self._proc

    def __enter__(self) -> CodegenProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            stop(self._proc)
        self._stderr.close()
        self._folder.cleanup()

    def send(self, job: dict[str, Any]) -> None:
        # Through a file: a pipe would hold this process until the other one reads it.
        proc = self._start()
        self._sent += 1
        path = Path(self._folder.name) / f"job-{self._sent}.json"
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(job, handle, ensure_ascii=False, default=repr)
        assert proc.stdin is not None
        try:
            proc.stdin.write(f"{path}\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # answer() says why

    def answer(self) -> dict[str, Any]:
        """The answer to the job sent last."""
        proc = self._start()
        assert proc.stdout is not None
        answer = read_result(proc.stdout)
        return (
            answer
            if answer is not None
            else {"error": f"the model generator process failed: {last_error(proc, self._stderr)}"}
        )


class MergeError(Exception):
    """The parts cannot be merged safely; generate the models in one run instead."""


@dataclass
class _Part:
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # defined names, in the source's order
    text: dict[str, str] = field(default_factory=dict)  # name -> its statement's source
    node: dict[str, ast.stmt] = field(default_factory=dict)
    rebuilds: list[tuple[str, str]] = field(default_factory=list)  # (name, `Name.model_rebuild()` source)
    _uses: dict[str, set[str]] = field(default_factory=dict)

    def uses(self, name: str) -> set[str]:
        """The names a class uses (walked once: the merge asks for some classes twice)."""
        if name not in self._uses:
            self._uses[name] = model_modules.names_in([self.node[name]]) - {name}
        return self._uses[name]


def merge(first: str, second: str, fixed: set[str], trees: tuple[ast.Module, ast.Module] | None = None) -> str:
    """One models source from the code generator's outputs for two parts (see the module's doc).
    `fixed`: the class names chosen for schemas. Each names one schema in both parts, so where the
    parts' texts differ (they name the inline models under it differently) the first's is kept.
    `trees`: the parts' trees, when the caller has parsed them (a big API's take seconds each)."""
    merged, part = (_read(first), _read(second)) if trees is None else (_read(first, trees[0]), _read(second, trees[1]))
    shared = [n for n in part.order if n in merged.text]
    clash = {n for n in shared if n not in fixed and merged.text[n] != part.text[n]}
    if clash:
        uses = {n: part.uses(n) for n in shared if n not in fixed}
        grew = True
        while grew:  # a shared class that uses a clashing one means something else in this part
            before = len(clash)
            clash |= {n for n, used in uses.items() if used & clash}
            grew = len(clash) != before
    # What the second part adds: its classes the first lacks, and its own versions of clashing ones,
    # as far as its schemas the first part lacks use them (the rest only served its copies of shared schemas).
    added = [n for n in part.order if n not in merged.text or n in clash]
    needed = {n for n in added if n in fixed}
    stack = list(needed)
    while stack:
        for used in part.uses(stack.pop()):
            if used not in needed and (used in clash or (used in part.text and used not in merged.text)):
                needed.add(used)
                stack.append(used)
    renames = {n: f"{n}{names.short_hash(part.text[n], 6).upper()}" for n in sorted(clash & needed)}
    for name in added:
        if name not in needed:
            continue
        new = renames.get(name, name)
        if new in merged.text:
            raise MergeError(f"two parts define {new}")
        merged.order.append(new)
        merged.text[new] = renamed(part.text[name], renames)
    rebuilt = {n for n, _ in merged.rebuilds}
    merged.rebuilds += [
        (renames.get(n, n), renamed(text, renames))
        for n, text in part.rebuilds
        if n in needed and (n in renames or n not in rebuilt)
    ]
    imports = _merged_imports(merged.imports + part.imports)
    imported = {(a.asname or a.name).split(".")[0] for node in imports for a in node.names}
    if imported & merged.text.keys():
        raise MergeError(f"a class has the name of an import: {sorted(imported & merged.text.keys())[0]}")
    lines = [ast.unparse(node) + "\n" for node in imports]
    lines += ["\n\n" + merged.text[name] for name in merged.order]
    lines += ["\n\n" + text for _, text in merged.rebuilds]
    return "".join(lines) + "\n"


def _read(source: str, tree: ast.Module | None = None) -> _Part:
    part = _Part()
    code = PySource(source)
    for node in (tree if tree is not None else parse(source)).body:
        text = code.segment(node) + "\n"
        if isinstance(node, ast.ClassDef) and node.decorator_list:
            raise MergeError("a decorated class")  # not written by the code generator's templates
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            part.imports.append(node)
        elif (name := model_modules.defined_name(node)) is not None:
            part.order.append(name)
            part.text[name] = text
            part.node[name] = node
        elif (rebuilt := model_modules.rebuilt_class(node)) is not None:
            part.rebuilds.append((rebuilt, text))
        else:
            raise MergeError(f"an unexpected statement: {text[:80]}")
    return part


def renamed(text: str, renames: dict[str, str]) -> str:
    """`text` with every reference to a renamed class replaced: names, and the quoted forward
    references of annotations; never data such as Literal values, defaults or descriptions."""
    if not renames:
        return text
    code = PySource(text)
    edits: list[tuple[int, int, str]] = []
    for node in _references(parse(text).body):
        if isinstance(node, ast.ClassDef):
            if node.name in renames:
                start = text.index("class ", code.offset(node.lineno, node.col_offset)) + len("class ")
                edits.append((start, start + len(node.name), renames[node.name]))
        elif isinstance(node, ast.Name):
            if node.id in renames:
                edits.append((*code.span(node), renames[node.id]))
        elif node.value in renames and node.lineno == node.end_lineno:
            start, end = code.span(node)
            edits.append((start, end, text[start] + renames[node.value] + text[start]))
    return code.edited(edits)


def _references(nodes: Sequence[ast.AST]) -> Iterator[ast.ClassDef | ast.Name | ast.Constant]:
    """Class definitions, names, and strings in type positions (forward references) under `nodes`.
    Strings in values (call arguments such as `Field(description=...)`, defaults, docstrings,
    `Literal[...]`) are data; `TypeAliasType("Name", ...)` names its alias with a string."""
    stack: list[tuple[ast.AST, bool]] = [(node, True) for node in nodes]  # (node, a string here is a type)
    while stack:
        node, typed = stack.pop()
        if isinstance(node, (ast.ClassDef, ast.Name)):
            yield node
        elif isinstance(node, ast.Constant):
            if typed and isinstance(node.value, str):
                yield node
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            continue
        if isinstance(node, ast.Expr):  # a docstring, or `X.model_rebuild()`
            typed = False
        elif isinstance(node, ast.AnnAssign):  # a field: its name is not a reference
            stack.append((node.annotation, True))
            if node.value is not None:
                stack.append((node.value, False))
            continue
        elif isinstance(node, ast.Call):
            alias = isinstance(node.func, ast.Name) and node.func.id == "TypeAliasType"
            stack.append((node.func, False))
            stack += [(arg, alias) for arg in node.args]
            stack += [(keyword.value, False) for keyword in node.keywords]
            continue
        stack += [(child, typed) for child in ast.iter_child_nodes(node)]


def _merged_imports(nodes: list[ast.Import | ast.ImportFrom]) -> list[ast.Import | ast.ImportFrom]:
    """The parts' imports, one statement per module, names in the order first seen."""
    merged: dict[tuple[str, str | None, int], list[ast.alias]] = {}
    for node in nodes:
        key = ("from", node.module, node.level) if isinstance(node, ast.ImportFrom) else ("import", None, 0)
        seen = merged.setdefault(key, [])
        for alias in node.names:
            if not any(a.name == alias.name and a.asname == alias.asname for a in seen):
                seen.append(alias)
    return [
        ast.ImportFrom(module=module, names=aliases, level=level) if kind == "from" else ast.Import(names=aliases)
        for (kind, module, level), aliases in merged.items()
    ]
