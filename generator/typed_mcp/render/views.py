"""Table views (MCP Apps): which tools answer a list of objects, where the rows are in their
`structuredContent`, and the columns the spec declares for a row.

A tool gets a view when its answer is an array of objects (published wrapped, as `{"result": [...]}`)
or an object holding exactly one array of objects (`{"stations": [...], "next": ...}`, as most list
endpoints answer). The columns are the item schema's properties in the spec's order (`allOf` parts
merged, writeOnly properties left out, as the response model leaves them out); the view shows any
other field the rows carry after them.
"""

from __future__ import annotations

from typing import Any

from typed_mcp.plan.ir import ApiPlan, Operation
from typed_mcp.spec.normalize import Document

Table = tuple[tuple[str, ...], tuple[str, ...]]  # (keys from structuredContent to the rows, columns)
_DEPTH = 8  # `allOf` nesting followed when collecting properties; deeper parts add no columns


def table_views(
    plan: ApiPlan, doc: Document | None, wrapped: set[str], root: tuple[str, ...] = ("result",)
) -> dict[str, Table]:
    """Tool name -> its table, for every tool with an outputSchema whose answer is a table;
    `wrapped`: the tools whose structuredContent is `{<root>: <the answer>}`."""
    if doc is None:
        return {}
    views = {}
    for op in plan.operations:
        table = _table_of(op, plan, doc, root if op.tool_name in wrapped else ())
        if table is not None:
            views[op.tool_name] = table
    return views


def _table_of(op: Operation, plan: ApiPlan, doc: Document, prefix: tuple[str, ...]) -> Table | None:
    key = op.response.schema_key
    if not op.has_output_schema or key is None or key not in plan.schemas:
        return None
    stored = plan.schemas[key]
    schema = doc.resolve_pointer(stored) if isinstance(stored, str) else stored
    schema = _not_null(doc, schema)
    columns = _columns(doc, _items(doc, schema))
    if columns:
        return prefix, columns
    arrays = [
        (name, cols) for name, prop in _properties(doc, schema).items() if (cols := _columns(doc, _items(doc, prop)))
    ]
    if len(arrays) != 1:  # several arrays: which one is the answer is not for a view to guess
        return None
    name, columns = arrays[0]
    return (*prefix, name), columns


def _not_null(doc: Document, schema: Any) -> Any:
    """The schema itself, or the one branch of an `anyOf`/`oneOf` that is not `{"type": "null"}`
    (OpenAPI 3.1's nullable answer)."""
    schema, _ = doc.deref(schema, "#")
    branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
    if isinstance(branches, list):
        others = [b for b in branches if doc.deref(b, "#")[0] != {"type": "null"}]
        if len(others) == 1:
            return doc.deref(others[0], "#")[0]
    return schema


def _items(doc: Document, schema: Any) -> Any:
    """The item schema of an array schema, or None."""
    schema, _ = doc.deref(schema, "#")
    if not isinstance(schema, dict):
        return None
    types = schema.get("type")
    if types == "array" or (isinstance(types, list) and "array" in types) or "items" in schema:
        return schema.get("items")
    return None


def _columns(doc: Document, item: Any) -> tuple[str, ...]:
    """The declared properties of an object item schema (empty when it is not one)."""
    return tuple(_properties(doc, item)) if item is not None else ()


def _properties(doc: Document, schema: Any, depth: int = 0) -> dict[str, Any]:
    """Property name -> schema of an object schema, `allOf` parts first (as the models inherit them)."""
    schema, _ = doc.deref(schema, "#")
    if not isinstance(schema, dict) or depth > _DEPTH:
        return {}
    found: dict[str, Any] = {}
    for part in schema.get("allOf") or ():
        found.update(_properties(doc, part, depth + 1))
    for name, prop in (schema.get("properties") or {}).items():
        resolved, _ = doc.deref(prop, "#")
        if isinstance(name, str) and not (isinstance(resolved, dict) and resolved.get("writeOnly") is True):
            found[name] = prop
    return found
