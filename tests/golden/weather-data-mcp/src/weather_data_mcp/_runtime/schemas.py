"""The whole schemas of the tools the schema budget shortened, as MCP resources.

A tool whose inputSchema and outputSchema together pass the budget is listed with the models deeper
than a few references as open placeholders naming them (generator/typed_mcp/catalog/budget.py), and
its description names the resource `schema://<package>/tools/<name>`. Reading it gives the tool's
schemas whole, as the MCP SDK derives them from the tool's function (what the server validates
with), so an agent can still see how a deep argument is built.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import ResourceTemplate, TextResourceContents

MIME_TYPE = "application/json"


def template(package: str) -> str:
    return f"schema://{package}/tools/{{name}}"


def uri(package: str, name: str) -> str:
    return template(package).format(name=name)


def tool_named(package: str, address: str) -> str | None:
    """The tool a resource URI names, or None when it is no tool schema's URI."""
    prefix = uri(package, "")
    return address[len(prefix) :] if address.startswith(prefix) and len(address) > len(prefix) else None


def resource_template(package: str) -> ResourceTemplate:
    return ResourceTemplate(
        name="tool schemas",
        title="A tool's whole schemas",
        uri_template=template(package),
        description="The inputSchema and outputSchema of a tool, with no part left unexpanded",
        mime_type=MIME_TYPE,
    )


def contents(address: str, tool: dict[str, Any]) -> TextResourceContents:
    """The resource of `tool` (a tools/list entry of its whole schemas)."""
    whole = {key: tool[key] for key in ("name", "inputSchema", "outputSchema") if key in tool}
    return TextResourceContents(uri=address, mime_type=MIME_TYPE, text=json.dumps(whole, ensure_ascii=False))
