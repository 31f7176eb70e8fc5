"""Field selection in discovery mode: `call_tool`'s optional `fields`, a JMESPath expression
(https://jmespath.org, through the `jmespath` library) applied to the tool's structuredContent, so
an agent gets the few fields it needs instead of the whole answer.

Only discovery mode's `call_tool` takes it: it publishes no outputSchema, so its answer may be
shaped by the caller. A full-mode tool keeps its exact outputSchema, which a trimmed answer would
break. The selection is structuredContent as the tool gives it (`{"result": [...]}` for a list
answer, so `result[].name`); an object stays as it is, anything else is put under `result`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent

from .contracts import FIELDS

MAX_FIELDS_CHARS = 500  # an expression names a few fields; longer text is refused before parsing
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
    import jmespath
    from jmespath.exceptions import JMESPathError

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
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        value = jmespath.search(fields, result.structured_content)
    except JMESPathError as exc:  # a function given the wrong type of value, found only on this data
        message = f"call_tool: `fields` failed on this answer: {' '.join(str(exc).split())[:300]}"
        return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True, _meta=result.meta)
    structured = value if isinstance(value, dict) else {"result": value}
    text = json.dumps(structured, ensure_ascii=False)
    others = [block for block in result.content if not isinstance(block, TextContent)]
    meta = {**(result.meta or {}), FIELDS: fields}
    return CallToolResult(
        content=[TextContent(type="text", text=text), *others], structured_content=structured, _meta=meta
    )
