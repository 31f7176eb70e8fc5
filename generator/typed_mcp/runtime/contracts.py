"""What the generator and a package's runtime must agree on, written once.

The generator imports this module as `typed_mcp.runtime.contracts`; every package carries it, byte for
byte, as `_runtime/contracts.py`. It imports nothing outside the standard library, so that reading it
never loads the MCP SDK into the generator, and nothing else of the runtime, so that it stands alone.
"""

from __future__ import annotations

import re
from typing import Any

# An HTTP header name: an RFC 9110 token (5.1, 5.6.2).
HEADER_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Headers the HTTP client owns: they frame the message, route it or act hop by hop (RFC 9110 7.6.1).
# One set by hand could reach another virtual host or smuggle a request: the generator never makes a
# parameter of them, the runtime never takes one from the environment. `proxy-*` is theirs too.
FORBIDDEN_HEADERS = frozenset(
    "host content-length transfer-encoding connection te upgrade keep-alive trailer trailers expect".split()
)
# A header or query parameter name that says it holds a credential (X-Api-Key, PRIVATE-TOKEN,
# access_token, X-Amz-Signature, sig): the generator refuses to write such a value into a package, the
# runtime treats it as a secret even when no scheme declares it.
CREDENTIAL_NAME = re.compile(
    r"auth|token|secret|passw|pwd|key|session|cookie|credential|signature|jwt|(?<![a-z])sig(?![a-z])", re.IGNORECASE
)


def client_owns_header(name: str) -> bool:
    """Whether the header `name` is one the HTTP client sets itself (never a parameter or a setting)."""
    lowered = name.lower()
    return lowered in FORBIDDEN_HEADERS or lowered.startswith("proxy-")


# Methods a repeated request leaves as one would (RFC 9110 9.2.2): the tool's idempotentHint says so,
# and only these are retried.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

# The `_meta` keys this server writes. The MCP specification (2026-07-28, "General fields") asks for
# a reverse-DNS prefix naming who defines a key; `io.github.typed-mcp/` names the generator the way the
# MCP Registry names a project without a domain of its own (`io.github.OWNER`), and its second label
# is not `mcp` or `modelcontextprotocol`, which the specification reserves.
PREFIX = "io.github.typed-mcp/"
OPERATION = PREFIX + "operation"  # in tools/list: the tool's REST operation, "METHOD /path" (drift reads it)
SOURCE = PREFIX + "source"  # in a tool result: the upstream request's method, URL (no credentials), status
TOOL = PREFIX + "tool"  # in discovery mode's call_tool results: the tool that was called
TRUNCATED = PREFIX + "truncated"  # in a tool result cut to its inline budget: the whole size and the cuts
FIELDS = PREFIX + "fields"  # in discovery mode's call_tool results: the `fields` expression applied
# The bytes of JSON a read tool answers inline (about 25,000 tokens); past them, a preview and a
# resource link to the whole answer (the config's `inline_bytes`, `_runtime/links.py`).
INLINE_BYTES = 100_000
OPERATION_META = OPERATION
# Packages generated before the prefix wrote `typed-mcp/operation` and the like: readers of old
# catalogs (the semantic diff) accept both.
LEGACY_PREFIX = "typed-mcp/"

# Discovery mode's search documents (`search.json`): the format tag, what a word is (letters and
# digits: `pull_number` and `/repos/{owner}` split into words), and the words of a request to remove
# (the intent words of a DELETE, and what the search ranks last unless a query holds one).
SEARCH_FORMAT = "typed-mcp-search/5"
SEARCH_WORD = re.compile(r"[^\W_]+")
REMOVAL_WORDS = ("delete", "remove", "revoke", "cancel", "drop", "clear", "unset")

# `catalog.json`: the tools/list result, each `$defs` entry shared by the tools that repeat it stored
# once in `shared` and written as its index; `sizes` holds each tool's bytes; `budget` (when the
# schema budget trimmed tools) `{"bytes": ..., "trimmed": {tool: depth}}`.
CATALOG_FORMAT = "typed-mcp-catalog/1"
CATALOG_SCHEMAS = ("inputSchema", "outputSchema")


def unpack_catalog(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[int], list[str]]:
    """The tools of a `catalog.json` document, their sizes and the names of those the schema budget
    trimmed; each shared `$defs` entry (an integer in the file) becomes the one shared schema again."""
    shared = data["shared"]
    for tool in data["tools"]:
        for key in CATALOG_SCHEMAS:
            defs = (tool.get(key) or {}).get("$defs")
            if defs:
                for name, value in defs.items():
                    defs[name] = shared[value]
    return data["tools"], data["sizes"], list((data.get("budget") or {}).get("trimmed") or ())
