"""One malformed schema never sinks the spec: every schema of the document is checked for the shape
JSON Schema gives its keywords, before anything reads it.

What can be read in one well-defined way is read so: `items` written as a list of schemas (a
Swagger 2.0 habit of some big specs) means every item matches one of them, so it becomes their
`anyOf` (the list's one schema, in the usual case). JSON Schema draft 4 would read such a list as a
tuple; the specs that write it mean a list of items, and a tuple would leave every item after the
first untyped. A single schema where a list belongs (`allOf: {...}`) becomes a list of it.
Everything else that is malformed is dropped: the keyword (a `required` that is not a list, an
`enum` that is not one, a `$ref` that points at nothing, a `pattern` without a form every engine
reads alike in linear time: `patterns.py`), or the whole schema when it is not one
(`schema: "string"`), which then admits any value. A schema only ever gets more open, never stricter
than its spec, and each change is a note (`pointer: what was done`) that `typed-mcp.json` records
and `--strict` refuses.
"""

from __future__ import annotations

from typing import Any

from typed_mcp import pointer
from typed_mcp.spec.patterns import read_pattern

_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}
_SUBSCHEMA: tuple[str, ...] = (
    "not",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
)
_SUBSCHEMA += ("unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
_NUMBERS: tuple[str, ...] = ("minimum", "maximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems")
_NUMBERS += ("minProperties", "maxProperties", "minContains", "maxContains")
_STRINGS = ("pattern", "format", "title", "description", "contentEncoding", "contentMediaType")
_BOOLEANS = ("nullable", "readOnly", "writeOnly", "deprecated", "uniqueItems")


def check(data: dict[str, Any]) -> list[str]:
    """Make every schema of the OpenAPI 3 document `data` well-formed, in place; the notes."""
    shapes = _Shapes(data)
    shapes.document()
    return shapes.notes


_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


class _Shapes:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.notes: list[str] = []
        self._seen: set[int] = set()  # schemas checked (by identity: YAML aliases share one object)

    def note(self, at: str, what: str) -> None:
        self.notes.append(f"{at}: {what}")

    # -- where schemas are -------------------------------------------------------------------------

    def document(self) -> None:
        components = self.data.get("components")
        if isinstance(components, dict):
            for section, each in (
                ("schemas", self.schema),
                ("parameters", self.parameter),
                ("headers", self.parameter),
                ("responses", self.response),
                ("requestBodies", self.parameter),  # a body's schemas are under `content`, as a parameter's
            ):
                entries = components.get(section)
                if isinstance(entries, dict):
                    for name in entries:
                        each(entries, name, pointer.join("#/components", section, name))
        paths = self.data.get("paths")
        if not isinstance(paths, dict):
            return
        for path, item in paths.items():
            if not isinstance(item, dict):
                continue  # the plan skips it, with its reason
            here = pointer.join("#/paths", path)
            self.parameters(item.get("parameters"), pointer.join(here, "parameters"))
            for method, op in item.items():
                if method == "parameters" or not isinstance(op, dict):
                    continue
                self.parameters(op.get("parameters"), pointer.join(here, method, "parameters"))
                if "requestBody" in op:
                    self.parameter(op, "requestBody", pointer.join(here, method, "requestBody"))
                responses = op.get("responses")
                if isinstance(responses, dict):
                    for status in responses:
                        self.response(responses, status, pointer.join(here, method, "responses", status))

    def parameters(self, params: Any, at: str) -> None:
        if isinstance(params, list):
            for i in range(len(params)):
                self.parameter(params, i, pointer.join(at, i))

    def parameter(self, holder: Any, key: Any, at: str) -> None:
        """A parameter, header or request body: a `schema`, or schemas under `content`."""
        node = holder[key]
        if not isinstance(node, dict) or "$ref" in node:
            return  # a ref's target is checked where it lives; the plan refuses a non-object
        if "schema" in node:
            self.schema(node, "schema", pointer.join(at, "schema"))
        self.content(node.get("content"), pointer.join(at, "content"))

    def response(self, holder: Any, key: Any, at: str) -> None:
        node = holder[key]
        if not isinstance(node, dict) or "$ref" in node:
            return
        headers = node.get("headers")
        if isinstance(headers, dict):
            for name in headers:
                self.parameter(headers, name, pointer.join(at, "headers", name))
        self.content(node.get("content"), pointer.join(at, "content"))

    def content(self, content: Any, at: str) -> None:
        if isinstance(content, dict):
            for media_type, media in content.items():
                if isinstance(media, dict) and "schema" in media:
                    self.schema(media, "schema", pointer.join(at, media_type, "schema"))

    # -- one schema ----------------------------------------------------------------------------------

    def schema(self, holder: Any, key: Any, at: str) -> None:
        node = holder[key]
        if isinstance(node, bool):
            return  # OpenAPI 3.1's true/false schemas; 3.0 tools read them the same way
        if not isinstance(node, dict):
            holder[key] = {}
            self.note(at, f"not a schema ({_kind(node)}): read as any value")
            return
        if id(node) in self._seen:
            return
        self._seen.add(id(node))
        self._ref(node, at)
        if isinstance(node.get("properties"), dict):
            self._property_required(node, at)
        self._type(node, at)
        for word in _SCHEMA_MAPS:
            if word in node and self._expect(node, word, dict, at):
                for name in node[word]:
                    self.schema(node[word], name, pointer.join(at, word, name))
        if "items" in node:
            self._items(node, at)
        for word in _SUBSCHEMA:
            if word in node:
                self.schema(node, word, pointer.join(at, word))
        for word in _SCHEMA_LISTS:
            if isinstance(node.get(word), dict):
                node[word] = [node[word]]
                self.note(pointer.join(at, word), "one schema where a list belongs: read as a list of it")
            if word in node and self._expect(node, word, list, at):
                for i in range(len(node[word])):
                    self.schema(node[word], i, pointer.join(at, word, i))
        self._required(node, at)
        if "enum" in node:
            self._expect(node, "enum", list, at)
        self._discriminator(node, at)
        for word in _NUMBERS:
            if word in node and (isinstance(node[word], bool) or not isinstance(node[word], (int, float))):
                self._drop(node, word, at, "is not a number")
        for word in ("exclusiveMinimum", "exclusiveMaximum"):
            if word in node and not isinstance(node[word], (bool, int, float)):
                self._drop(node, word, at, "is neither a boolean nor a number")
        for word in _STRINGS:
            if word in node:
                self._expect(node, word, str, at)
        self._patterns(node, at)
        for word in _BOOLEANS:
            if word in node:
                self._expect(node, word, bool, at)

    def _patterns(self, node: dict[str, Any], at: str) -> None:
        """A pattern is kept only in a form every engine reads alike, in linear time (`patterns.py`).
        The keys of `patternProperties` are patterns too: one without such a form drops them all, and
        `additionalProperties` with them, which would otherwise refuse the names they admitted."""
        why = read_pattern(node["pattern"])[1] if isinstance(node.get("pattern"), str) else ""
        if why:
            self._drop(node, "pattern", at, why)
        keys = node.get("patternProperties")
        reasons = [read_pattern(name)[1] for name in keys] if isinstance(keys, dict) else []
        why = next((reason for reason in reasons if reason), "")
        if why:
            self._drop(node, "patternProperties", at, f"a pattern of its names is {why}")
            if "additionalProperties" in node:
                self._drop(node, "additionalProperties", at, "it would refuse the names those patterns admitted")

    def _drop(self, node: dict[str, Any], word: str, at: str, why: str) -> None:
        del node[word]
        self.note(pointer.join(at, word), f"{why}: dropped")

    def _expect(self, node: dict[str, Any], word: str, kind: type, at: str) -> bool:
        """Whether `node[word]` is a `kind`; dropped (with a note) when it is not."""
        if isinstance(node[word], kind):
            return True
        self._drop(node, word, at, f"must be {_kind(kind())}, got {_kind(node[word])}")
        return False

    def _ref(self, node: dict[str, Any], at: str) -> None:
        if "$ref" not in node:
            return
        ref = node["$ref"]
        if not isinstance(ref, str):
            self._drop(node, "$ref", at, f"must be a string, got {_kind(ref)}")
        elif not ref.startswith("#") or not pointer.tokens(ref) or pointer.get(self.data, ref, None) is None:
            self._drop(node, "$ref", at, f"{ref!r} points at nothing")
        else:  # the target is checked too, wherever it lives (components are, already)
            tokens = pointer.tokens(ref)
            holder = pointer.get(self.data, pointer.join("#", *tokens[:-1]))
            self.schema(holder, int(tokens[-1]) if isinstance(holder, list) else tokens[-1], ref)

    def _type(self, node: dict[str, Any], at: str) -> None:
        if "type" not in node:
            return
        value = node["type"]
        if isinstance(value, str) and value in _TYPES:
            return
        if isinstance(value, list) and value and all(isinstance(t, str) and t in _TYPES for t in value):
            return
        self._drop(node, "type", at, f"{value!r} is not a JSON Schema type")

    def _items(self, node: dict[str, Any], at: str) -> None:
        items = node["items"]
        if isinstance(items, list):
            if all(isinstance(s, (dict, bool)) for s in items):
                node["items"] = items[0] if len(items) == 1 else {"anyOf": items} if items else {}
                self.note(
                    pointer.join(at, "items"), f"a list of {len(items)} schema(s): read as every item matching one"
                )
            else:
                node["items"] = {}
                self.note(pointer.join(at, "items"), "a list that is not of schemas: read as any items")
        self.schema(node, "items", pointer.join(at, "items"))

    def _required(self, node: dict[str, Any], at: str) -> None:
        if "required" not in node:
            return
        required = node["required"]
        if not isinstance(required, list):
            self._drop(node, "required", at, f"must be a list, got {_kind(required)}")
        elif not all(isinstance(name, str) for name in required):
            node["required"] = [name for name in required if isinstance(name, str)]
            self.note(pointer.join(at, "required"), "names that are not strings: dropped")

    def _property_required(self, node: dict[str, Any], at: str) -> None:
        """Draft 3's `required: true` on a property itself means the parent's `required` lists it."""
        for name, sub in node["properties"].items():
            if not (isinstance(sub, dict) and isinstance(sub.get("required"), bool)):
                continue
            if sub.pop("required") and isinstance(node.setdefault("required", []), list):
                node["required"] += [] if name in node["required"] else [name]
            self.note(
                pointer.join(at, "properties", name, "required"), "a boolean (draft 3): read as the parent's list"
            )

    def _discriminator(self, node: dict[str, Any], at: str) -> None:
        value = node.get("discriminator")
        if value is None:
            return
        if not isinstance(value, dict) or not isinstance(value.get("propertyName"), str):
            self._drop(node, "discriminator", at, "not an object with a propertyName")
            return
        mapping = value.get("mapping")
        if mapping is not None and not (
            isinstance(mapping, dict) and all(isinstance(v, str) for v in mapping.values())
        ):
            self._drop(value, "mapping", pointer.join(at, "discriminator"), "not a map of names to refs")
