"""`catalog.json`: the tools/list result the MCP SDK produced for a package, stored compactly."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from typed_mcp.runtime.contracts import CATALOG_FORMAT, CATALOG_SCHEMAS

# How `catalog.json` writes JSON (and measures a tool: the bytes of its JSON written so).
COMPACT: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}


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
    packer = Packer()
    return packer.text([packer.add(tool) for tool in tools], trimmed, budget)


class Packed(NamedTuple):
    size: int  # bytes of the tool's JSON
    name: str
    has_output: bool  # it has an outputSchema
    text: str  # the tool's JSON, each `$defs` entry the number of its text in its `Packer`


class Listed(NamedTuple):
    """A tool as a catalog worker sends it: its schemas' `$defs` entries the numbers of their texts in
    `shared` (the texts that worker sent so far: each definition once, however many tools use it)."""

    tool: dict[str, Any]
    shared: list[str]
    size: int  # bytes of the whole tool's JSON


def unpacked(listed: Listed) -> dict[str, Any]:
    """The whole tool `listed` stands for, each definition parsed from its text."""
    tool = dict(listed.tool)
    for key, defs in _defs(tool):
        tool[key] = {**tool[key], "$defs": {name: json.loads(listed.shared[n]) for name, n in defs.items()}}
    return tool


class Packer:
    """`pack` tool by tool, in any order: only each distinct `$defs` entry's text and each tool's
    text without them are kept, never a whole tool (listing a big API, the whole tools would be
    most of the generator's memory)."""

    def __init__(self) -> None:
        self._texts: dict[str, int] = {}  # a `$defs` entry's text -> its number, in the order seen

    def add(self, tool: dict[str, Any]) -> Packed:
        size = len(json.dumps(tool, **COMPACT).encode())
        return self._numbered(tool, size, lambda value: json.dumps(value, **COMPACT))

    def add_packed(self, tool: dict[str, Any], shared: list[str], size: int) -> Packed:
        """What `add` gives for the tool that a catalog of `pack` (or a catalog worker: `Listed`) holds
        as `tool` (each `$defs` entry the index of its text in `shared`) with its `size`: nothing is
        serialized again."""
        return self._numbered(tool, size, shared.__getitem__)

    def add_listed(self, listed: Listed) -> Packed:
        return self.add_packed(*listed)

    def _numbered(self, tool: dict[str, Any], size: int, text: Callable[[Any], str]) -> Packed:
        tool = dict(tool)
        for key, defs in _defs(tool):
            numbers = {name: self._texts.setdefault(text(value), len(self._texts)) for name, value in defs.items()}
            tool[key] = {**tool[key], "$defs": numbers}
        return Packed(size, tool["name"], "outputSchema" in tool, json.dumps(tool, **COMPACT))

    def text(self, tools: list[Packed], trimmed: dict[str, int] | None = None, budget: int | None = None) -> str:
        """`catalog.json` of `tools` (packed by `add`), in that order: shared entries are numbered by
        their first use there, whichever order the tools were added in."""
        texts = list(self._texts)
        order: dict[int, int] = {}  # number in the order seen -> number in the catalog
        packed = []
        for each in tools:
            tool = json.loads(each.text)
            for key, defs in _defs(tool):
                tool[key] = {**tool[key], "$defs": {name: order.setdefault(n, len(order)) for name, n in defs.items()}}
            packed.append(json.dumps(tool, **COMPACT))
        shared = [""] * len(order)
        for seen, number in order.items():
            shared[number] = texts[seen]
        # As `json.dumps` of the whole document writes it, each part from its own text.
        parts = [
            '{"format":' + json.dumps(CATALOG_FORMAT, **COMPACT),
            '"sizes":' + json.dumps([each.size for each in tools], **COMPACT),
            '"shared":[' + ",".join(shared) + "]",
            '"tools":[' + ",".join(packed) + "]",
        ]
        if trimmed:
            parts.append('"budget":' + json.dumps({"bytes": budget, "trimmed": trimmed}, **COMPACT))
        return ",".join(parts) + "}\n"


def read(text: str) -> dict[str, Any]:
    """A catalog as `pack` writes it, parsed but for its shared schemas and its tools: each of those
    is given as its text, checked to be as `pack` writes it, and no more than one of them is ever
    parsed at a time (on a big API they are the catalog, and as objects several times its bytes).
    ValueError for any other text."""
    decoder = json.JSONDecoder()
    data: dict[str, Any] = {}
    at = _past(text, 0, "{")
    while True:
        key, at = decoder.raw_decode(text, at)
        if not isinstance(key, str) or key in data:
            raise ValueError("not a catalog as typed-mcp writes it (a key twice, or not a string)")
        at = _past(text, at, ":")
        if key in ("shared", "tools"):
            data[key] = texts = []
            at = _past(text, at, "[")
            while not text.startswith("]", at):
                value, end = decoder.raw_decode(text, at)
                if json.dumps(value, **COMPACT) != text[at:end]:
                    raise ValueError(f"not a catalog as typed-mcp writes it (an item of {key} in another form)")
                texts.append(text[at:end])
                at = end + 1 if text.startswith(",", end) and not text.startswith("]", end + 1) else end
            at += 1
        else:
            data[key], at = decoder.raw_decode(text, at)
        if text.startswith("}", at):
            break
        at = _past(text, at, ",")
    if text[at + 1 :].strip():
        raise ValueError("not a catalog as typed-mcp writes it (text after it)")
    return data


def _past(text: str, at: int, mark: str) -> int:
    """Where `text` goes on after the `mark` it has at `at` (ValueError if it has none there)."""
    if not text.startswith(mark, at):
        raise ValueError(f"not a catalog as typed-mcp writes it ({mark!r} expected at character {at})")
    return at + 1


def _defs(tool: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The `$defs` of a tool's schemas, in the catalog's order."""
    found = []
    for key in CATALOG_SCHEMAS:
        schema = tool.get(key)
        if isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
            found.append((key, schema["$defs"]))
    return found


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
