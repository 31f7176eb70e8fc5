"""Runtime of a typed-mcp package: turns a tool call into one HTTP request and the response into
an MCP tool result. Copied verbatim into every generated package (no templating), so it is plain,
tested Python, one module per concern:

- `formats`: string formats checked exactly as strict MCP clients (AJV) check them;
- `models`: the base classes of the generated models;
- `config`: security schemes and the upstream API's settings, from the environment;
- `oauth`: credentials on a request, OAuth2 client-credentials tokens, a forwarded Authorization;
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

from pydantic import ValidationError

from .config import FORWARDED_AUTHORIZATION, Scheme, Settings
from .formats import (
    _EMAIL,
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
from .http import IDEMPOTENT_METHODS, RETRY_STATUSES, Api, encode_multipart, multipart_parts
from .models import CountedModel, DeferredCountedModel, DeferredOpenModel, OpenModel, PropertyCount, build_models
from .params import encode_query, encode_segment, encode_simple, expand_path
from .registry import ToolEntry, tool
from .results import PROVENANCE_KEY, UpstreamError, adapter, format_validation_error, validate_strict

__all__ = [
    "_EMAIL",
    "FORWARDED_AUTHORIZATION",
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
