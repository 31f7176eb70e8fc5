"""Table views as MCP Apps (`io.modelcontextprotocol/ui`): a list tool's `_meta.ui.resourceUri`
names a `ui://` HTML resource that the host renders with the tool's result.

Every view is the one template `table_view.html` with the tool's table put in: the keys leading
from `structuredContent` to the rows and the columns the spec declares (`tools.VIEWS`, decided at
generation time). The HTML is made on request from those two files alone, so it is the same bytes
on every server of the same package.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

__all__ = ["APP_MIME_TYPE", "EXTENSION_ID", "TableViews"]

TEMPLATE = Path(__file__).with_name("table_view.html")
PLACEHOLDER = '{"typed-mcp": "table"}'  # the JSON the template holds where a tool's table goes
Table = tuple[Sequence[str], Sequence[str]]  # (keys from structuredContent to the rows, columns)


class TableViews:
    """The views of the tools a server serves: `ui://<package>/tables/<tool>.html`."""

    def __init__(self, package: str, views: Mapping[str, Table], tools: Iterable[str]) -> None:
        self.package = package
        self.views = {name: views[name] for name in tools if name in views}
        self.by_uri = {self.uri(name): name for name in self.views}

    def uri(self, tool: str) -> str:
        return f"ui://{self.package}/tables/{tool}.html"

    def meta(self, tool: str) -> dict[str, Any]:
        """The tool's `_meta` entry that points hosts at its view (none when it has no view)."""
        return {"ui": {"resourceUri": self.uri(tool)}} if tool in self.views else {}

    def resources(self) -> list[dict[str, Any]]:
        """resources/list: one resource per view, in the order of the tools."""
        return [
            {
                "uri": self.uri(name),
                "name": f"{name} table",
                "title": f"Table of {name}",
                "description": f"A sortable, filterable table (and a chart of a numeric column) of {name}'s result.",
                "mimeType": APP_MIME_TYPE,
            }
            for name in self.views
        ]

    def html(self, uri: str) -> str | None:
        """The view's HTML, or None for a URI that names no view."""
        name = self.by_uri.get(uri)
        if name is None:
            return None
        rows, columns = self.views[name]
        table = {"tool": name, "rows": list(rows), "columns": list(columns)}
        # `<`, `>` and `&` as JSON escapes: spec text cannot end the script element it sits in.
        text = json.dumps(table, ensure_ascii=False, sort_keys=True)
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        template = TEMPLATE.read_text(encoding="utf-8")
        if template.count(PLACEHOLDER) != 1:
            raise RuntimeError(f"{TEMPLATE.name}: the table placeholder must occur exactly once")
        return template.replace(PLACEHOLDER, text)
