"""Curation that survives regeneration: which operations become tools, under which names and
descriptions, with which output policy and which extra credentials and headers.

Three sources, applied in this order, each able to override the one before:
1. the spec's own `x-mcp` extension (operation > path item > root: the most specific `exclude`
   wins, so `x-mcp: {exclude: true}` at the root excludes every operation except those that say
   `exclude: false` themselves or on their path item; `x-mcp: false` and `true` are the same as
   `{exclude: true}` and `{exclude: false}`; `name`, `description`, `keywords` (words users say
   for it, for discovery mode's search) and `annotations` on an operation);
2. OpenAPI Overlay documents (`--overlay`, see `spec/overlay.py`): they patch the document before
   anything reads it, so they can also add or change `x-mcp`;
3. the config file (`--config typed-mcp.toml`, or a pyproject.toml's `[tool.typed-mcp]`; read by
   `typed_mcp.config`), applied here.

Every operation excluded or changed is recorded with the rule that did it (`ApiPlan.curation`,
written to `typed-mcp.json`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from pydantic import ValidationError

from typed_mcp import names
from typed_mcp.config import (
    TOOL_NAME,
    AnnotationsConfig,
    Config,
    LoadedConfig,
    OperationConfig,
    Selection,
    failer,
    quoted,
    schemes_of,
    words,
)
from typed_mcp.errors import SpecError
from typed_mcp.plan import hints
from typed_mcp.plan.ir import Draft, Hints, Operation
from typed_mcp.plan.reading import mapping
from typed_mcp.spec.normalize import Document

# --- applying it: x-mcp, then the config ------------------------------------------------------------

RawOp = tuple[str, str, str, dict[str, Any], dict[str, Any]]  # key, path, method, path item, operation


def _matches(raw: RawOp, selection: Selection) -> Iterator[tuple[str, bool]]:
    """For each list `selection` gives (tags, paths, methods, operation_ids): whether `raw` matches it."""
    key, path, method, _, op = raw
    tags = [t for t in op.get("tags") or [] if isinstance(t, str)]
    operation_id = op.get("operationId") if isinstance(op.get("operationId"), str) else None
    tests: dict[str, Callable[[list[str]], bool]] = {
        "tags": lambda values: any(tag in values for tag in tags),
        "paths": lambda values: any(fnmatchcase(path, glob) for glob in values),
        "methods": lambda values: method.upper() in {v.upper() for v in values},
        "operation_ids": lambda values: operation_id is not None and any(fnmatchcase(operation_id, g) for g in values),
    }
    for criterion, test in tests.items():
        values = getattr(selection, criterion)
        if values:
            yield criterion, test(values)


def _x_mcp_flag(node: Any) -> bool | None:
    """A node's `x-mcp` in its boolean form (openapi-mcp-generator's: `x-mcp: false` excludes, `true`
    includes; the strings "true" and "false" in any case too), else None."""
    value = node.get("x-mcp") if isinstance(node, dict) else None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value if isinstance(value, bool) else None


def _x_mcp(node: Any) -> dict[str, Any]:
    """A node's `x-mcp` as an object; the boolean form is `{exclude: not value}`."""
    flag = _x_mcp_flag(node)
    if flag is not None:
        return {"exclude": not flag}
    value = node.get("x-mcp") if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


