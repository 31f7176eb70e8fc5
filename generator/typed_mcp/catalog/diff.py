"""Semantic diff of two MCP tool catalogs (the JSON of a `tools/list` result, camelCase keys).

It answers "what changes for a client when the server moves from the old catalog to the new one?"
Every difference becomes a `Change`, flagged `breaking` when an existing client may fail:

* inputs are what the client sends, so anything the new schema rejects that the old one accepted
  is breaking (a new required argument, a narrower type or enum, a tighter bound, ...);
* outputs are what the client receives, so anything the old schema did not promise is breaking
  (a field removed or made optional, a new enum value, any type change, a looser bound, ...).

Schemas are JSON Schema 2020-12 as pydantic v2 writes them: `$ref` into `$defs`, `anyOf` for
unions and nullables. Refs are resolved while walking; a per-branch set of visited ref pairs plus
a depth limit keep recursive models from looping.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from typed_mcp.runtime import contracts
from typed_mcp.runtime.contracts import OPERATION_META

# Where a tool names its REST operation; catalogs of packages generated before the reverse-DNS keys
# say `typed-mcp/operation`, and still compare.
OPERATION_KEYS = (OPERATION_META, contracts.LEGACY_PREFIX + "operation")
# The ref pairs being compared further up a schema (what stops a recursive model).
_Seen = frozenset[tuple[tuple[str, ...], tuple[str, ...]]]
_MAX_DEPTH = 48  # backstop only: real models nest far less; the seen-set stops recursion first
_MAX_REF_HOPS = 32  # a chain of refs longer than this is a loop (`A -> B -> A`), not a model
_INPUT, _OUTPUT = "input", "output"
_TOOL_KINDS = frozenset({"tool_added", "tool_removed", "tool_renamed"})
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_OPENNESS = {True: 2, False: 0}  # additionalProperties: true accepts most, a schema less, false least
# Keyed by exact type, so `True` is a boolean and never an integer.
_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}
_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One difference. `path` is where in the schema (`body.owner.login`, `result[].id`), "" for the tool."""

    kind: str
    tool: str
    path: str
    breaking: bool
    detail: str


