"""Discovery mode: four tools over the package's (selected) tools, for APIs too big to list.

- `search_tools(query, limit=10, toolset=None)`: the best tools for a task (SQLite FTS5, bm25; see
  `search`), within one toolset when asked; an empty query lists a toolset's tools;
- `list_toolsets(toolset=None, cursor=None)`: the toolsets to browse (the API's tags, a big one split
  by path resource: `repos.branches`), each with a one-line description and its number of tools, in
  pages of at most LIST_BYTES;
- `describe_tool(name)`: a tool's definition exactly as full mode lists it;
- `call_tool(name, arguments)`: the tool's own result, through the same call path as in full mode
  (the same argument validation), with `_meta["io.github.typed-mcp/tool"]` naming the tool.

`call_tool` declares no outputSchema: its results are other tools' results (some without
structuredContent), which a strict client checks against nothing, so it accepts every one. The
four definitions are fixed text, so tools/list stays small whatever the API's size.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent

from . import fields
from .contracts import TOOL as TOOL_META  # in call_tool's results: the tool that was called
from .fields import FIELDS_SCHEMA
from .results import error_result
from .search import SearchIndex, load

SEARCH_TOOLS = "search_tools"
LIST_TOOLSETS = "list_toolsets"
DESCRIBE_TOOL = "describe_tool"
CALL_TOOL = "call_tool"
MAX_LIMIT = 50
LIST_BYTES = 3800  # a list_toolsets answer (its JSON text, and so its structuredContent) stays under 4 KB
# What a request says in a few words, a tool's or toolset's name and a page cursor are short; longer
# text is refused before anything reads it (a 12 KB query kept the value-recognising regexes busy for
# 40 s; a cursor is a page number, and Python refuses to read numbers past 4,300 digits).
MAX_QUERY_CHARS = 500
MAX_NAME_CHARS = 200
MAX_CURSOR_CHARS = 20

_NAME = {"type": "string", "maxLength": MAX_NAME_CHARS, "description": f"a tool name from {SEARCH_TOOLS}"}
_READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
DISCOVERY_TOOLS: list[dict[str, Any]] = [
    {
        "name": SEARCH_TOOLS,
        "title": "Search this server's tools",
        "description": (
            "Find the tools for a task, best first: give what you want to do in a few words (the API's "
            "own names for things find them best; search again in other words when nothing fits). "
            "Each result names its toolset (those after the fifth show other toolsets): search within "
            "one, or give an empty query to list its tools "
            f"({LIST_TOOLSETS} names them all). Then {DESCRIBE_TOOL} gives a tool's arguments and "
            f"{CALL_TOOL} calls it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "what you want to do, e.g. 'list open pull requests'",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10},
                "toolset": {
                    "type": "string",
                    "maxLength": MAX_NAME_CHARS,
                    "description": "search only this toolset (and those under it)",
                },
            },
            "required": ["query"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "title": {"type": ["string", "null"]},
                            "operation": {"type": "string"},
                            "description": {"type": "string"},
                            "toolset": {"type": "string"},
                            "deprecated": {"type": "boolean"},
                        },
                        "required": ["name", "title", "operation", "description", "toolset"],
                    },
                }
            },
            "required": ["tools"],
        },
        "annotations": {"title": "Search this server's tools", **_READ},
    },
    {
        "name": LIST_TOOLSETS,
        "title": "List the toolsets",
        "description": (
            "The groups of this server's tools (the API's tags, big ones split by resource), each with "
            "what it holds and its number of tools; give a toolset to list those under it. "
            f"{SEARCH_TOOLS} searches within one."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "toolset": {
                    "type": "string",
                    "maxLength": MAX_NAME_CHARS,
                    "description": "list the toolsets under this one",
                },
                "cursor": {
                    "type": "string",
                    "maxLength": MAX_CURSOR_CHARS,
                    "description": "next_cursor of the previous page",
                },
            },
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "toolsets": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "description": {"type": "string"},
                            "tools": {"type": "integer"},
                            "toolsets": {"type": "integer"},
                        },
                        "required": ["name", "description", "tools"],
                    },
                },
                "next_cursor": {"type": "string"},
            },
            "required": ["toolsets"],
        },
        "annotations": {"title": "List the toolsets", **_READ},
    },
    {
        "name": DESCRIBE_TOOL,
        "title": "Describe a tool",
        "description": (
            "A tool's full definition: description, inputSchema (the arguments to pass to "
            f"{CALL_TOOL}), outputSchema and annotations."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {"name": _NAME},
            "required": ["name"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "inputSchema": {"type": "object"}},
            "required": ["name", "inputSchema"],
        },
        "annotations": {"title": "Describe a tool", **_READ},
    },
    {
        "name": CALL_TOOL,
        "title": "Call a tool",
        "description": (
            "Call a tool by name with its arguments (as its inputSchema from "
            f"{DESCRIBE_TOOL} says); the result is the tool's own, or what `fields` (JMESPath) keeps of it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": _NAME,
                "arguments": {"type": "object", "description": "the tool's arguments", "default": {}},
                "fields": FIELDS_SCHEMA,
            },
            "required": ["name"],
        },
        "annotations": {"title": "Call a tool", "readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
    },
]

Refusal = Callable[[str], "CallToolResult | None"]


def _semantic(folder: Path, names: list[str]) -> Any:
    """The optional semantic ranking of the tools `names`, where the package ships it (`semantic.py`,
    with the tools' vectors) and its extra is installed; None otherwise (the search is by words alone)."""
    if not (folder / "semantic.json").is_file():  # generated without it: nothing to say
        return None
    try:
        from . import semantic  # type: ignore[attr-defined,unused-ignore]  # only in packages that ship vectors
    except ImportError:
        return None
    try:
        return semantic.Semantic(folder, names)
    except semantic.Unavailable as exc:
        semantic.log.warning("semantic search off, searching by words alone: %s", exc)
        return None


class Discovery:
    """The discovery tools over `tools` (tool definitions as `catalog.json` has them); `toolsets` are
    the package's toolsets as `--toolsets` takes them (name -> tool names), searchable too."""

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]],
        documents: Path,
        definition: Callable[[Mapping[str, Any]], dict[str, Any]],
        toolsets: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        self.by_name = {tool["name"]: tool for tool in tools}
        loaded = load(documents)
        self.index = SearchIndex(loaded.tools, only=set(self.by_name), thesaurus=loaded.thesaurus)
        self.index.semantic = _semantic(documents.parent, [doc["tool"] for doc in self.index.docs])
        self.definition = definition
        rows = {doc["tool"]: number for number, doc in enumerate(self.index.docs)}
        # The toolsets to browse, with the selected tools each holds (those under it included).
        self.toolsets = {entry["name"]: entry["description"] for entry in loaded.toolsets}
        self.members: dict[str, set[int]] = {}
        for name in self.toolsets:
            self.members[name] = self.index.toolset(name)
        for name, names in (toolsets or {}).items():
            self.members.setdefault(name, set()).update(rows[tool] for tool in names if tool in rows)
        self.members = {name: found for name, found in self.members.items() if found}

    def search_tools(self, arguments: Mapping[str, Any]) -> CallToolResult:
        query: Any = arguments.get("query")  # a string once `_text` accepts it
        limit, toolset = arguments.get("limit", 10), arguments.get("toolset")
        refused = _text(SEARCH_TOOLS, "query", query, MAX_QUERY_CHARS, "what you want to do")
        if refused:
            return refused
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            return error_result(f"{SEARCH_TOOLS}: `limit` must be an integer from 1 to {MAX_LIMIT}")
        if toolset is not None and (not isinstance(toolset, str) or toolset not in self.members):
            return self._unknown(SEARCH_TOOLS, toolset)
        within = None if toolset is None else self.members[toolset]
        return structured({"tools": self.index.search(query, limit, within)})

    def list_toolsets(self, arguments: Mapping[str, Any]) -> CallToolResult:
        """The top toolsets (or those under `toolset`, or that one when none is), a page at a time."""
        toolset, cursor = arguments.get("toolset"), arguments.get("cursor")
        if toolset is not None and (not isinstance(toolset, str) or toolset not in self.members):
            return self._unknown(LIST_TOOLSETS, toolset)
        page_of = "the next_cursor of a previous page"
        refused = None if cursor is None else _text(LIST_TOOLSETS, "cursor", cursor, MAX_CURSOR_CHARS, page_of)
        if refused:
            return refused
        if cursor is not None and not cursor.isdigit():
            return error_result(f"{LIST_TOOLSETS}: `cursor` must be {page_of}")
        if toolset is None:
            names = [name for name in self.toolsets if "." not in name]
        else:
            names = [name for name in self.toolsets if name.startswith(toolset + ".")] or [toolset]
        entries = []
        for name in names:
            if name not in self.members:
                continue  # the selection leaves none of its tools
            entry = {"name": name, "description": self.toolsets.get(name, ""), "tools": len(self.members[name])}
            under = sum(1 for other in self.toolsets if other.startswith(name + ".") and other in self.members)
            if under and toolset is None:
                entry["toolsets"] = under
            entries.append(entry)
        start = int(cursor or 0)
        page: list[dict[str, Any]] = []
        size = len(json.dumps({"toolsets": [], "next_cursor": str(len(entries))}, ensure_ascii=False))
        for entry in entries[start:]:
            added = len(json.dumps(entry, ensure_ascii=False)) + 2
            if page and size + added > LIST_BYTES:
                break
            page.append(entry)
            size += added
        found: dict[str, Any] = {"toolsets": page}
        if start + len(page) < len(entries):
            found["next_cursor"] = str(start + len(page))
        return structured(found)

    def _unknown(self, caller: str, toolset: Any) -> CallToolResult:
        refused = _text(caller, "toolset", toolset, MAX_NAME_CHARS, f"a toolset from {LIST_TOOLSETS}")
        if refused:
            return refused
        return error_result(f"{caller}: unknown toolset {toolset!r}: {LIST_TOOLSETS} names this server's toolsets")

    def describe_tool(self, arguments: Mapping[str, Any], refusal: Refusal) -> CallToolResult:
        name = arguments.get("name")
        found = self._tool(name, refusal, DESCRIBE_TOOL)
        if isinstance(found, CallToolResult):
            return found
        return structured(self.definition(found))

    async def call_tool(
        self,
        arguments: Mapping[str, Any],
        refusal: Refusal,
        call: Callable[[str, dict[str, Any]], Awaitable[CallToolResult]],
        select: Callable[[CallToolResult, str | None], Awaitable[CallToolResult]],
    ) -> CallToolResult:
        """The tool `name` `call`ed with `arguments`, its answer trimmed by `select` to `fields`."""
        name, tool_arguments = arguments.get("name"), arguments.get("arguments", {})
        found = self._tool(name, refusal, CALL_TOOL)
        if isinstance(found, CallToolResult):
            return found
        if not isinstance(tool_arguments, dict):
            return error_result(f"{CALL_TOOL}: `arguments` must be an object (the tool's arguments)")
        refused = fields.refusal(arguments.get("fields"))
        if refused:
            return error_result(refused)
        result = await select(await call(found["name"], tool_arguments), arguments.get("fields"))
        return result.model_copy(update={"meta": {**(result.meta or {}), TOOL_META: found["name"]}})

    def _tool(self, name: Any, refusal: Refusal, caller: str) -> Mapping[str, Any] | CallToolResult:
        refused = _text(caller, "name", name, MAX_NAME_CHARS, f"a tool name from {SEARCH_TOOLS}")
        if refused:
            return refused
        tool = self.by_name.get(name)
        if tool is not None:
            return tool
        return refusal(name) or error_result(
            f"{caller}: unknown tool {name!r}: {SEARCH_TOOLS} finds this server's tools"
        )


def _text(caller: str, field: str, value: Any, limit: int, what: str) -> CallToolResult | None:
    """The error for an argument `field` that is not a string of at most `limit` characters; None for one
    that is (checked before anything reads it)."""
    if not isinstance(value, str):
        return error_result(f"{caller}: `{field}` must be a string ({what})")
    if len(value) > limit:
        return error_result(f"{caller}: `{field}` is {len(value)} characters, over the limit of {limit}")
    return None


def structured(value: dict[str, Any]) -> CallToolResult:
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)
