"""Which tools a server publishes: toolsets, tool names and read-only, chosen when it starts.

A toolset is a name -> tool names map stored in the package (`tools.TOOLSETS`: the spec's tags in
snake_case, recorded when the package was generated). `--toolsets` and `--tools` add up;
`--read-only` then keeps only the tools whose annotations say `readOnlyHint`.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


class SelectionError(ValueError):
    """A selection that names what the package does not have: one line, listing the valid names."""


def names(text: str | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def env_flag(value: str | None, variable: str) -> bool:
    """An on/off environment variable: 1/true/yes/on or 0/false/no/off (or unset/empty)."""
    text = (value or "").strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SelectionError(f"{variable}={value!r}: use 1/true/yes/on or 0/false/no/off")


def option(given: str | None, variable: str) -> list[str]:
    """A comma-separated command-line option's names, else its environment variable's."""
    return names(given if given is not None else os.environ.get(variable))


def flag(given: bool | None, variable: str) -> bool:
    """An on/off command-line flag, else its environment variable."""
    return bool(given) or env_flag(os.environ.get(variable), variable)


@dataclass(frozen=True)
class Selection:
    toolsets: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    read_only: bool = False
    env_prefix: str = ""  # for the messages: the environment variables' names

    @classmethod
    def from_options(
        cls, toolsets: str | None, tools: str | None, read_only: bool | None, env_prefix: str
    ) -> Selection:
        """From the command line's options, each defaulting to `<env_prefix>_TOOLSETS`, `_TOOLS`, `_READ_ONLY`."""
        return cls(
            toolsets=tuple(option(toolsets, f"{env_prefix}_TOOLSETS")),
            tools=tuple(option(tools, f"{env_prefix}_TOOLS")),
            read_only=flag(read_only, f"{env_prefix}_READ_ONLY"),
            env_prefix=env_prefix,
        )

    @property
    def everything(self) -> bool:
        return not (self.toolsets or self.tools or self.read_only)

    def select(self, tools: Sequence[Mapping[str, Any]], toolsets: Mapping[str, Iterable[str]]) -> set[str]:
        """The names of the selected tools among `tools` (tool definitions, as tools/list has them)."""
        all_names = [tool["name"] for tool in tools]
        _check("toolset", self.toolsets, sorted(toolsets))
        _check("tool", self.tools, all_names)
        if self.toolsets or self.tools:
            chosen = set(self.tools)
            for toolset in self.toolsets:
                chosen.update(toolsets[toolset])
        else:
            chosen = set(all_names)
        if self.read_only:
            chosen &= {tool["name"] for tool in tools if read_only(tool)}
        return chosen

    def not_enabled(self, name: str, tool: Mapping[str, Any], toolsets: Mapping[str, Iterable[str]]) -> str:
        """Why the package's tool `name` is not served, and how to enable it."""
        prefix = f"{self.env_prefix}_" if self.env_prefix else ""
        if self.read_only and not read_only(tool):
            how = f"it is not read-only: start the server without --read-only (or {prefix}READ_ONLY)"
        else:
            groups = sorted(toolset for toolset, members in toolsets.items() if name in members)
            how = f"start the server with --tools {name} (or {prefix}TOOLS)"
            if groups:
                how += f" or --toolsets {groups[0]} (or {prefix}TOOLSETS)"
        return f"tool {name!r} is not enabled on this server: {how}"


def read_only(tool: Mapping[str, Any]) -> bool:
    return bool((tool.get("annotations") or {}).get("readOnlyHint"))


def _check(kind: str, given: Iterable[str], valid: Sequence[str]) -> None:
    unknown = [name for name in given if name not in set(valid)]
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], valid, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    listed = ", ".join(valid) if valid else "none (this package has no toolsets)"
    raise SelectionError(f"unknown {kind} {unknown[0]!r}{hint}; valid {kind}s: {listed}")
