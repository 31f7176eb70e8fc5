"""`catalog.json`: the tools/list result the MCP SDK produced for a package, stored compactly."""

from __future__ import annotations

import json
from typing import Any

from typed_mcp.runtime.contracts import CATALOG_FORMAT, CATALOG_SCHEMAS

_COMPACT = {"ensure_ascii": False, "separators": (",", ":")}


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
