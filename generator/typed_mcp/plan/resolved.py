"""What rendering needs from the spec's schemas, read while planning so that `render/` needs no spec:
each tool's table view (MCP Apps), the words of its request body (search), whether its answer is an
array (search), and the tags the spec describes.

A tool gets a table view when its answer is an array of objects (published wrapped, as `{"result": [...]}`)
or an object holding exactly one array of objects (`{"stations": [...], "next": ...}`, as most list
endpoints answer). The columns are the item schema's properties in the spec's order (`allOf` parts
merged, writeOnly properties left out, as the response model leaves them out); the view shows any
other field the rows carry after them. Where the rows are is given from the answer itself; the
renderer adds the key the answer is wrapped under (render/views.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from typed_mcp.plan.ir import Operation, Table, Tag
from typed_mcp.spec.normalize import Document

_DEPTH = 8  # `allOf` nesting followed when collecting a table's columns; deeper parts add no columns
_WORDS_DEPTH = 3  # nesting followed when collecting a body's property names


def resolved(op: Operation, schemas: Mapping[str, str | dict[str, Any]], doc: Document) -> Operation:
    """`op` with what rendering reads of its schemas."""
    changes: dict[str, Any] = {}
    if op.body is not None:
        changes["body_words"] = tuple(_words(doc, _schema(schemas, doc, op.body.schema_key)))
    if op.method in ("GET", "HEAD"):  # search asks only for a read whether it lists
        changes["returns_array"] = _returns_array(schemas, doc, op)
    table = _table_of(op, schemas, doc)
    if table is not None:
        changes["table"] = table
    return replace(op, **changes) if changes else op


def tags(doc: Document) -> tuple[Tag, ...]:
    """The spec's tags that have a description (a name that is no string is kept as None)."""
    found = doc.data.get("tags")
    return tuple(
        Tag(name=tag["name"] if isinstance(tag.get("name"), str) else None, description=tag["description"])
        for tag in (found if isinstance(found, list) else ())
        if isinstance(tag, dict) and isinstance(tag.get("description"), str)
    )


# --- search: a body's words, and whether an answer lists ------------------------------------------------


def _schema(schemas: Mapping[str, str | dict[str, Any]], doc: Document, key: str | None) -> Any:
    if key is None:
        return None
    schema = schemas.get(key)
    if isinstance(schema, str):
        try:
            schema = doc.resolve_pointer(schema)
        except Exception:  # a schema that does not resolve has no words to give
            return None
    return schema if isinstance(schema, dict) else None


def _words(doc: Document, schema: Any, depth: int = 0) -> Iterator[str]:
    """The property names of an object schema (through `$ref`, allOf/anyOf/oneOf and an array's items)."""
    if depth > _WORDS_DEPTH or not isinstance(schema, dict):
        return
    if isinstance(schema.get("$ref"), str):
        try:
            schema, _ = doc.deref(schema, "#")
        except Exception:
            return
        if not isinstance(schema, dict):
            return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            if isinstance(name, str):
                yield name
                yield from _enum_words(doc, prop)
    for combined in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(combined) or ():
            yield from _words(doc, part, depth + 1)
    if schema.get("type") == "array":
        yield from _words(doc, schema.get("items"), depth + 1)


def _enum_words(doc: Document, schema: Any) -> Iterator[str]:
    """A property's enumerated values ("squash", "closed"): the words of what a request may set."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        try:
            schema, _ = doc.deref(schema, "#")
        except Exception:
            return
    values = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(values, list) and len(values) <= 20:
        yield from (value for value in values if isinstance(value, str) and len(value) <= 30)


def _returns_array(schemas: Mapping[str, str | dict[str, Any]], doc: Document, op: Operation) -> bool:
    schema = _schema(schemas, doc, op.response.schema_key)
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        try:
            schema, _ = doc.deref(schema, "#")
        except Exception:
            return False
    return isinstance(schema, dict) and schema.get("type") == "array"


# --- table views ------------------------------------------------------------------------------------------


def _table_of(op: Operation, schemas: Mapping[str, str | dict[str, Any]], doc: Document) -> Table | None:
    key = op.response.schema_key
    if not op.has_output_schema or key is None or key not in schemas:
        return None
    stored = schemas[key]
    schema = doc.resolve_pointer(stored) if isinstance(stored, str) else stored
    schema = _not_null(doc, schema)
    columns = _columns(doc, _items(doc, schema))
    if columns:
        return (), columns
    arrays = [
        (name, cols) for name, prop in _properties(doc, schema).items() if (cols := _columns(doc, _items(doc, prop)))
    ]
    if len(arrays) != 1:  # several arrays: which one is the answer is not for a view to guess
        return None
    name, columns = arrays[0]
    return (name,), columns


def _not_null(doc: Document, schema: Any) -> Any:
    """The schema itself, or the one branch of an `anyOf`/`oneOf` that is not `{"type": "null"}`
    (OpenAPI 3.1's nullable answer)."""
    schema, _ = doc.deref(schema, "#")
    branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
    if isinstance(branches, list):
        others = [b for b in branches if doc.deref(b, "#")[0] != {"type": "null"}]
        if len(others) == 1:
            return doc.deref(others[0], "#")[0]
    return schema


def _items(doc: Document, schema: Any) -> Any:
    """The item schema of an array schema, or None."""
    schema, _ = doc.deref(schema, "#")
    if not isinstance(schema, dict):
        return None
    types = schema.get("type")
    if types == "array" or (isinstance(types, list) and "array" in types) or "items" in schema:
        return schema.get("items")
    return None


def _columns(doc: Document, item: Any) -> tuple[str, ...]:
    """The declared properties of an object item schema (empty when it is not one)."""
    return tuple(_properties(doc, item)) if item is not None else ()


def _properties(doc: Document, schema: Any, depth: int = 0) -> dict[str, Any]:
    """Property name -> schema of an object schema, `allOf` parts first (as the models inherit them)."""
    schema, _ = doc.deref(schema, "#")
    if not isinstance(schema, dict) or depth > _DEPTH:
        return {}
    found: dict[str, Any] = {}
    for part in schema.get("allOf") or ():
        found.update(_properties(doc, part, depth + 1))
    for name, prop in (schema.get("properties") or {}).items():
        resolved, _ = doc.deref(prop, "#")
        if isinstance(name, str) and not (isinstance(resolved, dict) and resolved.get("writeOnly") is True):
            found[name] = prop
    return found
