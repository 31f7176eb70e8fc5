"""A data-tool registry written from seed 002's description: a platform whose UI renders tables and
charts straight from `structuredContent`, and that refuses to register a data tool whose return
annotation, or any result, does not declare its `sources`.

`register` reads a tool function's return annotation the way such a platform does (typing's public
`get_type_hints` with extras; `Annotated[CallToolResult, Model]` is the MCP SDK's form of "returns a
CallToolResult whose structuredContent is a Model") and asks the model's JSON schema for a required
`sources` array. `accept` checks a result: `sources` a non-empty list of absolute http(s) URLs,
`table` (when present) a header of strings then rows of the header's width.

Run as `python -m harness.data_registry SRC MODULE`: imports every tool function of the package in
SRC (in a process of its own, so two packages of one module name never meet) and prints
`{"registered": [...], "refused": {tool: reason}}`.
"""

from __future__ import annotations

import importlib
import json
import sys
import typing
from typing import Any
from urllib.parse import urlsplit

from pydantic import TypeAdapter


class Refused(Exception):
    """The platform refuses the tool or its result."""


def register(name: str, fn: Any) -> None:
    """Refuses a tool whose return annotation does not declare a required `sources` array."""
    returns = typing.get_type_hints(fn, include_extras=True).get("return")
    if typing.get_origin(returns) is not typing.Annotated:
        raise Refused(f"{name}: the return annotation {returns!r} declares no structured result, so no sources")
    declared = typing.get_args(returns)[1]
    schema = TypeAdapter(declared).json_schema()
    sources = schema.get("properties", {}).get("sources")
    if "sources" not in schema.get("required", []) or not sources or sources.get("type") != "array":
        raise Refused(f"{name}: the return annotation {declared!r} declares no required sources")


def accept(name: str, structured: Any) -> None:
    """Refuses a result without sources, or with a table the UI cannot render."""
    if not isinstance(structured, dict) or not isinstance(structured.get("sources"), list):
        raise Refused(f"{name}: the result has no sources")
    if not structured["sources"]:
        raise Refused(f"{name}: the result's sources are empty")
    for url in structured["sources"]:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise Refused(f"{name}: source {url!r} is not an http(s) URL")
        if parts.username or parts.password:
            raise Refused(f"{name}: source {url!r} carries credentials")
    table = structured.get("table")
    if table is not None:
        if not isinstance(table, list) or not table or not all(isinstance(h, str) for h in table[0]):
            raise Refused(f"{name}: the table has no header row")
        if any(not isinstance(row, list) or len(row) != len(table[0]) for row in table[1:]):
            raise Refused(f"{name}: a table row does not match the header")


def check_package(module: str) -> dict[str, Any]:
    tools = importlib.import_module(f"{module}.tools")
    registered, refused = [], {}
    for name, function in tools.INDEX.items():
        fn = getattr(importlib.import_module(f"{module}.tools.{function}"), function)
        try:
            register(name, fn)
            registered.append(name)
        except Refused as exc:
            refused[name] = str(exc)
    return {"registered": registered, "refused": refused}


def main() -> None:
    src, module = sys.argv[1:3]
    sys.path.insert(0, src)
    print(json.dumps(check_package(module)))


if __name__ == "__main__":
    main()