class Curation:
    """One run's curation: built from the config (or none) and the operations overlays removed;
    `plan.build` asks it which operations to keep and what to call them, then `finish`es the plan."""

    def __init__(
        self,
        loaded: LoadedConfig | None = None,
        removed: list[tuple[str, str]] | None = None,
        overlays: list[tuple[str, str]] | None = None,
    ) -> None:
        """`removed`: (operation, rule) of the operations overlays removed; `overlays`: (file name,
        sha256) of each overlay applied, for the record."""
        self.loaded = loaded
        self.overlays = overlays or []
        self.config = loaded.config if loaded is not None else Config()
        self.entries: list[dict[str, str]] = [
            {"operation": key, "action": "excluded", "rule": rule} for key, rule in removed or []
        ]
        self._names: dict[str, tuple[str, str]] = {}  # key -> (tool name, rule)
        self._descriptions: dict[str, str] = {}  # key -> x-mcp description
        self._keywords: dict[str, tuple[str, ...]] = {}  # key -> x-mcp keywords
        self._annotations: dict[str, dict[str, bool | str]] = {}  # key -> x-mcp annotations
        self._order: dict[str, int] = {}  # key -> its place in the spec
        self._ids: dict[str, str] = {}  # operationId -> key
        self._keys: set[str] = set()
        self._warnings: list[str] = []
        self._toolsets: dict[str, list[str]] = {}  # config toolset -> operation keys

    def _record(self, operation: str, action: str, rule: str) -> None:
        self.entries.append({"operation": operation, "action": action, "rule": rule})

    def _fail(self, key: str, problem: str) -> None:
        assert self.loaded is not None
        failer(self.loaded)(key, problem)

    # -- the document ------------------------------------------------------------------------------

    def add_schemes(self, doc: Document) -> None:
        """The config's security schemes, added to the document's own (before planning reads them)."""
        schemes = schemes_of(self.config.auth)
        if not schemes:
            return
        components = mapping(doc.data.get("components"))
        declared = mapping(components.get("securitySchemes"))
        added = dict(declared)
        for name, scheme in schemes.items():
            if name in declared:
                self._fail(f"auth.schemes.{quoted(name)}", f"the spec already declares a security scheme {name!r}")
            added[name] = scheme.model_dump(by_alias=True, exclude_none=True)
        doc.data["components"] = {**components, "securitySchemes": added}

    # -- which operations, under which names ---------------------------------------------------------

    def select(self, doc: Document, raw_ops: list[RawOp]) -> list[RawOp]:
        """The operations that become tools: x-mcp's `exclude`, then the config's include/exclude."""
        self._keys = {op[0] for op in raw_ops}
        self._order = {op[0]: i for i, op in enumerate(raw_ops)}
        self._ids = {op["operationId"]: key for key, _, _, _, op in raw_ops if isinstance(op.get("operationId"), str)}
        references = [("rename", key) for key in self.config.rename] + [
            ("operations", key) for key in self.config.operations
        ]
        for table, reference in references:
            if self._resolve(reference) is None:
                self._fail(
                    f"{table}.{quoted(reference)}", "matches no operation (give 'METHOD /path' or an operationId)"
                )
        kept = []
        for raw in raw_ops:
            rule = self._x_mcp_exclusion(doc.data, raw) or self._config_exclusion(raw)
            if rule is not None:
                self._record(raw[0], "excluded", rule)
            else:
                kept.append(raw)
        for raw in kept:
            key, op = raw[0], raw[4]
            name = _x_mcp(op).get("name")
            if isinstance(name, str):
                if TOOL_NAME.match(names.snake_case(name)):
                    self._names[key] = (names.snake_case(name), "x-mcp name")
                else:
                    self._warnings.append(f"{key}: x-mcp name {name!r} is not a usable tool name: ignored")
            description = _x_mcp(op).get("description")
            if isinstance(description, str) and description.strip():
                self._descriptions[key] = description.strip()
            keywords = _x_mcp(op).get("keywords")
            if keywords is not None:
                if isinstance(keywords, list) and all(isinstance(k, str) for k in keywords):
                    self._keywords[key] = tuple(k.strip() for k in keywords if words(k))
                else:
                    self._warnings.append(f"{key}: x-mcp keywords is not a list of strings: ignored")
            annotations = _x_mcp(op).get("annotations")
            if annotations is not None:
                try:
                    self._annotations[key] = AnnotationsConfig.model_validate(annotations).given()
                except ValidationError as exc:
                    error = exc.errors(include_url=False)[0]
                    where = ".".join(str(part) for part in error["loc"])
                    problem = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
                    self._warnings.append(f"{key}: x-mcp annotations{'.' + where if where else ''}: {problem}: ignored")
        for reference, name in self.config.rename.items():
            renamed = self._resolve(reference)
            if renamed is not None and any(raw[0] == renamed for raw in kept):
                self._names[renamed] = (name, "config rename")
        self._toolset_members(kept)
        return kept

    def _resolve(self, reference: str) -> str | None:
        method, _, path = reference.strip().partition(" ")
        key = f"{method.upper()} {path.strip()}"
        if key in self._keys:
            return key
        return self._ids.get(reference)

    @staticmethod
    def _x_mcp_exclusion(root: dict[str, Any], raw: RawOp) -> str | None:
        _, _, _, path_item, op = raw
        for level, node in (("operation", op), ("path", path_item), ("root", root)):
            exclude = _x_mcp(node).get("exclude")
            if isinstance(exclude, bool):
                form = "x-mcp false" if _x_mcp_flag(node) is not None else "x-mcp exclude"
                return f"{form} ({level})" if exclude else None
        return None

    def _config_exclusion(self, raw: RawOp) -> str | None:
        include, exclude = self.config.include, self.config.exclude
        for criterion, matched in _matches(raw, include):
            if not matched:
                return f"config include.{criterion}"
        for criterion, matched in _matches(raw, exclude):
            if matched:
                return f"config exclude.{criterion}"
        return None

    def _toolset_members(self, kept: list[RawOp]) -> None:
        for name, toolset in self.config.toolsets.items():
            listed = set()
            for reference in toolset.operations:
                key = self._resolve(reference)
                if key is None:
                    self._fail(
                        f"toolsets.{quoted(name)}.operations",
                        f"{reference!r} matches no operation (give 'METHOD /path' or an operationId)",
                    )
                listed.add(key)
            self._toolsets[name] = [
                raw[0]
                for raw in kept
                if raw[0] in listed or Selection.given(toolset) and all(m for _, m in _matches(raw, toolset))
            ]

    def naive_datetimes(self, key: str) -> str | None:
        """The rule that lets the operation's answers carry date-times without a timezone, or None:
        the operation's own setting wins over the config's global one."""
        reference = next((r for r in self.config.operations if self._resolve(r) == key), None)
        if reference is not None and (own := self.config.operations[reference].naive_datetimes) is not None:
            return f"config operations.{quoted(reference)}.naive_datetimes" if own == "accept" else None
        return "config naive_datetimes" if self.config.naive_datetimes == "accept" else None

    def inline_bytes(self, key: str) -> int | None:
        """The bytes of JSON the operation's answer holds inline, when the config says (its own wins)."""
        reference = next((r for r in self.config.operations if self._resolve(r) == key), None)
        own = self.config.operations[reference].inline_bytes if reference is not None else None
        return own if own is not None else self.config.inline_bytes

    def named(self, key: str) -> bool:
        """The operation is named by x-mcp or the config, not by `names`."""
        return key in self._names

    def tool_names(self, prefix: str, taken: dict[str, str]) -> dict[str, str]:
        """The names x-mcp and the config give (without the prefix), checked against each other and
        against the names `taken` by the other operations; `taken` is updated with them."""
        owners = {name: key for key, name in taken.items()}
        for key, (name, rule) in self._names.items():
            if len(prefix) + len(name) > names.MAX_TOOL_NAME:
                self._fail_rename(key, rule, f"{prefix}{name!r} is longer than {names.MAX_TOOL_NAME} characters")
            if name in owners:
                self._fail_rename(key, rule, f"the tool name {name!r} is also {owners[name]}'s")
            owners[name] = key
            taken[key] = name
            self._record(key, f"renamed to {prefix}{name}", rule)
        return taken

    def _fail_rename(self, key: str, rule: str, problem: str) -> None:
        if rule == "config rename":
            reference = next(r for r in self.config.rename if self._resolve(r) == key)
            self._fail(f"rename.{quoted(reference)}", problem)
        raise SpecError(f"x-mcp name of {key}: {problem}")

    # -- the plan --------------------------------------------------------------------------------------

    def finish(self, plan: Draft, declared: Collection[str]) -> None:
        """Descriptions, titles, output policies and config credentials on the planned operations;
        the record of it all on the draft plan, in a deterministic order. `declared`: the security
        schemes the plan has."""
        overrides = {self._resolve(reference): value for reference, value in self.config.operations.items()}
        schemes = tuple(name for name in schemes_of(self.config.auth) if name in declared)
        operations = []
        for op in plan.operations:
            operations.append(self._finish_operation(op, overrides.get(op.key), schemes, plan))
        plan.operations[:] = operations
        if schemes:
            how = "required" if self.config.auth.required else "sent when configured"
            self._record("*", f"auth {', '.join(schemes)} added ({how})", "config auth")
        for name in self.config.headers:
            self._record("*", f"header {name} added", "config headers")
        plan.extra_headers = dict(self.config.headers)
        plan.search_synonyms = {
            target.strip(): tuple(word.strip() for word in said if words(word))
            for target, said in self.config.search.synonyms.items()
        }
        if plan.search_synonyms:
            self._record("*", f"search synonyms for {len(plan.search_synonyms)} words", "config search.synonyms")
        plan.search_semantic = self.config.search.semantic
        if plan.search_semantic:
            self._record("*", "semantic search vectors shipped", "config search.semantic")
        tools = {op.key: op.tool_name for op in plan.operations}
        for name, keys in self._toolsets.items():
            members = [tools[key] for key in keys if key in tools]
            if members:
                plan.toolsets[name] = tuple(members)
                self._record("*", f"toolset {name} ({len(members)} tools)", f"config toolsets.{quoted(name)}")
            else:
                plan.warnings.append(f"config toolsets.{quoted(name)}: matches no operation; not served")
        plan.warnings += self._warnings
        # In the spec's order of operations (those an overlay removed first, by key); "*" before all.
        order = self._order
        plan.curation = sorted(
            self.entries, key=lambda e: (e["operation"] != "*", order.get(e["operation"], -1), e["operation"])
        )
        sources = []
        if self.loaded is not None:
            sources.append({"config": self.loaded.path.name, "sha256": self.loaded.sha256})
        sources += [{"overlay": name, "sha256": sha256} for name, sha256 in self.overlays]
        plan.curation_sources = sources

    def _finish_operation(
        self, op: Operation, override: OperationConfig | None, schemes: tuple[str, ...], plan: Draft
    ) -> Operation:
        changes: dict[str, Any] = {}
        description = self._descriptions.get(op.key)
        if description is not None:
            changes["description"] = description
            self._record(op.key, "description replaced", "x-mcp description")
        keywords = self._keywords.get(op.key, ())
        if keywords:
            self._record(op.key, "search keywords added", "x-mcp keywords")
        annotated = op.hints
        if self._annotations.get(op.key):
            annotated = self._annotate(op.key, annotated, self._annotations[op.key], "x-mcp annotations")
        if override is not None:
            where = f"config operations.{quoted(self._reference(op.key))}"
            if override.keywords:
                keywords = (*keywords, *(k.strip() for k in override.keywords))
                self._record(op.key, "search keywords added", f"{where}.keywords")
            if override.annotations.given():
                annotated = self._annotate(op.key, annotated, override.annotations.given(), f"{where}.annotations")
            if override.title is not None:
                changes["title"] = override.title.strip() or None
                changes["title_from_description"] = False
                self._record(op.key, "title replaced", f"{where}.title")
            if override.description is not None:
                changes["description"] = override.description.strip() or op.key
                self._record(op.key, "description replaced", f"{where}.description")
            json_answer = op.response.kind == "json"
            if not override.output_schema:
                if json_answer:
                    changes["output_schema"] = False
                    self._record(op.key, "outputSchema dropped (JSON as text)", f"{where}.output_schema")
                else:
                    plan.warnings.append(f"{op.key}: {where}.output_schema: the operation has no JSON answer")
            if override.on_mismatch == "text" and override.output_schema:
                if json_answer:
                    changes["output_policy"] = "text"
                    self._record(op.key, "text on mismatch (no outputSchema)", f"{where}.on_mismatch")
                else:
                    plan.warnings.append(f"{op.key}: {where}.on_mismatch: the operation has no JSON answer")
            if override.long_running:
                changes["long_running"] = True
                self._record(op.key, "long-running: a 202 answer's Location is followed", f"{where}.long_running")
        if op.naive_datetimes:
            rule = self.naive_datetimes(op.key) or ""
            self._record(op.key, "date-times without a timezone accepted (date-time published as a pattern)", rule)
        if keywords:
            changes["keywords"] = tuple(dict.fromkeys(keywords))
        if annotated != op.hints:
            changes["hints"] = annotated
        confirm = self._confirm(op.key, override, annotated)
        if confirm is not None:
            changes["confirm"] = True
            self._record(op.key, "confirmed by the person before it is sent", confirm)
        if schemes:
            # Each config scheme is one more alternative, tried first; an operation that needed no
            # credentials still goes out without them unless [auth] says required = true.
            added = tuple((name,) for name in schemes)
            changes["credentials_required"] = self.config.auth.required
            if op.security == ():
                changes["security"] = added if self.config.auth.required else (*added, ())
            else:
                changes["security"] = (*added, *(alt for alt in op.security if alt != ("<unsupported>",)))
        return replace(op, **changes) if changes else op

    def _confirm(self, key: str, override: OperationConfig | None, annotated: Hints) -> str | None:
        """The rule that makes the person confirm each call of the operation, or None: its own
        `confirm` wins over [confirm] destructive."""
        if override is not None and override.confirm is not None:
            return f"config operations.{quoted(self._reference(key))}.confirm" if override.confirm else None
        return "config confirm.destructive" if self.config.confirm.destructive and annotated.destructive else None

    def _annotate(self, key: str, current: Hints, given: dict[str, bool | str], rule: str) -> Hints:
        said = ", ".join(f"{hint} {json.dumps(value)}" for hint, value in given.items())
        self._record(key, f"annotations: {said}", rule)
        return hints.overridden(current, given, rule)

    def _reference(self, key: str) -> str:
        return next((r for r in self.config.operations if self._resolve(r) == key), key)
