"""The schema budget: each tool's published schemas (inputSchema + outputSchema) fit in `BUDGET` bytes.

A tool whose schemas refer to most of the API (Stripe's expandable fields, `anyOf: [id, $ref
Customer]`, make every response's closure nearly the whole API) keeps its declared structure down to
a depth of references; what lies deeper is published as an open schema that names its model
(`{"type": "object", "description": "Customer (not expanded here)"}`). That schema accepts more than
the model, never less: the server still validates every answer with the full model, so whatever it
sends, a client checking the published schema accepts. The depth is the largest that fits, chosen per
tool, the same for both schemas; the result depends only on the schemas (same input, same bytes).

`report()` gives the figures `typed-mcp generate` prints: the catalog's bytes and approximate tokens
(bytes / 4), the biggest tools, and advice when the whole catalog is more than clients take.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typed_mcp.catalog.pack import COMPACT
from typed_mcp.spec import keywords

# 64 KiB for a tool's inputSchema + outputSchema together: about 16 k tokens, a few percent of a
# model's context for the one tool an agent is about to call. Every corpus spec but Stripe's shape
# fits whole (GitHub's biggest tool, before trimming, is about 50 KB); the synthetic payments API's
# tools are 500 KB each untrimmed and keep 3 levels of references within it.
BUDGET = 64 * 1024
CLIENT_TOKENS = 100_000  # beyond this, a client's context (or its tool-list cap) will not take the whole catalog
_DEFS = "#/$defs/"


def size(value: Any) -> int:
    """Bytes of `value` as compact JSON (UTF-8), as `catalog.json` measures tools."""
    return len(json.dumps(value, **COMPACT).encode())


@dataclass
class Trimmed:
    """A tool's schemas within the budget: `depth` of references kept (None: nothing trimmed)."""

    input_schema: Any
    output_schema: Any
    depth: int | None
    full_bytes: int  # inputSchema + outputSchema before trimming


class Sizes:
    """Compact JSON sizes of schema objects, remembered by identity: `$defs` entries shared by many
    tools (the catalog worker hands the same objects to each) are measured once."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, int]] = {}
        self._refs: dict[int, tuple[Any, list[str]]] = {}
        self._names: dict[str, int] = {}

    def refs(self, value: Any) -> list[str]:
        """The `$defs` names `value` refers to (remembered by identity, as sizes are)."""
        known = self._refs.get(id(value))
        if known is None or known[0] is not value:
            found: list[str] = []
            _refs(value, found)
            known = (value, found)
            self._refs[id(value)] = known
        return known[1]

    def of(self, value: Any) -> int:
        if not isinstance(value, dict):
            return size(value)
        known = self._known.get(id(value))
        if known is None or known[0] is not value:
            known = (value, size(value))
            self._known[id(value)] = known
        return known[1]

    def schema(self, schema: Any) -> int:
        """The size of a schema with its `$defs`, each definition measured once."""
        if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
            return size(schema) if schema is not None else 0
        defs = schema["$defs"]
        rest = size({key: value for key, value in schema.items() if key != "$defs"})
        if not defs:
            return rest + len(',"$defs":{}')
        inner = sum(self.name(name) + 1 + self.of(value) for name, value in defs.items()) + len(defs) - 1
        return rest + len(',"$defs":{}') + inner

    def name(self, name: str) -> int:
        """The size of a `$defs` key (a tool's closure repeats the same thousand names)."""
        known = self._names.get(name)
        if known is None:
            known = self._names[name] = size(name)
        return known

    def trimmed(self, schema: Any, shared: dict[str, Any]) -> int:
        """Exactly `size(schema)` for a `trim()` result: the definitions it kept unchanged (those
        of `shared`, the same objects) are measured once, those it cut every time (never remembered:
        they are a trial's own objects)."""
        if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict) or list(schema)[-1] != "$defs":
            return size(schema)
        defs = schema["$defs"]
        rest = {key: value for key, value in schema.items() if key != "$defs"}
        inner = sum(
            self.name(name) + 1 + (self.of(value) if shared.get(name) is value else size(value))
            for name, value in defs.items()
        )
        # `{...rest` `,` `"$defs":{` entries with commas `}` `}`: the comma only after a non-empty rest.
        return size(rest) + (1 if rest else 0) + len('"$defs":{}') + inner + max(len(defs) - 1, 0)


# Keywords whose values are data, not schemas (a `$ref` in them refers to nothing), and keywords whose
# values map names to schemas: there a key is a name (a property called `default`), not a keyword.
# `$defs` is not walked as a map of names here: the budget reads it as the closure, apart.
_DATA = keywords.DATA | {"$defs"}
_NAMED = keywords.NAMED - {"$defs"}


def _schema_items(item: dict[str, Any], named: bool) -> list[tuple[str, Any, bool]]:
    return keywords.schema_items(item, named, _DATA, _NAMED)


