"""What request bodies and responses share: a `content` map (media type -> media type object),
which media types are JSON, and the models key under which the schema a body or an answer carries
is generated."""

from __future__ import annotations

import re
from typing import Any

from typed_mcp import names
from typed_mcp.plan.ir import Draft
from typed_mcp.plan.reading import Unsupported
from typed_mcp.plan.variants import COMPONENT_SCHEMA
from typed_mcp.spec.normalize import Document

_JSON = re.compile(r"^application/(?:[\w.+-]+\+)?json(?:;.*)?$|^application/json", re.I)


def is_json(media_type: str) -> bool:
    """A JSON media type: `application/json`, `application/problem+json`, with or without parameters."""
    return bool(_JSON.match(media_type.strip()))


def schema_key(doc: Document, schema: Any, wanted: str, result: Draft, taken: set[str]) -> str:
    """The models key for a schema: a component's own name, or a new key for an inline schema."""
    if isinstance(schema, dict) and set(schema) == {"$ref"} and isinstance(schema["$ref"], str):
        match = COMPONENT_SCHEMA.match(schema["$ref"])
        if match:
            name = match.group(1).replace("~1", "/").replace("~0", "~")
            doc.resolve_pointer(schema["$ref"])  # fail now, with the pointer, when it dangles
            result.schemas.setdefault(name, schema["$ref"])
            return name
    key = wanted
    while key in taken:  # never another schema's key: an operation only adds schemas (plan.build)
        key = f"{wanted}{names.short_hash(key, 6).upper()}"
    taken.add(key)
    result.schemas[key] = schema if isinstance(schema, dict) else {}
    return key


def media_map(content: Any, what: str) -> dict[str, Any]:
    """A `content` map whose media type objects are objects; malformed, the operation is skipped."""
    if content is None:
        return {}
    if not isinstance(content, dict) or not all(isinstance(m, dict) or m is None for m in content.values()):
        raise Unsupported(f"{what}: 'content' is not a map of media type objects")
    return content
