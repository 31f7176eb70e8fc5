"""The `_meta` keys this server writes. The MCP specification (2026-07-28, "General fields") asks
for a reverse-DNS prefix naming who defines a key; `io.github.typed-mcp/` names the generator the
way the MCP Registry names a project that has no domain of its own (`io.github.OWNER`), and its
second label is not `mcp` or `modelcontextprotocol`, which the specification reserves.

This module imports nothing: the generator reads these same definitions (`typed-mcp diff`)."""

PREFIX = "io.github.typed-mcp/"
OPERATION = PREFIX + "operation"  # in tools/list: the tool's REST operation, "METHOD /path"
SOURCE = PREFIX + "source"  # in a tool result: the upstream request's method, URL (no credentials), status
TOOL = PREFIX + "tool"  # in discovery mode's call_tool results: the tool that was called
# Packages generated before the prefix wrote `typed-mcp/operation` and the like: readers of old
# catalogs (the semantic diff) accept both.
LEGACY_PREFIX = "typed-mcp/"