def diff_catalogs(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """All changes from `old` to `new`, sorted by tool, path, kind (then detail, to break ties)."""
    old_tools, new_tools = (
        {t["name"]: t for t in (c or {}).get("tools") or () if isinstance(t, dict) and "name" in t} for c in (old, new)
    )
    removed = sorted(old_tools.keys() - new_tools.keys())
    added = sorted(new_tools.keys() - old_tools.keys())
    renames = _match_renames(removed, added, old_tools, new_tools)

    changes: list[Change] = []
    for old_name, new_name in renames.items():
        changes.append(
            Change(
                "tool_renamed",
                new_name,
                "",
                True,
                f"Tool renamed from '{old_name}' to '{new_name}'; calls to the old name will fail.",
            )
        )
        changes += _diff_tool(new_name, old_tools[old_name], new_tools[new_name])
    for name in removed:
        if name not in renames:
            changes.append(Change("tool_removed", name, "", True, f"Tool '{name}' was removed."))
    renamed_to = set(renames.values())
    for name in added:
        if name not in renamed_to:
            changes.append(Change("tool_added", name, "", False, f"Tool '{name}' was added."))
    for name in sorted(old_tools.keys() & new_tools.keys()):
        changes += _diff_tool(name, old_tools[name], new_tools[name])
    return sorted(changes, key=lambda c: (c.tool, c.path, c.kind, c.detail))


def _match_renames(removed: list[str], added: list[str], old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Pair a removed and an added tool bound to the same `METHOD /path`. Only unambiguous (1:1)
    pairs count: guessing among several candidates would hide a real removal."""
    gone: defaultdict[str, list[str]] = defaultdict(list)
    came: defaultdict[str, list[str]] = defaultdict(list)
    for names, tools, by_op in ((removed, old, gone), (added, new, came)):
        for name in names:
            meta = tools[name].get("_meta") or {}
            if op := next((meta[key] for key in OPERATION_KEYS if isinstance(meta.get(key), str)), None):
                by_op[op].append(name)
    return {gone[op][0]: came[op][0] for op in sorted(gone) if len(gone[op]) == 1 and len(came.get(op, ())) == 1}


def _diff_tool(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    changes = []
    for key in ("title", "description"):  # informational: clients never break on prose
        if old.get(key) != new.get(key):
            changes.append(
                Change(
                    f"{key}_changed",
                    name,
                    "",
                    False,
                    f"Tool {key} changed from {_short(old.get(key))} to {_short(new.get(key))}.",
                )
            )
    changes += _diff_annotations(name, old.get("annotations") or {}, new.get("annotations") or {})
    changes += _diff_schema(
        _INPUT, name, old.get("inputSchema") or {"type": "object"}, new.get("inputSchema") or {"type": "object"}
    )
    old_out, new_out = old.get("outputSchema"), new.get("outputSchema")
    if old_out and not new_out:
        changes.append(
            Change(
                "output_schema_removed",
                name,
                "",
                True,
                "The outputSchema was removed; results are no longer structured.",
            )
        )
    elif new_out and not old_out:
        changes.append(Change("output_schema_added", name, "", False, "An outputSchema was added."))
    elif old_out and new_out:
        changes += _diff_schema(_OUTPUT, name, old_out, new_out)
    return changes


def _destructive(annotations: dict[str, Any]) -> bool:
    """Whether a client must take the tool as destructive: MCP's defaults are readOnlyHint false and
    destructiveHint true, and destructiveHint means something only when readOnlyHint is false."""
    return annotations.get("readOnlyHint") is not True and annotations.get("destructiveHint", True) is not False


def _diff_annotations(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Hints steer clients: a tool that becomes destructive, or stops being read-only, is breaking (a
    client that called it without asking now must ask, and `--read-only` no longer serves it); any
    other change is reported as compatible."""
    parts = [
        f"{key} {_fmt(old.get(key, _MISSING))} -> {_fmt(new.get(key, _MISSING))}"
        for key in sorted(old.keys() | new.keys())
        if old.get(key, _MISSING) != new.get(key, _MISSING)
    ]
    if not parts:
        return []
    detail = f"Annotations changed: {', '.join(parts)}."
    if _destructive(new) and not _destructive(old):
        return [Change("became_destructive", name, "", True, f"{detail} The tool is now destructive.")]
    if old.get("readOnlyHint") is True and new.get("readOnlyHint") is not True:
        return [Change("no_longer_read_only", name, "", True, f"{detail} The tool is no longer read-only.")]
    return [Change("annotations_changed", name, "", False, detail)]


def _diff_schema(side: str, tool: str, old: Any, new: Any) -> list[Change]:
    walk = _Walk(side, tool, _as_dict(old), _as_dict(new))
    walk.compare("", walk.old_root, walk.new_root, 0, frozenset())
    return walk.changes


class _Walk:
    """Compares one schema pair (a tool's input or its output) node by node, collecting changes."""

    def __init__(self, side: str, tool: str, old_root: dict[str, Any], new_root: dict[str, Any]) -> None:
        self.side, self.tool = side, tool
        self.old_root, self.new_root = old_root, new_root
        self.changes: list[Change] = []
        # With identical $defs, two equal subtrees resolve identically, so they can be skipped:
        # otherwise every unchanged tool of a big spec is walked through all its models.
        self.same_defs = all(old_root.get(k) == new_root.get(k) for k in ("$defs", "definitions"))

    def emit(self, suffix: str, path: str, breaking: bool, detail: str) -> None:
        self.changes.append(Change(f"{self.side}_{suffix}", self.tool, path, breaking, detail))

    def subject(self, path: str) -> str:
        if not path:
            return "The input schema" if self.side == _INPUT else "The output schema"
        return f"Argument '{path}'" if self.side == _INPUT else f"Output field '{path}'"

    def compare(self, path: str, old: Any, new: Any, depth: int, seen: _Seen) -> None:
        if old == new and (self.same_defs or '"$ref"' not in json.dumps(old)):
            return
        key = (_refs(old), _refs(new))
        if depth > _MAX_DEPTH or (any(key) and key in seen):
            return  # a recursive model: this ref pair is already being compared further up
        seen = seen | {key}
        old_r, new_r = _resolve(old, self.old_root), _resolve(new, self.new_root)
        self.types(path, old_r, new_r)
        self.prose(path, old_r, new_r)
        o, n = _unwrap(old_r, self.old_root), _unwrap(new_r, self.new_root)
        self.enum(path, o, n)
        self.bounds(path, o, n)
        o_obj, n_obj = _part(o, self.old_root, "object"), _part(n, self.new_root, "object")
        if o_obj is not None and n_obj is not None:
            self.object(path, o_obj, n_obj, depth, seen)
        o_arr, n_arr = _part(o, self.old_root, "array"), _part(n, self.new_root, "array")
        if o_arr is not None and n_arr is not None:
            self.compare(f"{path}[]", o_arr.get("items", {}), n_arr.get("items", {}), depth + 1, seen)

    def types(self, path: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        ot, nt = _type_set(old, self.old_root), _type_set(new, self.new_root)
        if ot == nt:
            return
        old_text, new_text = ("any" if t is None else " | ".join(sorted(t)) for t in (ot, nt))
        what = f"{self.subject(path)} changed type from {old_text} to {new_text}"
        if self.side == _OUTPUT:  # any change, even just adding null, can surprise a client
            self.emit("type_changed", path, True, f"{what}.")
        elif _accepts_all(nt, ot):
            self.emit("type_widened", path, False, f"{what}; every old value is still accepted.")
        elif _accepts_all(ot, nt):
            self.emit("type_narrowed", path, True, f"{what}; some old values are now rejected.")
        else:
            self.emit("type_changed", path, True, f"{what}.")

    def prose(self, path: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        if old.get("description") != new.get("description"):
            self.emit(
                "description_changed",
                path,
                False,
                f"{self.subject(path)} description changed from "
                f"{_short(old.get('description'))} to {_short(new.get('description'))}.",
            )
        if self.side == _INPUT and old.get("default", _MISSING) != new.get("default", _MISSING):
            # A call that omits the argument still succeeds, it just means something else now.
            self.emit(
                "default_changed",
                path,
                False,
                f"{self.subject(path)} default changed from "
                f"{_fmt(old.get('default', _MISSING))} to {_fmt(new.get('default', _MISSING))}.",
            )

    def enum(self, path: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        oe, ne = _enum_values(old, self.old_root), _enum_values(new, self.new_root)
        if oe == ne:
            return
        inp, subj = self.side == _INPUT, self.subject(path)
        if oe is None:
            self.emit("enum_added", path, inp, f"{subj} is now restricted to {_join_values(ne)}.")
        elif ne is None:
            self.emit("enum_removed", path, not inp, f"{subj} is no longer restricted to {_join_values(oe)}.")
        else:
            if oe - ne:  # values gone: a caller sending them fails; a reader never sees them
                self.emit("enum_narrowed", path, inp, f"{subj} no longer allows {_join_values(oe - ne)}.")
            if ne - oe:  # values new: a caller never sends them; a reader may not handle them
                self.emit("enum_widened", path, not inp, f"{subj} now also allows {_join_values(ne - oe)}.")

    def bounds(self, path: str, old: dict[str, Any], new: dict[str, Any]) -> None:
        for key in _LOWER_BOUNDS + _UPPER_BOUNDS:
            ov, nv = (v if type(v) in (int, float) else None for v in (old.get(key), new.get(key)))  # not bool
            if ov == nv:
                continue
            if ov is None:
                tightened, how = True, f"{key} {nv} was added"
            elif nv is None:
                tightened, how = False, f"{key} {ov} was removed"
            else:
                tightened = nv < ov if key in _UPPER_BOUNDS else nv > ov
                how = f"{key} {'lowered' if nv < ov else 'raised'} from {ov} to {nv}"
            # Tighter rejects old input values; looser lets the output carry unpromised values.
            breaking = tightened if self.side == _INPUT else not tightened
            self.emit(
                "bound_tightened" if tightened else "bound_loosened", path, breaking, f"{self.subject(path)}: {how}."
            )
        op, np_ = old.get("pattern"), new.get("pattern")
        if op != np_:  # regexes cannot be compared: any new or changed pattern may reject old input
            breaking = np_ is not None if self.side == _INPUT else op is not None
            self.emit(
                "pattern_changed",
                path,
                breaking,
                f"{self.subject(path)} pattern changed from {_fmt(op)} to {_fmt(np_)}.",
            )

    def object(self, path: str, old: dict[str, Any], new: dict[str, Any], depth: int, seen: _Seen) -> None:
        op, np_ = old.get("properties") or {}, new.get("properties") or {}
        oreq, nreq = set(old.get("required") or ()), set(new.get("required") or ())
        for name in sorted(op.keys() | np_.keys()):
            sub = f"{path}.{name}" if path else name
            if name not in op or name not in np_:
                self.presence(sub, added=name in np_, required=name in nreq)
            else:
                self.requiredness(sub, name in oreq, name in nreq)
                self.compare(sub, op[name], np_[name], depth + 1, seen)
        self.additional(path, old, new, depth, seen)

    def presence(self, path: str, added: bool, required: bool) -> None:
        if not added:  # callers still send it / readers still expect it
            self.emit(
                "removed" if self.side == _INPUT else "field_removed", path, True, f"{self.subject(path)} was removed."
            )
        elif self.side == _OUTPUT:  # output schemas are open, so clients already tolerate new fields
            self.emit("field_added", path, False, f"{self.subject(path)} was added.")
        elif required:
            self.emit("required_added", path, True, f"New required {self.subject(path).lower()}; old calls lack it.")
        else:
            self.emit("optional_added", path, False, f"New optional {self.subject(path).lower()}.")

    def requiredness(self, path: str, old_req: bool, new_req: bool) -> None:
        if old_req == new_req:
            return
        # Inputs: required -> optional only accepts more. Outputs: optional -> required only promises more.
        breaking = new_req if self.side == _INPUT else old_req
        state = "required" if new_req else "optional"
        self.emit(f"became_{state}", path, breaking, f"{self.subject(path)} is now {state}.")

    def additional(self, path: str, old: dict[str, Any], new: dict[str, Any], depth: int, seen: _Seen) -> None:
        oa, na = _extra(old.get("additionalProperties", True)), _extra(new.get("additionalProperties", True))
        if isinstance(oa, dict) and isinstance(na, dict):
            self.compare(f"{path}{{}}", oa, na, depth + 1, seen)  # `{}` marks a map's values
            return
        if oa == na:
            return
        if self.side == _INPUT:  # closing the object rejects calls that sent extra keys
            breaking = _OPENNESS.get(na, 1) < _OPENNESS.get(oa, 1)
        else:  # closing an open output takes back the promise that makes new fields compatible
            breaking = na is False
        old_text, new_text = (json.dumps(v) if isinstance(v, bool) else "a schema" for v in (oa, na))
        self.emit(
            "additional_properties_changed",
            path,
            breaking,
            f"{self.subject(path)} additionalProperties changed from {old_text} to {new_text}.",
        )


def _as_dict(schema: Any) -> dict[str, Any]:
    """2020-12 allows boolean schemas: `true` accepts anything, `false` nothing."""
    return {"not": {}} if schema is False else schema if isinstance(schema, dict) else {}


def _pointer(root: dict[str, Any], ref: Any) -> Any:
    """Follow a local JSON pointer (`#/$defs/Name`); None for external or dangling refs."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None  # pydantic only points into $defs; list indexes are not worth supporting
        node = node[part]
    return node


def _resolve(schema: Any, root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The schema with `$ref` followed (sibling keys win, as in 2020-12) and `allOf` merged."""
    node = _as_dict(schema)
    for _ in range(_MAX_REF_HOPS):
        target = _pointer(root, node.get("$ref"))
        if target is None:
            break  # no ref, or one we cannot follow: compare it as written
        node = {**_as_dict(target), **{k: v for k, v in node.items() if k != "$ref"}}
    parts = node.get("allOf")
    if isinstance(parts, list) and depth < _MAX_DEPTH:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for part in parts:
            part = _resolve(part, root, depth + 1)
            merged["properties"] = {**(part.get("properties") or {}), **(merged.get("properties") or {})}
            merged["required"] = sorted(set(merged.get("required") or ()) | set(part.get("required") or ()))
            for key, value in part.items():
                merged.setdefault(key, value)
        node = merged
    return node


def _branches(schema: dict[str, Any]) -> list[Any]:
    branches = schema.get("anyOf") or schema.get("oneOf")
    return branches if isinstance(branches, list) else []


def _unwrap(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, null]` -> X (with the outer keys), so nullables compare like their inner type."""
    real = [b for b in (_resolve(b, root) for b in _branches(schema)) if b.get("type") != "null"]
    if len(real) != 1:
        return schema
    return {**real[0], **{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}}


def _is(kind: str, schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    if t == kind or (isinstance(t, list) and kind in t):
        return True
    return "properties" in schema if kind == "object" else "items" in schema if kind == "array" else False


def _part(schema: dict[str, Any], root: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The object (or array) member of a schema; None when absent or ambiguous (two object models)."""
    if _is(kind, schema):
        return schema
    found = [b for b in (_resolve(b, root) for b in _branches(schema)) if _is(kind, b)]
    return found[0] if len(found) == 1 else None


def _type_set(schema: Any, root: dict[str, Any], depth: int = 0) -> frozenset[str] | None:
    """The JSON types a schema admits; None means unconstrained (any type)."""
    s = _resolve(schema, root)
    t = s.get("type")
    if isinstance(t, str):
        return frozenset({t})
    if isinstance(t, list):
        return frozenset(t)
    if "const" in s:
        return frozenset({_JSON_TYPES.get(type(s["const"]), "unknown")})
    if isinstance(s.get("enum"), list):
        return frozenset(_JSON_TYPES.get(type(v), "unknown") for v in s["enum"])
    if _branches(s) and depth < _MAX_DEPTH:
        members = [_type_set(b, root, depth + 1) for b in _branches(s)]
        known = [member for member in members if member is not None]
        return frozenset[str]().union(*known) if len(known) == len(members) else None
    shapes = {"object"} if "properties" in s else {"array"} if "items" in s else None
    return frozenset(shapes) if shapes else None


def _accepts_all(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    """Does `wide` admit every type in `narrow`? JSON Schema integers are numbers, not vice versa."""
    if wide is None or narrow is None:
        return wide is None
    return all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _enum_values(schema: dict[str, Any], root: dict[str, Any]) -> frozenset[str] | None:
    """Allowed values as canonical JSON text (so 1 and true stay apart); None when not an enum."""
    if isinstance(schema.get("enum"), list):
        return frozenset(json.dumps(v, sort_keys=True) for v in schema["enum"])
    if "const" in schema:
        return frozenset({json.dumps(schema["const"], sort_keys=True)})
    # A union of literals (`anyOf: [{const: a}, {const: b}]`) is an enum too.
    branches = [b for b in (_resolve(b, root) for b in _branches(schema)) if b.get("type") != "null"]
    if branches and all("const" in b or "enum" in b for b in branches):
        return frozenset().union(*(_enum_values(b, root) or frozenset() for b in branches))
    return None


def _extra(value: Any) -> Any:
    """additionalProperties as True, False or a real schema (`{}` means the same as True)."""
    return True if value is True or value == {} else value if isinstance(value, dict) else bool(value)


def _refs(schema: Any) -> tuple[str, ...]:
    """The refs a node points at, directly or through its union members: the recursion key."""
    if not isinstance(schema, dict):
        return ()
    refs = [schema.get("$ref")]
    for key in ("anyOf", "oneOf", "allOf"):
        refs += [b.get("$ref") for b in schema.get(key) or () if isinstance(b, dict)]
    return tuple(sorted(r for r in refs if isinstance(r, str)))


def _join_values(values: frozenset[str] | None) -> str:
    return ", ".join(sorted(values or ()))


def _fmt(value: Any) -> str:
    return "unset" if value is _MISSING else json.dumps(value, sort_keys=True)


def _short(text: Any, limit: int = 60) -> str:
    if text is None:
        return "none"
    text = " ".join(str(text).split())
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def has_breaking(changes: Iterable[Change]) -> bool:
    return any(c.breaking for c in changes)


def summarize(changes: Iterable[Change]) -> dict[str, int]:
    """Counts for a headline. A renamed tool with schema changes counts as renamed and changed."""
    changes = list(changes)
    kinds = Counter(c.kind for c in changes)
    breaking = sum(c.breaking for c in changes)
    return {
        "tools_added": kinds["tool_added"],
        "tools_removed": kinds["tool_removed"],
        "tools_renamed": kinds["tool_renamed"],
        "tools_changed": len({c.tool for c in changes if c.kind not in _TOOL_KINDS}),
        "breaking": breaking,
        "compatible": len(changes) - breaking,
        "total": len(changes),
    }


def _headline(counts: dict[str, int]) -> str:
    return (
        f"{counts['breaking']} breaking, {counts['compatible']} compatible change(s); tools: "
        f"{counts['tools_added']} added, {counts['tools_removed']} removed, "
        f"{counts['tools_renamed']} renamed, {counts['tools_changed']} changed."
    )


def _groups(changes: list[Change]) -> list[tuple[str, list[Change]]]:
    """Breaking first, each group keeping the (sorted) order it was given in."""
    groups = [("Breaking", [c for c in changes if c.breaking]), ("Compatible", [c for c in changes if not c.breaking])]
    return [(title, items) for title, items in groups if items]


def render_text(changes: Iterable[Change]) -> str:
    changes = list(changes)
    if not changes:
        return "No changes.\n"
    lines = [_headline(summarize(changes))]
    for title, items in _groups(changes):
        lines.append(f"{title}:")
        for c in items:
            where = f"{c.tool} {c.path}" if c.path else c.tool
            lines.append(f"  - {where}: {c.detail} [{c.kind}]")
    return "\n".join(lines) + "\n"


def _cell(text: str, code: bool = False) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return f"`{text.replace('`', chr(39))}`" if code else text


def render_markdown(changes: Iterable[Change]) -> str:
    changes = list(changes)
    lines = ["## MCP tool catalog changes", ""]
    if not changes:
        return "\n".join(lines + ["No changes.", ""])
    lines += [f"**{_headline(summarize(changes))}**", ""]
    for title, items in _groups(changes):
        lines += [f"### {title} ({len(items)})", "", "| Tool | Path | Change | Detail |", "| --- | --- | --- | --- |"]
        for c in items:
            path = _cell(c.path, code=True) if c.path else "*(tool)*"
            lines.append(f"| {_cell(c.tool, code=True)} | {path} | {_cell(c.kind, code=True)} | {_cell(c.detail)} |")
        lines.append("")
    return "\n".join(lines)


def render_json(changes: Iterable[Change]) -> str:
    """Stable: fixed key order (summary, then changes in the given order), two-space indent."""
    changes = list(changes)
    payload = {
        "summary": summarize(changes),
        "breaking": has_breaking(changes),
        "changes": [asdict(c) for c in changes],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
