"""`Literal[...]` values in one canonical order, in every generated module.

`typing` caches `Literal[...]` by the SET of its values: once `Literal['update', 'delete', 'add']`
exists in a process, writing `Literal['add', 'update', 'delete']` returns that first object, order
included. Which one comes first depends on which modules a process imported first (a tool's
first call, the generator's parallel catalog shards), so the enum order of a published schema
would depend on it too, and two runs of the generator on machines with different core counts
could write different catalogs. Sorting every Literal's values makes all orders the same.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable
from typing import Any

from typed_mcp.pysource import PySource, parse

_LITERAL = re.compile(r"\bLiteral\[")


def _key(value: Any) -> tuple[str, str]:
    return type(value).__name__, repr(value)


def ordered(values: Iterable[Any]) -> list[Any]:
    """`values` once each, in the order a generated `Literal[...]` holds them (for code written
    from the plan, which needs no `canonical` pass: a tool's parameters)."""
    return sorted(dict.fromkeys(values), key=_key)


def canonical(source: str) -> str:
    """`source` with the values of every `Literal[...]` of constants sorted (by type, then repr)."""
    if "Literal[" not in source:
        return source
    text = PySource(source)
    return text.edited(edits(text, parse(source)))


def edits(source: PySource, tree: ast.Module) -> list[tuple[int, int, str]]:
    """The edits of `source` (whose tree is `tree`) that sort its Literals: (start, end, text)."""
    # Only statements holding "Literal[" are walked (most of a big API's are not); the text search
    # only chooses where to look, the edits are placed by the tree.
    hits = [source.line_of(match.start()) for match in _LITERAL.finditer(source.text)]
    found: list[tuple[int, int, str]] = []
    for statement in _statements(tree):
        first = bisect.bisect_left(hits, statement.lineno)
        if first == len(hits) or hits[first] > (statement.end_lineno or statement.lineno):
            continue
        for node in ast.walk(statement):
            if not (
                isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal"
            ):
                continue
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(items) < 2 or not all(isinstance(item, ast.Constant) for item in items):
                continue
            values = [item.value for item in items if isinstance(item, ast.Constant)]  # all of them (above)
            ordered = sorted(values, key=_key)
            if ordered != values:
                start, end = source.span(node.slice)
                found.append((start, end, ", ".join(repr(value) for value in ordered)))
    return found


def _statements(tree: ast.Module) -> list[ast.stmt | ast.expr | ast.keyword]:
    """Top-level statements, with a class's body statements in place of the class (smaller spans)."""
    found: list[ast.stmt | ast.expr | ast.keyword] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found += [*node.bases, *node.keywords, *node.decorator_list, *node.body]
        else:
            found.append(node)
    return found
