"""Table views (MCP Apps): which tools answer a list of objects, where the rows are in their
`structuredContent`, and the columns the spec declares for a row. The plan reads each tool's table
from its answer's schema (plan/resolved.py); here it is placed under the key a wrapped answer has."""

from __future__ import annotations

from typed_mcp.plan.ir import ApiPlan, Table


def table_views(plan: ApiPlan, wrapped: set[str], root: tuple[str, ...] = ("result",)) -> dict[str, Table]:
    """Tool name -> its table, for every tool with an outputSchema whose answer is a table;
    `wrapped`: the tools whose structuredContent is `{<root>: <the answer>}`."""
    views = {}
    for op in plan.operations:
        if op.table is not None:
            rows, columns = op.table
            views[op.tool_name] = ((*root, *rows) if op.tool_name in wrapped else rows), columns
    return views
