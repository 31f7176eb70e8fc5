"""Field selection in discovery mode: `call_tool`'s optional `fields`, a JMESPath expression
(https://jmespath.org, through the `jmespath` library) applied to the tool's structuredContent, so
an agent gets the few fields it needs instead of the whole answer.

Only discovery mode's `call_tool` takes it: it publishes no outputSchema, so its answer may be
shaped by the caller. A full-mode tool keeps its exact outputSchema, which a trimmed answer would
break. The selection is structuredContent as the tool gives it (`{"result": [...]}` for a list
answer, so `result[].name`); an object stays as it is, anything else is put under `result`.

An expression of a few hundred characters can ask for more than any memory holds (`[@,@][]` sixty
times doubles a list sixty times) or for a value that is small in memory but endless to write out or
compare (`[@,@]` sixty times shares one list 2**60 times). So the selection runs in an interpreter
that counts what it does and what it builds: every value an expression step makes is measured as
written out (shared parts counted each time they appear, each part measured once), and a step past
`MAX_STEPS`, or a value over twice the answer's own size, stops the selection with an error.
"""

from __future__ import annotations

import json
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.visitor import Options, TreeInterpreter
from mcp.types import CallToolResult, TextContent

from .contracts import FIELDS
from .results import error_result

MAX_FIELDS_CHARS = 500  # an expression names a few fields; longer text is refused before parsing
MAX_STEPS = 4_000_000  # expression steps one selection may take: a few seconds in a worker thread
MIN_SIZE = 100_000  # the size any selection may build, however small its answer (see `_Bounded`)
FIELDS_SCHEMA = {
    "type": "string",
    "maxLength": MAX_FIELDS_CHARS,
    "description": (
        "optional: a JMESPath expression that keeps only what you need of the tool's structured result, "
        "e.g. 'result[].{name: name, id: id}' or 'items[?state==`open`].title'"
    ),
}


def refusal(fields: Any) -> str | None:
    """Why `fields` cannot be used (not a string, too long, not JMESPath); None when it can."""
    if fields is None:
        return None
    if not isinstance(fields, str) or not fields.strip() or len(fields) > MAX_FIELDS_CHARS:
        return f"call_tool: `fields` must be a JMESPath expression of 1 to {MAX_FIELDS_CHARS} characters"
    try:
        jmespath.compile(fields)
    except JMESPathError as exc:
        return f"call_tool: `fields` is not a JMESPath expression: {' '.join(str(exc).split())[:300]}"
    return None


def select(result: CallToolResult, fields: str | None) -> CallToolResult:
    """`result` trimmed to what `fields` selects of its structuredContent (an error result, or one
    without structured data, as it is)."""
    if fields is None or result.is_error or result.structured_content is None:
        return result
    data = result.structured_content
    try:
        value = _Bounded(data).visit(jmespath.compile(fields).parsed, data)
    except (JMESPathError, Overgrown) as exc:  # a function given the wrong type of value, found only on this data
        message = f"call_tool: `fields` failed on this answer: {' '.join(str(exc).split())[:300]}"
        return error_result(message, result.meta)
    structured = value if isinstance(value, dict) else {"result": value}
    text = json.dumps(structured, ensure_ascii=False)
    others = [block for block in result.content if not isinstance(block, TextContent)]
    meta = {**(result.meta or {}), FIELDS: fields}
    return CallToolResult(
        content=[TextContent(type="text", text=text), *others], structured_content=structured, _meta=meta
    )


class Overgrown(Exception):
    """A selection past its bounds (`_Bounded`)."""


class _Bounded(TreeInterpreter):  # type: ignore[misc]  # jmespath ships no type information
    """jmespath's own interpreter, stopped past `MAX_STEPS` steps or once a step makes a value bigger,
    written out, than twice the answer (at least `MIN_SIZE`): what a value costs to print, compare or
    send is its written-out size, which sharing can make far larger than its memory."""

    def __init__(self, data: Any) -> None:
        super().__init__(Options())
        self._sizes: dict[int, tuple[Any, int]] = {}  # id -> (the value, kept alive so its id stays its own; size)
        self._steps = 0
        self._limit = max(MIN_SIZE, 2 * self._size(data))

    def visit(self, node: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        self._steps += 1
        if self._steps > MAX_STEPS:
            raise Overgrown(f"`fields` takes more than {MAX_STEPS:,} steps on this answer: select less")
        value = super().visit(node, *args, **kwargs)
        if isinstance(value, (list, dict, str)) and self._size(value) > self._limit:
            raise Overgrown(f"`fields` selects more than twice this answer ({self._limit:,} units): select less")
        return value

    def _size(self, value: Any) -> int:
        """Written-out size: 1 per number, boolean, null and container, 1 per character of a string or
        key, a container's own size plus its members'. Each container is measured once (by identity),
        without recursion (a value may nest deeper than Python's stack)."""
        if not isinstance(value, (list, dict)):
            return len(value) if isinstance(value, str) else 1
        stack: list[tuple[Any, bool]] = [(value, False)]
        while stack:
            item, ready = stack.pop()
            if id(item) in self._sizes:
                continue
            members = list(item.values()) if isinstance(item, dict) else item
            if not ready:
                stack.append((item, True))
                stack.extend((member, False) for member in members if isinstance(member, (list, dict)))
                continue
            size = 1 + (sum(len(key) for key in item) if isinstance(item, dict) else 0)
            for member in members:
                if isinstance(member, (list, dict)):
                    size += self._sizes[id(member)][1]
                else:
                    size += len(member) if isinstance(member, str) else 1
            self._sizes[id(item)] = (item, size)
        return self._sizes[id(value)][1]
