"""Request and response views of shared schemas: readOnly properties leave request inputs,
writeOnly properties leave outputs; and the naive view of an answer, whose `format: date-time`
strings are published and checked as a pattern that admits date-times with or without a timezone
(the config's naive_datetimes: many APIs send them without one).

A component schema is shared by requests and responses, so a view that differs is a copy with
its own name (`PetRequest`, `PetResponse`, `PetNaive`), made only where it differs: a schema that
has no such property anywhere below it stays shared, and an operation that does not ask for a view
never sees it.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from typed_mcp.spec import keywords
from typed_mcp.spec.normalize import Document

COMPONENT_SCHEMA = re.compile(r"^#/components/schemas/([^/]+)$")

ROLES = {"request": ("readOnly", "Request"), "response": ("writeOnly", "Response"), "naive": ("date-time", "Naive")}
# A date-time as RFC 3339 writes it (`T`, `t` or a space between date and time, as ajv-formats reads
# it), its offset optional. Without `format`, strict clients (AJV) check this pattern alone, and the
# server's model the same pattern, so both accept the same values; ASCII digits only, in a form
# ECMA-262, Python's `re` and Rust's regex read alike.
NAIVE_DATE_TIME = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?$"
)


def _marked(item: dict[str, Any], keyword: str) -> bool:
    """Does the schema `item` itself carry what the view changes: a property with `keyword: true`
    (readOnly, writeOnly), or, for the naive view, `format: date-time`?"""
    if keyword == "date-time":
        return item.get("format") == "date-time"
    properties = item.get("properties")
    return isinstance(properties, dict) and any(
        isinstance(p, dict) and p.get(keyword) is True for p in properties.values()
    )


class Views:
    def __init__(self, doc: Document, taken: set[str]) -> None:
        self.doc = doc
        self.taken = taken  # component and model names in use
        self._affected: dict[tuple[str, str], bool] = {}
        self._made: dict[tuple[str, str], str] = {}

    def view(self, schema: Any, role: str) -> Any:
        """`schema` as seen in `role`; the same object when nothing in it differs."""
        keyword, _ = ROLES[role]
        if not self._has(schema, keyword):
            return schema
        return self._strip(schema, role)

    # -- does anything below carry the keyword? --------------------------------------------------

    def _has(self, node: Any, keyword: str) -> bool:
        """Does `node`, or any schema it refers to, carry `keyword` on a property? Iterative (a chain of
        references hundreds of schemas long, as in Stripe's API, would exhaust Python's stack), and
        exact on cycles: a reference is affected when any schema it reaches carries the keyword."""
        direct, refs = self._own(node, keyword)
        if direct:
            return True
        queue, visited = list(refs), set(refs)
        while queue:
            ref = queue.pop()
            known = self._affected.get((ref, keyword))
            if known is not None:
                if known:
                    return True
                continue
            direct, more = self._own(self.doc.resolve_pointer(ref), keyword)
            if direct:
                self._affected[(ref, keyword)] = True
                return True
            for other in more:
                if other not in visited:
                    visited.add(other)
                    queue.append(other)
        for ref in visited:  # nothing reachable carries it: every reference visited is unaffected too
            self._affected[(ref, keyword)] = False
        return False

    def _own(self, node: Any, keyword: str) -> tuple[bool, list[str]]:
        """(does `node` carry `keyword` itself, without following references; the references in it)."""
        refs: list[str] = []
        stack: list[tuple[Any, bool]] = [(node, False)]
        while stack:
            item, named = stack.pop()
            if isinstance(item, list):
                stack.extend((value, False) for value in item)
                continue
            if not isinstance(item, dict):
                continue
            ref = item.get("$ref")
            if not named and isinstance(ref, str):
                refs.append(ref)
                continue
            if not named and _marked(item, keyword):
                return True, refs
            stack.extend((value, inner) for _, value, inner in keywords.schema_items(item, named))
        return False, refs

    # -- the view itself --------------------------------------------------------------------------

    def _strip(self, node: Any, role: str, named: bool = False) -> Any:
        keyword, suffix = ROLES[role]
        if isinstance(node, list):
            return [self._strip(item, role) for item in node]
        if not isinstance(node, dict):
            return node
        if named:
            return {name: self._strip(sub, role) for name, sub in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str):
            if not self._has(node, keyword):
                return node
            return {**node, "$ref": self._component(ref, role)}
        walked = {key: inner for key, _, inner in keywords.schema_items(node, False)}
        out: dict[str, Any] = {}
        dropped: set[str] = set()
        for key, value in node.items():
            if key == "format" and keyword == "date-time" and value == "date-time":
                out.setdefault("pattern", node.get("pattern", NAIVE_DATE_TIME))  # the spec's own pattern stays
            elif key == "properties" and isinstance(value, dict):
                kept = {}
                for name, sub in value.items():
                    if isinstance(sub, dict) and sub.get(keyword) is True:
                        dropped.add(name)
                    else:
                        kept[name] = self._strip(sub, role)
                out[key] = kept
            elif key in walked:
                out[key] = self._strip(value, role, walked[key])
            else:
                out[key] = value
        if dropped and isinstance(out.get("required"), list):
            out["required"] = [name for name in out["required"] if name not in dropped]
        return out

    def _component(self, ref: str, role: str) -> str:
        """The ref of a component's view, made once (recursive schemas refer to it while it is made)."""
        if (ref, role) in self._made:
            return self._made[(ref, role)]
        match = COMPONENT_SCHEMA.match(ref)
        base = (match.group(1) if match else ref.rsplit("/", 1)[-1]).replace("~1", "_").replace("~0", "_")
        name = base + ROLES[role][1]
        while name in self.taken:
            name += ROLES[role][1]
        self.taken.add(name)
        local = f"#/components/schemas/{name.replace('~', '~0').replace('/', '~1')}"
        self._made[(ref, role)] = local
        # Views live beside the components of this run's in-memory document, so every later step
        # (models, reachability) resolves them like any other component.
        components = self.doc.data.setdefault("components", {}).setdefault("schemas", {})
        components[name] = self._strip(copy.deepcopy(self.doc.resolve_pointer(ref)), role)
        return local
