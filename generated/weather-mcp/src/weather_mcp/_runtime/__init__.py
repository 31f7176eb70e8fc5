"""Runtime of a typed-mcp package: turns a tool call into one HTTP request and the response into
an MCP tool result. It is the generator's `typed_mcp.runtime`, copied verbatim into every generated
package as `_runtime/` (no templating), so it is plain, tested Python, one module per concern:

- `formats`: string formats checked exactly as strict MCP clients (AJV) check them;
- `models`: the base classes of the generated models;
- `config`: security schemes and the upstream API's settings, from the environment;
- `credentials`: credentials on a request, OAuth2 client-credentials tokens, a forwarded Authorization;
- `params`: OpenAPI parameter serialization (style/explode);
- `http`: the request, retries with backoff, the response size cap;
- `results`: the MCP tool result, validated as strict clients validate it;
- `registry`: what a tool function tells the server about itself.
- `hosting`: who may reach a server over streamable HTTP (auth mode, non-loopback rule, Host/Origin);
- `introspection`: `--auth oauth`, an OAuth 2.1 resource server checking tokens by RFC 7662 introspection;
- `arguments`: tool arguments checked against the published inputSchema before anything is sent;
- `stdio`: stdin lines the SDK's stdio transport cannot read, answered with a JSON-RPC error;
- `meta`: the `_meta` keys the server writes (reverse-DNS prefixed);
- `links`: a read tool's answer over its inline budget as a preview and a sealed `resource_link`;
- `fields`: discovery mode's `call_tool` `fields` (JMESPath);
- `narrowing`: the X-MCP-* headers that narrow a hosted request's tools.

Guarantees:
- the host, scheme and base path always come from the configured base URL; path parameters are
  percent-encoded so no value can add a segment, a query or a fragment;
- a 2xx JSON body is validated with the response model, and `structuredContent` is that body
  itself (wrapped as {"result": ...} where the MCP SDK's rules say so), never a re-serialization;
- every failure is an `isError` result with a bounded, secret-free message, never a traceback.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use (below)
    from pydantic import ValidationError

    from .config import FORWARDED_AUTHORIZATION, Scheme, Settings
    from .contracts import IDEMPOTENT_METHODS
    from .files import FileReference
    from .formats import (
        EMAIL,
        STRICT_FORMATS,
        AwareDatetime,
        Date,
        Duration,
        EmailStr,
        IPv4,
        IPv6,
        Time,
        UriReference,
        Uuid,
    )
    from .http import RETRY_STATUSES, Api, encode_multipart, multipart_parts
    from .models import CountedModel, DeferredCountedModel, DeferredOpenModel, OpenModel, PropertyCount, build_models
    from .params import encode_query, encode_segment, encode_simple, expand_path
    from .registry import ToolEntry, tool
    from .results import PROVENANCE_KEY, UpstreamError, adapter, format_validation_error, validate_strict

# Each name the runtime exports -> the module that defines it. Importing the runtime imports none of
# them: the generator reads `contracts` without loading the MCP SDK, and a server loads the modules of
# the names its tools and models use, when they use them (PEP 562).
_SOURCES = {
    "ValidationError": "pydantic",
    **dict.fromkeys(("FORWARDED_AUTHORIZATION", "Scheme", "Settings"), ".config"),
    **dict.fromkeys(
        (
            "EMAIL",
            "STRICT_FORMATS",
            "AwareDatetime",
            "Date",
            "Duration",
            "EmailStr",
            "IPv4",
            "IPv6",
            "Time",
            "UriReference",
            "Uuid",
        ),
        ".formats",
    ),
    "IDEMPOTENT_METHODS": ".contracts",
    "FileReference": ".files",
    **dict.fromkeys(("RETRY_STATUSES", "Api", "encode_multipart", "multipart_parts"), ".http"),
    **dict.fromkeys(
        ("CountedModel", "DeferredCountedModel", "DeferredOpenModel", "OpenModel", "PropertyCount", "build_models"),
        ".models",
    ),
    **dict.fromkeys(("encode_query", "encode_segment", "encode_simple", "expand_path"), ".params"),
    **dict.fromkeys(("ToolEntry", "tool"), ".registry"),
    **dict.fromkeys(
        ("PROVENANCE_KEY", "UpstreamError", "adapter", "format_validation_error", "validate_strict"), ".results"
    ),
}

__all__ = [
    "EMAIL",
    "FORWARDED_AUTHORIZATION",
    "FileReference",
    "IDEMPOTENT_METHODS",
    "PROVENANCE_KEY",
    "RETRY_STATUSES",
    "STRICT_FORMATS",
    "Api",
    "AwareDatetime",
    "CountedModel",
    "Date",
    "DeferredCountedModel",
    "DeferredOpenModel",
    "Duration",
    "EmailStr",
    "IPv4",
    "IPv6",
    "OpenModel",
    "PropertyCount",
    "Scheme",
    "Settings",
    "Time",
    "ToolEntry",
    "UpstreamError",
    "UriReference",
    "Uuid",
    "ValidationError",
    "adapter",
    "build_models",
    "encode_multipart",
    "encode_query",
    "encode_segment",
    "encode_simple",
    "expand_path",
    "format_validation_error",
    "multipart_parts",
    "tool",
    "validate_strict",
]


def __getattr__(name: str) -> Any:
    """An exported name, imported from its module the first time it is asked for."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(source, __name__), name)
    globals()[name] = value  # asked once: later lookups find it as a plain attribute
    return value
