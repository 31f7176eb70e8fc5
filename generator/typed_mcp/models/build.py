"""Step 4: Pydantic v2 models for every response and request body schema, via datamodel-code-generator.

Every model is open to extra fields (`extra="allow"`), nested and inline ones too: an API that adds
a field must never break a strict MCP client. Class names are chosen by typed-mcp (naming), not by
the code generator, so the tools can refer to them. Which classes are `RootModel`s (lists, scalars,
unions, maps) is read back from the generated code with `ast`, never by importing it. A big API's
schemas are generated in two parts at once (model_parts).

This module drives the steps and caches the code generator's output: `reach` picks the schemas,
`naming` their classes, `codegen` runs the code generator, `rewrite` makes its output the package's.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import json
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typed_mcp import cache, guard, names
from typed_mcp.errors import SpecError
from typed_mcp.models import modules as model_modules
from typed_mcp.models import parts as model_parts
from typed_mcp.models.codegen import NameTaken, codegen_job, job_for
from typed_mcp.models.naming import class_names_of, unshadowed
from typed_mcp.models.reach import Reach
from typed_mcp.models.rewrite import HEADER, linear_patterns, package_source
from typed_mcp.plan.ir import ApiPlan
from typed_mcp.pysource import parse
from typed_mcp.spec import repairs
from typed_mcp.spec.normalize import Document


@dataclass
class Models:
    source: str
    class_of: dict[str, str]  # schema key -> class name
    modules: model_modules.ModelModules  # the source split into one module per model
    root_type: dict[str, str] = field(default_factory=dict)  # RootModel class -> its root type expression
    root_names: dict[str, set[str]] = field(default_factory=dict)  # names a root expression uses
    classes: set[str] = field(default_factory=set)  # every class the models define
    schema_of: dict[str, str] = field(default_factory=dict)  # class name -> the schema key it was made for
    origin: str | None = None  # the spec, for messages

    def check_module(self, module: str, text: str) -> ast.Module:
        """Check one module of `models/` with the guard (SpecError naming the schema if it fails)."""
        try:
            return guard.check_models(text, split_module=True, classes=self.modules.module_of)
        except guard.Refused as refused:
            raise refusal(refused, self.schema_of, self.origin, f"models/{module}.py") from None

    def annotation(self, key: str | None, *, aliases: bool = False) -> str:
        """The Python type of a schema, as the MCP SDK should see it: a RootModel's root type
        (so lists and scalars are wrapped in `{"result": ...}` and maps are not), else the class.
        With `aliases` (an answer's type), a root that is itself a RootModel class (`RootModel[Schema]`,
        `Schema` a `RootModel[Any]`) is followed to the type under it: the SDK publishes a model class
        as it is, and only an object model's schema is an object."""
        return self._root(key, aliases)[0]

    def names_used(self, key: str | None, *, aliases: bool = False) -> set[str]:
        return self._root(key, aliases)[1]

    def is_object(self, annotation: str) -> bool:
        """Whether the SDK publishes `annotation` as it is, an object (a model class that is no
        RootModel, or `dict[str, X]`), rather than wrapped in `{"result": ...}`."""
        # Not `classes - set(root_type)`: asked for every tool, that set would be built each time.
        return (annotation in self.classes and annotation not in self.root_type) or annotation.startswith("dict[str,")

    def _root(self, key: str | None, aliases: bool) -> tuple[str, set[str]]:
        if key is None:
            return "Any", set()
        cls = self.class_of[key]
        found = (self.root_type.get(cls, cls), self.root_names.get(cls, {cls}))
        seen = {cls}
        while aliases and found[0] in self.root_type and found[0] not in seen:
            seen.add(found[0])
            found = (self.root_type[found[0]], self.root_names[found[0]])
        return found


