"""Tools per request (hosted mode): the `X-MCP-Toolsets`, `X-MCP-Tools` and `X-MCP-Readonly` headers
of a streamable HTTP request narrow the tools the server was started with, for that request's
tools/list, tools/call and resources/read alike. They never widen it: what the headers select is
intersected with the server's own selection, so a client cannot reach a tool the operator left out.

The headers take what the command line takes (`X-MCP-Toolsets: forecasts,reports`, `X-MCP-Tools:
get_weather`, `X-MCP-Readonly: true`), toolsets and tools adding up, read-only keeping the read
tools of those. A name the package does not have is refused with the valid names, as at start.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from .selection import Selection, SelectionError, env_flag, names

TOOLSETS_HEADER, TOOLS_HEADER, READONLY_HEADER = "X-MCP-Toolsets", "X-MCP-Tools", "X-MCP-Readonly"
MAX_HEADER_CHARS = 4096  # a list of names; longer is refused before it is split
CACHED = 32  # the narrowed catalogs kept, each for one combination of the headers

C = TypeVar("C")


@dataclass(frozen=True)
class Narrowed:
    """The server's selection (`base`, which keeps `served`) intersected with a request's (`wanted`)."""

    base: Selection
    wanted: Selection
    served: frozenset[str]

    everything = False

    @property
    def env_prefix(self) -> str:
        return self.base.env_prefix

    def select(self, tools: Sequence[Mapping[str, Any]], toolsets: Mapping[str, Iterable[str]]) -> set[str]:
        return self.wanted.select(tools, toolsets) & self.served

    def not_enabled(self, name: str, tool: Mapping[str, Any], toolsets: Mapping[str, Iterable[str]]) -> str:
        if name not in self.served:
            return self.base.not_enabled(name, tool, toolsets)
        return (
            f"tool {name!r} is not among the tools this request's {TOOLSETS_HEADER}, {TOOLS_HEADER} and "
            f"{READONLY_HEADER} headers allow ({self.said()}): send them without narrowing it away"
        )

    def said(self) -> str:
        parts = [f"{TOOLSETS_HEADER}: {','.join(self.wanted.toolsets)}"] if self.wanted.toolsets else []
        parts += [f"{TOOLS_HEADER}: {','.join(self.wanted.tools)}"] if self.wanted.tools else []
        parts += [f"{READONLY_HEADER}: true"] if self.wanted.read_only else []
        return "; ".join(parts)


def wanted(headers: Mapping[str, str] | None) -> Selection | None:
    """The selection a request's headers ask for; None without any of them (or on stdio)."""
    if headers is None:
        return None
    given = {name: headers.get(name) for name in (TOOLSETS_HEADER, TOOLS_HEADER, READONLY_HEADER)}
    if all(value is None for value in given.values()):
        return None
    for name, value in given.items():
        if value is not None and len(value) > MAX_HEADER_CHARS:
            raise MCPError(code=INVALID_PARAMS, message=f"{name}: over {MAX_HEADER_CHARS} characters")
    try:
        read_only = env_flag(given[READONLY_HEADER], READONLY_HEADER)
    except SelectionError as exc:
        raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
    selection = Selection(tuple(names(given[TOOLSETS_HEADER])), tuple(names(given[TOOLS_HEADER])), read_only)
    return None if selection.everything else selection


class Narrowing(Generic[C]):
    """The catalog a request sees: the server's own (`base`), or one `build` makes from a `Narrowed`
    selection, kept for the next request with the same headers."""

    def __init__(self, base: C, selection: Selection, served: Iterable[str], build: Callable[[Narrowed], C]) -> None:
        self.base = base
        self.selection = selection
        self.served = frozenset(served)
        self.build = build
        self.cache: OrderedDict[tuple[Any, ...], C] = OrderedDict()

    def catalog(self, headers: Mapping[str, str] | None) -> C:
        selection = wanted(headers)
        if selection is None:
            return self.base
        key = (selection.toolsets, selection.tools, selection.read_only)
        found = self.cache.get(key)
        if found is None:
            try:
                found = self.build(Narrowed(self.selection, selection, self.served))
            except SelectionError as exc:
                raise MCPError(code=INVALID_PARAMS, message=f"{TOOLSETS_HEADER}/{TOOLS_HEADER}: {exc}") from None
            self.cache[key] = found
            while len(self.cache) > CACHED:
                self.cache.popitem(last=False)
        self.cache.move_to_end(key)
        return found
