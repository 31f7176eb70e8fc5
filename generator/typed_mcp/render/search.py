"""`search.json`: the documents discovery mode's full-text search indexes (`_runtime/search.py`).

One document per tool, made from the operation alone, so that the words people use for a request
find it, whatever the API: the tool's name words, the keywords curation gives it (x-mcp, config),
its summary, the intent words of its HTTP method and path shape (a GET on a collection lists, a
DELETE removes: "show", "remove", "revoke" match the operation even when its summary says "List" or
"Delete"), the path words, the tags and their descriptions, the parameter and request body property
names, and the first paragraph of the description (the summary, when the spec has one: the rest of
a description, and the parameters' descriptions, measured worse, their words match too many
requests). Apart ("about"), the description beyond the summary, without its quoted notes: the
runtime looks there only for a word no tool's name holds. Beside them, the config's search
synonyms, which the runtime adds to its thesaurus.
Deterministic: the same plan and spec give the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from typed_mcp.plan.ir import ApiPlan, Operation
from typed_mcp.spec.normalize import Document

_SEARCH_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Words for what an operation does, by its method and path shape: what a user says for it.
LIST = "list show all view see browse find which"
GET = "get show view see details info read fetch check"
CREATE = "create add new make start submit"
UPDATE = "update change edit set modify"
REPLACE = "update set replace put add"
DELETE = "delete remove revoke cancel drop clear unset"
PAGINATION = frozenset({"page", "per_page", "limit", "cursor", "offset", "page_size", "per-page", "after", "before"})


def _words(*texts: str) -> str:
    """Lower-case words of `texts`: `pull_number`, `/repos/{owner}` and `dnsRecords` split into words."""
    return " ".join(word.lower() for text in texts for word in _SEARCH_WORD.findall(_CAMEL.sub(" ", text)))


def first_paragraph(text: str | None, limit: int = 600) -> str:
    """The first paragraph of `text` (one line), at most `limit` characters: what the operation does,
    without the notes on scopes and tokens that long descriptions go on with (they match most queries)."""
    text = " ".join((text or "").strip().split("\n\n")[0].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026"


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of `text`'s first paragraph (one line), at most `limit` characters."""
    text = " ".join(text.strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "\u2026"


def _segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def _is_parameter(segment: str) -> bool:
    return "{" in segment


def _schema(plan: ApiPlan, doc: Document | None, key: str | None) -> Any:
    if key is None:
        return None
    schema = plan.schemas.get(key)
    if isinstance(schema, str) and doc is not None:
        try:
            schema = doc.resolve_pointer(schema)
        except Exception:  # a schema that does not resolve has no words to give
            return None
    return schema if isinstance(schema, dict) else None


def _properties(doc: Document | None, schema: Any, depth: int = 0) -> Iterator[str]:
    """The property names of an object schema (through `$ref`, allOf/anyOf/oneOf and an array's items)."""
    if depth > 3 or not isinstance(schema, dict):
        return
    if doc is not None and isinstance(schema.get("$ref"), str):
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
            yield from _properties(doc, part, depth + 1)
    if schema.get("type") == "array":
        yield from _properties(doc, schema.get("items"), depth + 1)


def _enum_words(doc: Document | None, schema: Any) -> Iterator[str]:
    """A property's enumerated values ("squash", "closed"): the words of what a request may set."""
    if doc is not None and isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        try:
            schema, _ = doc.deref(schema, "#")
        except Exception:
            return
    values = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(values, list) and len(values) <= 20:
        yield from (value for value in values if isinstance(value, str) and len(value) <= 30)


def _returns_array(plan: ApiPlan, doc: Document | None, op: Operation) -> bool:
    schema = _schema(plan, doc, op.response.schema_key)
    if doc is not None and isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        try:
            schema, _ = doc.deref(schema, "#")
        except Exception:
            return False
    return isinstance(schema, dict) and schema.get("type") == "array"


def intent(plan: ApiPlan, doc: Document | None, op: Operation) -> str:
    """The words for what `op` does, from its method and path shape (and whether it pages)."""
    if op.method in ("GET", "HEAD"):
        pages = any(p.wire_name.lower() in PAGINATION for p in op.parameters)
        return LIST if pages or _returns_array(plan, doc, op) else GET
    if op.method == "POST":
        return CREATE
    if op.method == "PATCH":
        return UPDATE
    if op.method == "PUT":
        return REPLACE
    if op.method == "DELETE":
        return DELETE
    return ""


def _details(op: Operation) -> str:
    """The operation's description after its summary: what the spec says of it beyond its title."""
    text = op.description or ""
    if op.title and text.startswith(op.title):
        text = text[len(op.title) :].lstrip()
    # Notes set apart as quotes ("> [!NOTE] in public preview") say nothing of what it does.
    return "\n\n".join(part for part in text.split("\n\n") if not part.lstrip().startswith(">"))


def tag_descriptions(doc: Document | None) -> dict[str, str]:
    tags = doc.data.get("tags") if doc is not None else None
    found = {}
    for tag in tags if isinstance(tags, list) else ():
        if isinstance(tag, dict) and isinstance(tag.get("name"), str) and isinstance(tag.get("description"), str):
            found[tag["name"]] = first_sentence(tag["description"])
    return found


def search_documents(plan: ApiPlan, doc: Document | None = None) -> str:
    """`search.json`, one document a line."""
    described = tag_descriptions(doc)
    docs = []
    for op in plan.operations:
        params = [p.arg_name for p in op.parameters]
        if op.body is not None:
            params += [op.body.arg_name, *_properties(doc, _schema(plan, doc, op.body.schema_key))]
        docs.append(
            {
                "tool": op.tool_name,
                "name": _words(op.tool_name),
                "keywords": _words(*op.keywords),
                "title": op.title or "",
                "intent": intent(plan, doc, op),
                "tags": " ".join([_words(*op.tags), *(described[tag] for tag in op.tags if tag in described)]),
                "path": _words(op.path),
                "params": " ".join(dict.fromkeys(_words(*params).split())),
                "description": first_paragraph(op.description),
                "about": first_paragraph(_details(op)),
                "summary": first_sentence(op.description or op.title or ""),
            }
        )
    lines = ",\n".join(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) for doc in docs)  # one a line
    synonyms = json.dumps(plan.search_synonyms, ensure_ascii=False, separators=(",", ":"))
    return f'{{"format":"typed-mcp-search/3","synonyms":{synonyms},"tools":[\n{lines}\n]}}\n'
