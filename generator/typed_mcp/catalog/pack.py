"""`catalog.json`: the tools/list result the MCP SDK produced for a package, stored compactly."""

from __future__ import annotations

import json
from typing import Any

from typed_mcp.runtime.contracts import CATALOG_FORMAT, CATALOG_SCHEMAS

_COMPACT: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


def pack(tools: list[dict[str, Any]], trimmed: dict[str, int] | None = None, budget: int | None = None) -> str:
    """`catalog.json`: the tools/list result, with every `$defs` entry stored once.

    Pydantic makes each schema self-contained, so a model used by 300 tools is repeated 300 times
    (on a big API, most of the catalog's bytes). Here a repeated `$defs` entry becomes the index of
    a shared schema, an integer where a schema (an object or a boolean) would be, so it can never be
    mistaken for one; the server puts the same object back in every place, which keeps the file, its
    parse time and the server's memory small. `sizes` (bytes of each tool's JSON) let the server cut
    pages without serializing anything. `budget` records the tools the schema budget trimmed (tool ->
    depth of references kept), when there are some.
    """
    shared: list[Any] = []
    index: dict[str, int] = {}
    packed, sizes = [], []
    for tool in tools:
        sizes.append(len(json.dumps(tool, **_COMPACT).encode()))
        tool = dict(tool)
        for key in CATALOG_SCHEMAS:
            schema = tool.get(key)
            if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
                defs = {}
                for name, value in schema["$defs"].items():
                    number = index.setdefault(json.dumps(value, **_COMPACT), len(shared))
                    if number == len(shared):
                        shared.append(value)
                    defs[name] = number
                tool[key] = {**schema, "$defs": defs}
        packed.append(tool)
    data: dict[str, Any] = {"format": CATALOG_FORMAT, "sizes": sizes, "shared": shared, "tools": packed}
    if trimmed:
        data["budget"] = {"bytes": budget, "trimmed": trimmed}
    return json.dumps(data, **_COMPACT) + "\n"


def layout_problem(data: Any) -> str | None:
    """What keeps `data` (a parsed `catalog.json`) from having the layout `pack` writes and the
    server reads; None when it has it."""
    if not isinstance(data, dict) or data.get("format") != CATALOG_FORMAT:
        return f"not a {CATALOG_FORMAT} document"
    tools, sizes, shared = data.get("tools"), data.get("sizes"), data.get("shared")
    if not (isinstance(tools, list) and isinstance(sizes, list) and isinstance(shared, list)):
        return "tools, sizes and shared are not lists"
    if len(sizes) != len(tools) or not all(type(size) is int and size >= 0 for size in sizes):
        return "the sizes are not one count per tool"
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            return "a tool that is not an object with a name"
        for key in ("inputSchema", "outputSchema"):
            schema = tool.get(key)
            defs = schema.get("$defs") if isinstance(schema, dict) else None
            if schema is not None and not isinstance(schema, dict):
                return f"a {key} that is not an object"
            if defs is not None and not (
                isinstance(defs, dict) and all(type(i) is int and 0 <= i < len(shared) for i in defs.values())
            ):
                return f"a {key} whose $defs are not shared schemas"
    budget = data.get("budget")
    if budget is not None and not (isinstance(budget, dict) and isinstance(budget.get("trimmed"), dict)):
        return "a budget that is not an object of trimmed tools"
    if set(data) - {"format", "sizes", "shared", "tools", "budget"}:
        return "keys a catalog does not have"
    return None
