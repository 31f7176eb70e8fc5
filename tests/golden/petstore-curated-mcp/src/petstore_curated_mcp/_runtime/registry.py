"""The tool registry: what a tool function tells the server about itself."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

from .contracts import OPERATION_META


@dataclass(frozen=True)
class ToolEntry:
    fn: Callable[..., Any]
    operation: str  # "GET /pets/{id}": the REST operation behind the tool
    name: str
    title: str | None
    description: str
    annotations: ToolAnnotations
    structured: bool


def tool(
    *,
    operation: str,
    name: str,
    description: str,
    title: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = True,
    annotation_title: str | None = None,
    structured: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Describe a tool function for the server (`fn.tool`). The function itself stays an ordinary
    coroutine that a user can call directly. Every hint is given explicitly, `destructiveHint` too
    (MCP's default for a missing one is true, and directories require it); `annotation_title`
    replaces the tool's title in the annotations only."""
    annotations = ToolAnnotations(
        title=annotation_title or title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )

    def describe(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.tool = ToolEntry(fn, operation, name, title, description, annotations, structured)  # type: ignore[attr-defined]
        return fn

    return describe


def tool_entry(package: str, index: Mapping[str, str], name: str) -> ToolEntry:
    """The tool `name` of the package `package` (its module name), whose `tools.INDEX` is `index`:
    its function and description, importing its module."""
    module = index[name]
    entry: ToolEntry = getattr(importlib.import_module(f"{package}.tools.{module}"), module).tool
    return entry


def register_tool(server: MCPServer, entry: ToolEntry, meta: Mapping[str, Any], icons: list[Any] | None = None) -> None:
    """Register the tool `entry` on `server`, its `_meta` naming its operation beside `meta`: the one
    way the package's servers register a tool, and the generator's catalog worker lists it."""
    # structured_output=True: a return type that cannot produce an outputSchema fails loudly
    # instead of silently publishing the tool without one.
    server.add_tool(
        entry.fn,
        name=entry.name,
        title=entry.title,
        description=entry.description,
        annotations=entry.annotations,
        icons=icons,
        meta={OPERATION_META: entry.operation, **meta},
        structured_output=entry.structured,
    )
