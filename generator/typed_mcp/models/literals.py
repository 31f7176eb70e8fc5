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
from typing import Any

_LITERAL = re.compile(r"\bLiteral\[")


def _key(value: Any) -> tuple[str, str]:
    return type(value).__name__, repr(value)


def canonical(source: str) -> str:
    """`source` with the values of every `Literal[...]` of constants sorted (by type, then repr)."""
    if "Literal[" not in source:
        return source
    return canonical_tree(source, ast.parse(source))[0]


def canonical_tree(source: str, tree: ast.Module) -> tuple[str, ast.Module]:
    """`canonical` for a source its caller has parsed already (a big API's models take a good part
    of a second to parse): returns the new source and a tree for it. The tree is the same object,
    its Literal values put in the new order, unless an edit changed where lines break (then the new
    source is parsed again); line numbers in it stay right, column offsets inside Literals do not."""
    line_starts = [0]  # ast counts lines by "\n" only (not by str.splitlines' U+2028 and the like)
    for line in source.split("\n"):
        line_starts.append(line_starts[-1] + len(line) + 1)
    # Only statements with "Literal[" in their lines are walked: most of a big API's are not.
    hits = [bisect.bisect_right(line_starts, match.start()) for match in _LITERAL.finditer(source)]
    edits: list[tuple[int, int, str]] = []
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
            values = [item.value for item in items]  # type: ignore[attr-defined]
            ordered = sorted(values, key=_key)
            if ordered == values:
                continue
            start = line_starts[node.slice.lineno - 1] + _char_offset(
                source, line_starts, node.slice.lineno, node.slice.col_offset
            )
            end = line_starts[node.slice.end_lineno - 1] + _char_offset(
                source, line_starts, node.slice.end_lineno, node.slice.end_col_offset
            )  # type: ignore[arg-type]
            edits.append((start, end, ", ".join(repr(value) for value in ordered)))
            node.slice.elts.sort(key=lambda item: _key(item.value))  # type: ignore[attr-defined]
    same_lines = True
    for start, end, text in sorted(edits, reverse=True):
        same_lines = same_lines and source.count("\n", start, end) == 0
        source = source[:start] + text + source[end:]
    return source, tree if same_lines else ast.parse(source)


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, with a class's body statements in place of the class (smaller spans)."""
    found: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found += [*node.bases, *node.keywords, *node.decorator_list, *node.body]  # type: ignore[list-item]
        else:
            found.append(node)
    return found


def _char_offset(source: str, line_starts: list[int], lineno: int, byte_offset: int) -> int:
    """ast column offsets count UTF-8 bytes; string slicing counts characters."""
    line = source[line_starts[lineno - 1] : line_starts[lineno]]
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "ignore"))