def _refs(node: Any, found: list[str]) -> None:
    """The local `$defs` names `node` refers to, in document order (iterative: schemas nest deep)."""
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        item, named = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if not named and isinstance(ref, str) and ref.startswith(_DEFS):
                found.append(ref[len(_DEFS) :])
            stack.extend(reversed([(value, inner) for _, value, inner in _schema_items(item, named)]))
        elif isinstance(item, list):
            stack.extend(reversed([(value, False) for value in item]))


def levels(schema: dict[str, Any], sizes: Sizes | None = None) -> dict[str, int]:
    """Each `$defs` entry reachable from the root -> its distance in references (1: the root uses it)."""
    sizes = sizes or Sizes()
    defs = declared if isinstance(declared := schema.get("$defs"), dict) else {}
    found: list[str] = []
    _refs({key: value for key, value in schema.items() if key != "$defs"}, found)
    level: dict[str, int] = {}
    frontier = [name for name in dict.fromkeys(found) if name in defs]
    depth = 1
    while frontier:
        following: list[str] = []
        for name in frontier:
            if name not in level:
                level[name] = depth
        for name in frontier:
            if level[name] == depth:
                following += [n for n in sizes.refs(defs[name]) if n in defs and n not in level]
        frontier = list(dict.fromkeys(following))
        depth += 1
    return level


def _placeholder(node: dict[str, Any], name: str, target: Any) -> dict[str, Any]:
    """`node` (a `$ref` to `name`) as an open schema naming the model: it accepts every value the
    model accepts (an object, when the model is certainly one), and more."""
    out = {key: value for key, value in node.items() if key != "$ref"}
    note = f"{name} (not expanded here)"
    out["description"] = f"{out['description']} [{note}]" if isinstance(out.get("description"), str) else note
    if isinstance(target, dict) and target.get("type") == "object" and "type" not in out:
        out["type"] = "object"
    return out


