"""Which component schemas the operations' schemas reach: only those become model classes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from typed_mcp.plan.ir import ApiPlan
from typed_mcp.plan.variants import COMPONENT_SCHEMA
from typed_mcp.spec.normalize import Document


class Reach:
    """Which component schemas the schemas of some operations reach: only those become classes.
    Each schema is walked once, however many sets of operations are asked about."""

    def __init__(self, doc: Document, plan: ApiPlan) -> None:
        self._doc, self._plan = doc, plan
        self._refs: dict[str, set[str]] = {}  # pointer -> the pointers in the schema it points to

    def components(self, keys: Iterable[str]) -> set[str]:
        stack = [ref for key in keys for ref in self._roots(self._plan.schemas[key])]
        seen: set[str] = set()
        while stack:
            ref = stack.pop()
            if ref in seen:
                continue
            seen.add(ref)
            if ref not in self._refs:
                self._refs[ref] = refs_in(self._doc.resolve_pointer(ref))
            stack.extend(self._refs[ref])
        return {
            match.group(1).replace("~1", "/").replace("~0", "~")
            for ref in seen
            if (match := COMPONENT_SCHEMA.match(ref))
        }

    def schemas(self, all_schemas: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        """The (repaired) schemas the operations' schemas `keys` need: themselves and the components they reach."""
        wanted = self.components(keys) | {k for k in keys if isinstance(self._plan.schemas[k], dict)}
        return {name: schema for name, schema in all_schemas.items() if name in wanted}

    @staticmethod
    def _roots(schema: Any) -> set[str]:
        return {schema} if isinstance(schema, str) else refs_in(schema)


def refs_in(node: Any) -> set[str]:
    """Every `$ref` under `node`, not followed."""
    found: set[str] = set()
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(v for k, v in node.items() if k != "$ref" and isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return found
