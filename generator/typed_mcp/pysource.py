"""Python source text and the places of its syntax tree's nodes in it.

Every edit and cut of generated Python goes through here, never through lines of text: spec text
sits inside the generated code's string literals, and `str.splitlines()` (or a regex anchored at
line starts) breaks lines where Python does not (U+2028, U+0085, form feed...). A node's position
is `ast`'s: line numbers as the tokenizer counts lines (at "\\n", "\\r\\n" and "\\r" only, the way
`ast.get_source_segment` splits them) and columns in UTF-8 bytes; here they become offsets in the
string, computed once per source.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable

# The tokenizer's line ends (and ast's `_splitlines_no_ff`): not form feed, U+2028 and the like.
_LINE_END = re.compile(r"\r\n|\r|\n")
# What generated source holds only as escapes inside string literals: line breaks other than "\n"
# (the tokenizer reads "\r" as one, str.splitlines() many more: U+2028, U+0085, form feed...) and
# every other control character. A tab stays as it is.
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def escape_unprintable(text: str) -> str:
    """`text` with each UNPRINTABLE character written as its Python escape (`\\x0b`, `\\u2028`)."""
    return UNPRINTABLE.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", text)


class PySource:
    """A source and the string offset of each of its lines' starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0, *(m.end() for m in _LINE_END.finditer(text))]

    def offset(self, lineno: int, col_offset: int) -> int:
        """The string offset of an `ast` position (1-based line, column in UTF-8 bytes)."""
        start = self._starts[lineno - 1]
        if col_offset == 0:
            return start
        end = self._starts[lineno] if lineno < len(self._starts) else len(self.text)
        line = self.text[start:end]
        if line.isascii():
            return start + col_offset
        return start + len(line.encode("utf-8")[:col_offset].decode("utf-8"))

    def line_of(self, offset: int) -> int:
        """The (1-based) line the string offset `offset` is on."""
        return bisect.bisect_right(self._starts, offset)

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Where `node` is in the text: [start, end) string offsets. A decorated definition starts
        at its first decorator."""
        first = min([node, *getattr(node, "decorator_list", [])], key=lambda n: (n.lineno, n.col_offset))
        return (
            self.offset(first.lineno, first.col_offset),
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]  # a parsed node: placed
        )

    def segment(self, node: ast.AST) -> str:
        """The text of `node` (as `ast.get_source_segment`, decorators included)."""
        start, end = self.span(node)
        return self.text[start:end]

    def line_start(self, node: ast.stmt) -> int:
        """The offset of the start of the line `node` begins on."""
        return self._starts[node.lineno - 1]

    def next_line(self, offset: int) -> int:
        """The offset of the start of the line after the one `offset` is on (the end of the text on the last)."""
        line = self.line_of(offset)
        return self._starts[line] if line < len(self._starts) else len(self.text)

    def edited(self, edits: Iterable[tuple[int, int, str]]) -> str:
        """The text with each [start, end) replaced by its text; the spans may not overlap."""
        out: list[str] = []
        at = 0
        for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
            if start < at:
                raise ValueError("overlapping edits of a generated source")
            out += [self.text[at:start], text]
            at = end
        out.append(self.text[at:])
        return "".join(out)


def parse(text: str, filename: str = "<generated>") -> ast.Module:
    """`ast.parse`, with a source Python cannot read (a NUL, bad syntax) as a SyntaxError."""
    try:
        return ast.parse(text, filename)
    except ValueError as exc:  # "source code string cannot contain null bytes"
        raise SyntaxError(str(exc)) from None
