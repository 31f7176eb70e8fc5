"""Discovery mode: three tools over the package's (selected) tools, for APIs too big to list.

- `search_tools(query, limit=10)`: the best tools for a task (SQLite FTS5, bm25; see `search`);
- `describe_tool(name)`: a tool's definition exactly as full mode lists it;
- `call_tool(name, arguments)`: the tool's own result, through the same call path as in full mode
  (the same argument validation), with `_meta["typed-mcp/tool"]` naming the tool.

`call_tool` declares no outputSchema: its results are other tools' results (some without
structuredContent), which a strict client checks against nothing, so it accepts every one. The
three definitions are fixed text, so tools/list stays small whatever the API's size.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent

from .search import SearchIndex, load

SEARCH_TOOLS = "search_tools"
DESCRIBE_TOOL = "describe_tool"
CALL_TOOL = "call_tool"
TOOL_META = "typed-mcp/tool"  # in call_tool's results: the tool that was called
MAX_LIMIT = 50

_READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
DISCOVERY_TOOLS: list[dict[str, Any]] = [
    {
        "name": SEARCH_TOOLS,
        "title": "Search this server's tools",
        "description": (
            "Find the tools for a task, best first: give what you want to do in a few words (the API's "
            "own names for things find them best; search again in other words when nothing fits). "
            f"Then {DESCRIBE_TOOL} gives a tool's arguments and {CALL_TOOL} calls it."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what you want to do, e.g. 'list open pull requests'"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10},
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
                            "description": {"type": "string"},
                        },
                        "required": ["name", "title", "description"],
                    },
                }
            },
            "required": ["tools"],
        },
        "annotations": {"title": "Search this server's tools", **_READ},
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
            "properties": {"name": {"type": "string", "description": f"a tool name from {SEARCH_TOOLS}"}},
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
            f"{DESCRIBE_TOOL} says); the result is the tool's own."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": f"a tool name from {SEARCH_TOOLS}"},
                "arguments": {"type": "object", "description": "the tool's arguments", "default": {}},
            },
            "required": ["name"],
        },
        "annotations": {"title": "Call a tool", "readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
    },
]

Refusal = Callable[[str], "CallToolResult | None"]


class Discovery:
    """The discovery tools over `tools` (tool definitions as `catalog.json` has them)."""

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]],
        documents: Path,
        definition: Callable[[Mapping[str, Any]], dict[str, Any]],
    ) -> None:
        self.by_name = {tool["name"]: tool for tool in tools}
        found, thesaurus = load(documents)
        self.index = SearchIndex(found, only=set(self.by_name), thesaurus=thesaurus)
        self.definition = definition

    def search_tools(self, arguments: Mapping[str, Any]) -> CallToolResult:
        query, limit = arguments.get("query"), arguments.get("limit", 10)
        if not isinstance(query, str):
            return error(f"{SEARCH_TOOLS}: `query` must be a string")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            return error(f"{SEARCH_TOOLS}: `limit` must be an integer from 1 to {MAX_LIMIT}")
        return structured({"tools": self.index.search(query, limit)})

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
    ) -> CallToolResult:
        name, tool_arguments = arguments.get("name"), arguments.get("arguments", {})
        found = self._tool(name, refusal, CALL_TOOL)
        if isinstance(found, CallToolResult):
            return found
        if not isinstance(tool_arguments, dict):
            return error(f"{CALL_TOOL}: `arguments` must be an object (the tool's arguments)")
        result = await call(found["name"], tool_arguments)
        return result.model_copy(update={"meta": {**(result.meta or {}), TOOL_META: found["name"]}})

    def _tool(self, name: Any, refusal: Refusal, caller: str) -> Mapping[str, Any] | CallToolResult:
        if not isinstance(name, str):
            return error(f"{caller}: `name` must be a string (a tool name from {SEARCH_TOOLS})")
        tool = self.by_name.get(name)
        if tool is not None:
            return tool
        return refusal(name) or error(f"{caller}: unknown tool {name!r}: {SEARCH_TOOLS} finds this server's tools")


def structured(value: dict[str, Any]) -> CallToolResult:
    text = json.dumps(value, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)


def error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
