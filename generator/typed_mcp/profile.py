"""The profile of a package: what its tools' results are. One type from the command line and the
config through the plan to the templates; a module of its own so that the command line can name
it without loading the config's schema."""

from __future__ import annotations

from enum import Enum


class Profile(str, Enum):
    """The API's answer as it is (default), or {sources, data, table} for platforms that register
    only such tools (data-tools, docs/data-tools.md)."""

    DEFAULT = "default"
    DATA_TOOLS = "data-tools"