def build_models(
    doc: Document, plan: ApiPlan, *, split: bool | None = None, cores_free: Callable[[], None] = lambda: None
) -> Models:
    """The models of `plan`'s schemas. A big API's are generated in two processes at once, in two
    parts (`split`; default: when it is big and the machine has two cores or more, see model_parts).
    `cores_free` is called as soon as the code generator leaves a core idle: before it runs here
    alone, after both parts when split (so maybe twice); not at all when its output is cached."""
    components = dict((doc.data.get("components") or {}).get("schemas") or {})
    reach = Reach(doc, plan)
    reachable = reach.components(plan.schemas)
    schemas: dict[str, Any] = {name: components[name] for name in components if name in reachable}
    for key, value in plan.schemas.items():
        if isinstance(value, dict):
            schemas[key] = value
    schemas = repairs.repair(schemas, doc.resolve_pointer)
    class_names = class_names_of(list(schemas))
    if not schemas:
        return Models(source=HEADER, class_of={}, modules=model_modules.split("", HEADER))
    found: tuple[str, ast.Module] | None = None
    if split if split is not None else model_parts.should_split(len(schemas)):
        with model_parts.CodegenProcess() as helper:
            halves = model_parts.halves(list(plan.schemas), lambda keys: len(reach.schemas(schemas, keys)))
            slices = [part for part in (reach.schemas(schemas, keys) for keys in halves) if part]
            with contextlib.suppress(model_parts.MergeError):
                found = _settle_names(doc, slices, class_names, helper, cores_free)
    if found is None:  # a small API, or parts that cannot be merged: one run here
        found = _settle_names(doc, [schemas], class_names, None, cores_free)
    source = package_source(*unshadowed(*found))
    tree = parse(source)
    linear_patterns(tree)
    models = Models(
        source=source,
        class_of={k: class_names[k] for k in plan.schemas},
        modules=model_modules.split(source, HEADER, tree),
    )
    defined = _read_classes(models, tree)
    missing = sorted(cls for cls in models.class_of.values() if cls not in defined)
    if missing:
        raise SpecError(f"model generation did not produce class(es) {', '.join(missing[:5])}", source=doc.origin)
    models.schema_of = {cls: key for key, cls in class_names.items()}
    models.origin = doc.origin
    return models  # each module is checked with the package's files (render.package.Package.check)


# Naming settles by construction: a class name that is a schema's own key is not forced on the code
# generator (which gives it to that schema unless another model holds it, and reports what it gave),
# only the names that differ from the key are. A schema that did not get its name takes a hashed one,
# which nothing else can hold, all at once: a second pass settles it. The third is for a forced name
# that the code generator refused outright (NameTaken), which each pass also settles at once.
MAX_PASSES = 3


class _Misnamed(Exception):
    """Schemas whose class the code generator named otherwise than wanted (their keys)."""

    def __init__(self, keys: list[str]) -> None:
        super().__init__(", ".join(keys))
        self.keys = keys


def _settle_names(
    doc: Document,
    slices: list[dict[str, Any]],
    class_names: dict[str, str],
    helper: model_parts.CodegenProcess | None,
    cores_free: Callable[[], None],
) -> tuple[str, ast.Module]:
    for _ in range(MAX_PASSES):
        try:
            return _generate(doc, slices, class_names, helper, cores_free)
        except _Misnamed as misnamed:
            keys = misnamed.keys
        except NameTaken as taken:
            keys = [k for k, v in class_names.items() if v == taken.name]
        # Another model holds the names these schemas wanted: each takes one hashed from its key.
        for key in keys:
            class_names[key] = f"{class_names[key]}{names.short_hash(key, 6).upper()}"
    raise SpecError(f"model generation: could not settle class names in {MAX_PASSES} passes", source=doc.origin)


def _generate(
    doc: Document,
    slices: list[dict[str, Any]],
    class_names: dict[str, str],
    helper: model_parts.CodegenProcess | None,
    cores_free: Callable[[], None],
) -> tuple[str, ast.Module]:
    """The code generator's source for the schemas, cut in `slices`, and its tree, checked by the
    guard: with two slices, the second is generated by `helper` while this process generates the
    first, and the two are merged (raises model_parts.MergeError if they cannot be). A cache entry
    is used only if it passes the guard too (else a warning, and the work is done again)."""
    jobs = [job_for(doc, part, class_names) for part in slices]
    keys = [
        cache.key(
            "models",
            json.dumps(job["document"], ensure_ascii=False, default=repr),
            json.dumps(job["name_map"], ensure_ascii=False),
        )
        for job in jobs
    ]
    fixed = set(class_names.values())
    merged_key = cache.key("merged models", *keys, *sorted(fixed)) if len(jobs) > 1 else None
    if merged_key is not None and (hit := _cached(merged_key)) is not None:
        return hit
    cached = [_cached(key) for key in keys]
    sources = [found[0] if found else None for found in cached]
    todo = [i for i, source in enumerate(sources) if source is None]
    answers: dict[int, dict[str, Any]] = {}
    if helper is not None and len(todo) == 2:
        helper.send(jobs[todo[1]])
        answers[todo[0]] = codegen_job(jobs[todo[0]])
        answers[todo[1]] = helper.answer()
        cores_free()
    elif todo:
        cores_free()
        answers = {i: codegen_job(jobs[i]) for i in todo}
    misnamed = sorted({key for answer in answers.values() for key in answer.get("misnamed", [])})
    for i, answer in answers.items():  # only what was generated now goes into the cache
        if "taken" in answer:
            raise NameTaken(answer["taken"])
        if "error" in answer:
            raise SpecError(answer["error"], source=doc.origin)
        if misnamed:
            continue
        cached[i] = (answer["source"], _checked(answer["source"], class_names, doc.origin))
        sources[i] = answer["source"]
        cache.put(keys[i], answer["source"])
    if misnamed:
        raise _Misnamed(misnamed)
    parts = [part for part in cached if part is not None]  # all of them by now: found, or generated above
    if merged_key is None:
        return parts[0]
    merged = model_parts.merge(parts[0][0], parts[1][0], fixed, (parts[0][1], parts[1][1]))
    tree = _checked(merged, class_names, doc.origin)
    cache.put(merged_key, merged)
    return merged, tree


