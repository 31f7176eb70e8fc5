"""The tool registry: what a tool function tells the server about itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.types import ToolAnnotations


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