def _cut(node: Any, keep: set[str], defs: dict[str, Any], named: bool = False) -> Any:
    """`node` with every reference to a definition outside `keep` replaced by its placeholder; shared
    subtrees without such references are returned as they are (never changed). `named`: `node` maps
    names to schemas (`properties`)."""
    if isinstance(node, list):
        items = [_cut(item, keep, defs) for item in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if not named and isinstance(ref, str) and ref.startswith(_DEFS) and ref[len(_DEFS) :] not in keep:
        name = ref[len(_DEFS) :]
        return _placeholder(node, name, defs.get(name))
    out, changed = dict(node), False
    for key, value, inner in _schema_items(node, named):
        new = _cut(value, keep, defs, inner)
        changed = changed or new is not value
        out[key] = new
    if not changed:
        return node
    return out if named else _still_looser(node, out)


def _still_looser(node: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """`out` (`node` with placeholders under it) made to accept all that `node` accepts. A placeholder
    accepts more than its model, which loosens most keywords but not all: a value can then match
    several `oneOf` branches (refused: "must match exactly one"), a `not` refuses more, and an `if`
    picks another branch. So such a `oneOf` is published as the `anyOf` of its branches, and a `not`
    or an `if` (with its `then` and `else`) that holds a placeholder is left out."""
    if out.get("oneOf") is not node.get("oneOf"):
        branches = out.pop("oneOf")
        if "anyOf" in out:
            out["allOf"] = [*out.get("allOf", []), {"anyOf": branches}]
        else:
            out["anyOf"] = branches
    if "not" in out and out["not"] is not node["not"]:
        del out["not"]
    if "if" in out and out["if"] is not node["if"]:
        for key in ("if", "then", "else"):
            out.pop(key, None)
    return out


def trim(schema: Any, depth: int, level: dict[str, int] | None = None, sizes: Sizes | None = None) -> Any:
    """`schema` keeping the definitions within `depth` references of its root; deeper ones become
    placeholders. `$defs` stays at the root and every `$ref` stays local. (`level`: its `levels()`.)
    A definition that refers only to kept ones is kept as it is (the same object): only those at the
    edge are walked, which matters when a closure is a thousand definitions and depths are tried."""
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        return schema
    defs = schema["$defs"]
    sizes = sizes or Sizes()
    level = levels(schema, sizes) if level is None else level
    keep = {name for name, distance in level.items() if distance <= depth}
    root = _cut({key: value for key, value in schema.items() if key != "$defs"}, keep, defs)
    kept = {
        name: value if keep.issuperset(sizes.refs(value)) else _cut(value, keep, defs)
        for name, value in defs.items()
        if name in keep
    }
    if kept:
        root["$defs"] = kept
    return root


def _defs(schema: Any) -> dict[str, Any]:
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    return defs if isinstance(defs, dict) else {}


def _levels(schema: Any, sizes: Sizes) -> dict[str, int]:
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        return {}
    return levels(schema, sizes)


def fit(input_schema: Any, output_schema: Any, budget: int = BUDGET, sizes: Sizes | None = None) -> Trimmed:
    """The tool's schemas within `budget` bytes: unchanged when they fit, else both trimmed at the
    largest depth that fits (depth 0 when none does: the root's own structure is always kept)."""
    sizes = sizes or Sizes()
    full = sizes.schema(input_schema) + sizes.schema(output_schema)
    if full <= budget:
        return Trimmed(input_schema, output_schema, None, full)
    inputs, outputs = _levels(input_schema, sizes), _levels(output_schema, sizes)
    deepest = max([0, *inputs.values(), *outputs.values()])
    chosen = (trim(input_schema, 0, inputs, sizes), trim(output_schema, 0, outputs, sizes), 0)
    shared = [_defs(input_schema), _defs(output_schema)]
    for depth in range(1, deepest + 1):
        trial = (trim(input_schema, depth, inputs, sizes), trim(output_schema, depth, outputs, sizes))
        if sizes.trimmed(trial[0], shared[0]) + sizes.trimmed(trial[1], shared[1]) > budget:
            break
        chosen = (*trial, depth)
    return Trimmed(chosen[0], chosen[1], chosen[2], full)


class Trimmer:
    """Trims tool after tool (as the catalog worker lists them), measuring shared definitions once.
    `address`: a tool name -> the resource that holds its schemas whole, named in the description of
    a trimmed tool."""

    def __init__(self, address: Callable[[str], str], budget: int = BUDGET) -> None:
        self.budget = budget
        self.sizes = Sizes()
        self.address = address

    def described(self, name: str, description: str | None) -> str:
        """A trimmed tool's description, naming the resource that holds its schemas whole."""
        note = f"Parts of its schemas are marked 'not expanded here': the resource {self.address(name)} has them whole."
        return f"{description}\n\n{note}" if description else note

    def tool(self, tool: dict[str, Any]) -> tuple[dict[str, Any], Trimmed]:
        """A tools/list entry (a JSON object) within the budget, and how it was trimmed."""
        done = fit(tool.get("inputSchema"), tool.get("outputSchema"), self.budget, self.sizes)
        if done.depth is None:
            return tool, done
        tool = dict(tool)
        tool["inputSchema"] = done.input_schema
        if "outputSchema" in tool:
            tool["outputSchema"] = done.output_schema
        tool["description"] = self.described(tool["name"], tool.get("description"))
        return tool, done


# -- the report ----------------------------------------------------------------------------------


@dataclass
class Report:
    tools: int
    catalog_bytes: int  # the tools/list result: every tool's JSON
    biggest: list[tuple[str, int]]  # the ten biggest tools (name, bytes), biggest first
    trimmed: dict[str, int] = field(default_factory=dict)  # tool -> depth of references kept
    budget: int = BUDGET

    @property
    def tokens(self) -> int:
        return approximate_tokens(self.catalog_bytes)

    def advice(self) -> str | None:
        if self.tokens <= CLIENT_TOKENS:
            return None
        return (
            f"the whole catalog is ~{self.tokens:,} tokens, more than most clients take (~{CLIENT_TOKENS:,}): "
            "serve a part of it with the server's --toolsets or --read-only flags, or --discovery "
            "(a few tools that find and describe the others)"
        )

    def lines(self) -> list[str]:
        """The report as plain lines."""
        out = [
            f"tool catalog: {self.catalog_bytes:,} bytes, ~{self.tokens:,} tokens (bytes/4), {self.tools} tools; "
            f"schema budget {self.budget:,} bytes per tool, {len(self.trimmed)} trimmed"
        ]
        out += [f"  {name}: {count:,} bytes" for name, count in self.biggest]
        if (advice := self.advice()) is not None:
            out.append(f"advice: {advice}")
        return out


def approximate_tokens(count: int) -> int:
    """Tokens of JSON text, roughly: bytes / 4."""
    return -(-count // 4)


def report(catalog: str | dict[str, Any], top: int = 10) -> Report:
    """The figures of a packed `catalog.json` (its text or parsed)."""
    data = json.loads(catalog) if isinstance(catalog, str) else catalog
    budget = data.get("budget") or {}
    names = [tool["name"] for tool in data["tools"]]
    return figures(names, data["sizes"], dict(budget.get("trimmed") or {}), int(budget.get("bytes") or BUDGET), top)


def figures(names: list[str], sizes: list[int], trimmed: dict[str, int], budget: int, top: int = 10) -> Report:
    """The figures of a catalog of the tools `names`, each `sizes` bytes of JSON."""
    ranked = sorted(zip(names, sizes, strict=True), key=lambda pair: (-pair[1], pair[0]))[:top]
    # The tools/list result: {"tools":[...]} around the tools, one comma between two.
    total = sum(sizes) + max(len(sizes) - 1, 0) + len('{"tools":[]}')
    return Report(tools=len(names), catalog_bytes=total, biggest=ranked, trimmed=trimmed, budget=budget)