def _cached(key: str) -> tuple[str, ast.Module] | None:
    """A models cache entry and its tree, if it passes the guard (else a warning: None)."""
    text = cache.get(key)
    if text is None:
        return None
    try:
        return text, guard.check_models(text)
    except guard.Refused as refused:
        cache.warn(key, f"its models fail the guard ({refused})")
        return None


def _checked(source: str, class_names: dict[str, str], origin: str) -> ast.Module:
    """The tree of the code generator's `source`, checked by the guard (SpecError if it fails)."""
    try:
        return guard.check_models(source)
    except guard.Refused as refused:
        raise refusal(refused, {cls: key for key, cls in class_names.items()}, origin, "the models") from None


def refusal(refused: guard.Refused, schema_of: dict[str, str], origin: str | None, where: str) -> SpecError:
    """A guard refusal as a one-line error naming the schema (or the model class) it is in."""
    statement = refused.statement
    if isinstance(statement, ast.ClassDef) and statement.name in schema_of:
        what = f"schema {schema_of[statement.name]!r} (class {statement.name})"
    elif isinstance(statement, ast.ClassDef):
        what = f"model class {statement.name}"
    else:
        what = where
    return SpecError(f"refused the generated code of {what}: {refused}", source=origin)


def _read_classes(models: Models, tree: ast.Module) -> set[str]:
    """Record RootModel root types from the generated code's tree; return all class names. A root
    type is written for the tools, which import every class it names: a forward reference in it
    (`'Pet'`, to a class defined further on) is written as the name itself, which the tool module
    imports (a string would hide the name from that import, and from the import fixes, render.tidy)."""
    defined: set[str] = set()
    # A builtin type the code generator imported under an alias (a field shadows it) is written as
    # itself: the tools import no builtin, and no tool shadows one.
    builtin = {
        alias.asname: alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "builtins" and node.level == 0
        for alias in node.names
        if alias.asname
    }
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        defined.add(node.name)
        for base in node.bases:
            if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name) and base.value.id == "RootModel":
                root = _Unquoted(builtin).visit(copy.deepcopy(base.slice))
                models.root_type[node.name] = ast.unparse(root)
                models.root_names[node.name] = {n.id for n in ast.walk(root) if isinstance(n, ast.Name)}
    models.classes = defined
    return defined


class _Unquoted(ast.NodeTransformer):
    """A type expression with each quoted class name (a forward reference) written as a name; data
    stays as it is: `Literal[...]` values, `Annotated[...]` metadata, call arguments (`Field(...)`).
    A name in `builtin` (an alias of a builtin type) is written as that builtin."""

    def __init__(self, builtin: dict[str, str] | None = None) -> None:
        self._builtin = builtin or {}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(self._builtin[node.id], node.ctx) if node.id in self._builtin else node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        generic = node.value.id if isinstance(node.value, ast.Name) else None
        if generic == "Literal":
            return node
        if generic == "Annotated" and isinstance(node.slice, ast.Tuple) and node.slice.elts:
            node.slice.elts[0] = self.visit(node.slice.elts[0])
            return node
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value.isidentifier() and not keyword.iskeyword(node.value):
            return ast.Name(node.value, ast.Load())
        return node
