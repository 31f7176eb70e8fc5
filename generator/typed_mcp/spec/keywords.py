"""Where a schema holds schemas: the keys the walkers of every stage step into.

A value under `enum`, `const`, `default` or `example(s)` is data, even when it looks like a schema; a
key of `properties` (or of another map of names) is a name, whatever it is called: a property may be
named `default` or `enum`, and an OpenAPI `responses` map has a `default` response.
"""

from __future__ import annotations

from typing import Any

DATA = frozenset({"enum", "const", "default", "examples", "example", "required"})
NAMED = frozenset({"properties", "patternProperties", "dependentSchemas", "definitions", "$defs"})
# The maps of names in an OpenAPI document, beside those of its schemas.
DOCUMENT_NAMED = NAMED | {"responses", "schemas", "parameters", "requestBodies", "headers", "callbacks"}


def schema_items(
    item: dict[str, Any], named: bool, data: frozenset[str] = DATA, names: frozenset[str] = NAMED
) -> list[tuple[str, Any, bool]]:
    """The (key, value, whether the value is a map of names) under `item` that may hold schemas;
    `named`: `item` is itself a map of names, so every value is a schema."""
    if named:
        return [(key, value, False) for key, value in item.items()]
    return [(key, value, key in names) for key, value in item.items() if key not in data]
