"""A catalog worker (run as `python -m typed_mcp.catalog.worker GC_THRESHOLD`): lists tools of a
generated package the MCP SDK's own way.

It imports the SDK at once, while the generator is still writing the models; then it reads the
package's location, and after that one chunk of tool names per line. Told to `prepare`, it imports
every model and derives their schemas (`_Pool`) before the first chunk; given `forks`, it then forks
the other workers, each answering on the pipes the generator made for it. For each chunk it answers one
result: the chunk's tools as the SDK's server lists them (`MCPServer.list_tools()`, each dumped as
the server's session dumps what it sends), each `$defs` entry the number of its text, which this
worker sends once (`_Definitions`, `pack.Listed`). Tool and model modules stay imported between chunks.
Listing through an in-memory `Client` gives the same objects (the corpus checks it for every spec),
but parsing and dumping a big catalog again costs seconds of CPU.
"""

from __future__ import annotations

import contextvars
import ctypes
import functools
import gc
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from types import GenericAlias
from typing import Any

import anyio
import pydantic
import pydantic.json_schema
from mcp.server import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata, StrictJsonSchema
from mcp.types import Icon, Tool

from typed_mcp.catalog import budget, pack
from typed_mcp.children import print_result
from typed_mcp.runtime import registry, schemas, views

_JSON_SCHEMA = pydantic.TypeAdapter.json_schema  # before `_faster_schemas` wraps it
# The return type of the tool whose output schema the SDK derives (`FuncMetadata.output_model`): the
# type of the adapter it derives it with (read from the SDK's public field, not from the adapter).
_DERIVING: contextvars.ContextVar[Any] = contextvars.ContextVar("deriving", default=None)
POOL_DEFS = 200  # a schema with more definitions than this: derive every model's schema once, in one pass
_PR_SET_PDEATHSIG = 1  # prctl(2)
_POOLED = "x-typed-mcp-pooled"  # stands in for a pooled model's definition while an arguments schema is derived
_ARGUMENTS = (("by_alias", True),)  # how the SDK derives a tool's input schema (`Tool.from_function`)
_ANSWERS = (("schema_generator", StrictJsonSchema),)  # and its output schema (`FuncMetadata.output_schema`)
_ALIKE = frozenset({_ARGUMENTS, _ANSWERS})  # the same definitions, unless pydantic warns (the strict one raises)


class _Pool:
    """Every model's JSON schema of the package, derived in one pass and shared by the tools.

    pydantic derives a tool's output schema over the model's whole closure of referenced models; on
    an API where each closure is most of the API (Stripe's expandable fields), that is a second of
    CPU and half a megabyte for every tool. Once a closure that big is seen, one adapter of them all
    derives all the package's models together (the same definitions, under the same names, since
    every model class has its own name), and a tool's schema is its model's definition plus the
    closure of definitions it refers to: the shared objects themselves, never copied, so that the
    budget (`budget.Trimmer`) measures each of them once and the worker never holds a full catalog.
    Input schemas take their models from a pool too (`arguments`): a request body's closure is as big."""

    def __init__(self, module: str, enabled: bool = True) -> None:
        self.module = module
        self.enabled = enabled  # False: never built (a listing of a few tools costs less than the pool)
        # options -> each model's name and the definitions; None: derive each schema alone
        self.ready: dict[tuple[Any, ...], tuple[dict[type, str], dict[str, Any]] | None] = {}
        self.refs = budget.Sizes()  # the references of each definition, found once

    def schema(self, kind: Any, options: tuple[tuple[str, Any], ...]) -> dict[str, Any] | None:
        """The schema of the model class `kind` as `TypeAdapter(kind).json_schema(**options)` gives it,
        or None when it is not one of the package's models or the pool is not built for `options`."""
        built = self.ready.get(options)
        if built is None or kind not in built[0]:
            return None
        names, defs = built
        name = names[kind]
        closure = self.closure(defs, [name])
        # In pydantic's order (keys sorted), whichever way a schema was derived: `catalog.json` keeps it.
        if name in closure:  # recursive: pydantic keeps the root a reference (the SDK inlines it)
            return {"$defs": {key: defs[key] for key in sorted(closure)}, "$ref": f"#/$defs/{name}"}
        schema = dict(defs[name])
        if closure:
            schema["$defs"] = {key: defs[key] for key in sorted(closure)}
        return dict(sorted(schema.items()))

    def closure(self, defs: dict[str, Any], names: list[str]) -> dict[str, None]:
        """The names of the definitions that those of `names` refer to, directly or not."""
        closure: dict[str, None] = {}
        queue = list(names)
        while queue:
            for other in self.refs.refs(defs[queue.pop()]):
                if other not in closure and other in defs:
                    closure[other] = None
                    queue.append(other)
        return closure

    def arguments(self, model: type[pydantic.BaseModel], options: tuple[tuple[str, Any], ...]) -> dict[str, Any] | None:
        """The schema of a tool's arguments model as `model.model_json_schema(**options)` gives it, its
        fields derived by pydantic and the package's models taken from the pool (so the closure behind
        a request body is not walked again for each tool); None when the pool is not built for
        `options` or pydantic names a model differently than in the pool."""
        return self.shallow(
            options,
            lambda generator: pydantic.json_schema.model_json_schema(
                model, schema_generator=generator, **dict(options)
            ),
        )

    def shallow(
        self,
        options: tuple[tuple[str, Any], ...],
        derive: Callable[[type[pydantic.json_schema.GenerateJsonSchema]], dict[str, Any]],
    ) -> dict[str, Any] | None:
        """What `derive(generator)` gives with `options`' schema generator, but each of the package's
        models taken from the pool rather than derived again; None when the pool is not built for
        `options` or pydantic names a model differently than in the pool."""
        built = self.ready.get(options)
        if built is None:
            return None
        names, defs = built
        marker = _POOLED
        base: type[pydantic.json_schema.GenerateJsonSchema] = dict(options).get(
            "schema_generator", pydantic.json_schema.GenerateJsonSchema
        )

        class Shallow(base):  # type: ignore[valid-type,misc]  # the generator the options name
            def model_schema(self, schema: Any) -> Any:
                name = names.get(schema["cls"])
                return {marker: name} if name is not None else super().model_schema(schema)

        schema = derive(Shallow)
        own = schema.get("$defs") or {}
        pooled = [key for key, value in own.items() if marker in value]
        if any(own[key][marker] != key for key in pooled):
            return None
        if pooled:
            together = {key: value for key, value in own.items() if key not in pooled}
            together.update((key, defs[key]) for key in (*pooled, *self.closure(defs, pooled)))
            schema["$defs"] = dict(sorted(together.items()))  # sorted, as pydantic sorts them
        return schema

    def build(self, options: tuple[tuple[str, Any], ...]) -> None:
        if options in self.ready or not self.enabled:
            return
        models = importlib.import_module(self.module + ".models")
        classes = [getattr(models, name) for name in models.__all__]
        classes = [cls for cls in classes if isinstance(cls, type) and issubclass(cls, pydantic.BaseModel)]
        # One adapter for all of them: one core schema holding each model once. (`models_json_schema`
        # would build every model class, and in a recursive group each class holds the whole group:
        # the group's size squared.) Its items are the models' references, in order.
        shape: Any = GenericAlias(tuple, tuple(classes)) if classes else tuple[()]
        together = pydantic.TypeAdapter(shape)
        if options in _ALIKE:  # one pass for answers and request bodies, when no generator would warn

            class Watching(pydantic.json_schema.GenerateJsonSchema):
                def emit_warning(self, kind: Any, detail: str) -> None:
                    warned.append(kind)
                    super().emit_warning(kind, detail)

            warned: list[Any] = []
            top = _JSON_SCHEMA(together, schema_generator=Watching)
            # Where pydantic warns, the SDK's stricter generator raises: then each tool's schemas are
            # derived alone, so that only the tools whose own models warn fail, as they do in the SDK.
            self.ready.update(dict.fromkeys(_ALIKE, None if warned else self._found(classes, top)))
        else:
            self.ready[options] = self._found(classes, _JSON_SCHEMA(together, **dict(options)))

    @staticmethod
    def _found(classes: list[type], top: dict[str, Any]) -> tuple[dict[type, str], dict[str, Any]]:
        """Each model's name among the definitions of the one pass `top`, and the definitions."""
        names = {}
        for cls, item in zip(classes, top.get("prefixItems") or [], strict=False):
            ref = item.get("$ref") if len(item) == 1 else None
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                names[cls] = ref[len("#/$defs/") :]
        return names, top.get("$defs", {})


def _faster_schemas(pool: _Pool) -> None:
    """Shortcuts that change how fast schemas are made, never what they are (the catalog tests
    compare with what the eager server lists through a Client): pydantic encodes every `None`
    default through a new TypeAdapter, and the SDK derives the output schema of a model again for
    each tool that returns it (and, where closures are most of the API, over all of it: `_Pool`)."""
    encode_default = pydantic.json_schema.GenerateJsonSchema.encode_default
    # Patched in this worker process only, which lists tools and exits.
    pydantic.json_schema.GenerateJsonSchema.encode_default = (  # type: ignore[method-assign]
        lambda self, dft: None if dft is None else encode_default(self, dft)
    )
    json_schema, schemas = _JSON_SCHEMA, {}

    def memo_json_schema(self: pydantic.TypeAdapter[Any], **options: Any) -> dict[str, Any]:
        kind = _DERIVING.get()  # the first adapter asked while the SDK derives a tool's output schema
        _DERIVING.set(None)
        try:
            settings = tuple(sorted(options.items()))
            key = (kind, settings)
            hash(key)
        except TypeError:
            kind = None
        if kind is None:
            return json_schema(self, **options)
        if key not in schemas:
            pooled = pool.schema(kind, settings)
            if pooled is None:  # a model of the tool's own module: its fields derived, the package's models pooled
                pooled = pool.shallow(
                    settings, lambda generator: json_schema(self, **{**options, "schema_generator": generator})
                )
            if pooled is not None:
                return pooled  # shared definitions: the SDK copies the root, and changes nothing below
            schemas[key] = json.dumps(derived := json_schema(self, **options))
            if len(derived.get("$defs") or ()) > POOL_DEFS:
                pool.build(settings)
        fresh: dict[str, Any] = json.loads(schemas[key])  # a copy: the caller may change it
        return fresh

    pydantic.TypeAdapter.json_schema = memo_json_schema  # type: ignore[method-assign]  # as above
    post_init = FuncMetadata.model_post_init

    def deriving(self: FuncMetadata, context: Any, /) -> None:
        token = _DERIVING.set(self.output_model)
        try:
            post_init(self, context)
        finally:
            _DERIVING.reset(token)

    FuncMetadata.model_post_init = deriving  # type: ignore[method-assign]  # as above

    def pooled_arguments(cls: type[ArgModelBase], /, **options: Any) -> dict[str, Any]:
        settings = tuple(sorted(options.items()))
        if settings == _ARGUMENTS:
            pooled = pool.arguments(cls, settings)
            if pooled is not None:
                return pooled
        derived = pydantic.json_schema.model_json_schema(cls, **options)  # what the class method returns
        if settings == _ARGUMENTS and len(derived.get("$defs") or ()) > POOL_DEFS:
            pool.build(settings)
        return derived

    ArgModelBase.model_json_schema = classmethod(pooled_arguments)  # type: ignore[assignment,method-assign]  # as above


# As catalog.json writes JSON, but a float JSON has no text for fails (the session dumps it as null).
_COMPACT: dict[str, Any] = {**pack.COMPACT, "allow_nan": False}
_SCHEMAS = {"input_schema": "inputSchema", "output_schema": "outputSchema"}  # field -> the key it is dumped as


class _Definitions:
    """Tools as they are sent (`pack.Listed`): each `$defs` entry the number of its text, which goes
    out once, with the first chunk that uses it. A definition that a thousand tools share (the pool
    hands each the same object) is serialized once, not once per tool, and the generator parses it
    once. Remembered by identity, as `budget.Sizes` remembers sizes, each object kept alive so that
    no identity is reused."""

    def __init__(self) -> None:
        self._numbers: dict[int, tuple[Any, int, int]] = {}  # id -> (the object, its number, its bytes)
        self._new: list[str] = []

    def sent(self) -> list[str]:
        """The texts numbered since the last call, in the order of their numbers."""
        new, self._new = self._new, []
        return new

    def tool(self, tool: Tool) -> tuple[dict[str, Any], int]:
        """The tool as the server's session dumps it, its definitions numbered; and the bytes of the
        whole tool's JSON."""
        schemas = {key: getattr(tool, field) for field, key in _SCHEMAS.items()}
        # The session's dump of the tool with an empty stand-in for each schema (so it keeps their
        # places; one that is None stays None and is left out, as the session leaves it out).
        stand_ins: dict[str, Any] = {field: None if schemas[key] is None else {} for field, key in _SCHEMAS.items()}
        dumped = tool.model_copy(update=stand_ins).model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            return self._numbered(dumped, schemas)
        except ValueError:  # a float JSON has no text for: as the session's dump writes it (null)
            whole = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            return self._numbered(dumped, {key: whole.get(key) for key in _SCHEMAS.values()})

    def _numbered(self, dumped: dict[str, Any], schemas: dict[str, Any]) -> tuple[dict[str, Any], int]:
        dumped = {key: schemas[key] if key in schemas else value for key, value in dumped.items()}
        extra = 0  # the definitions' bytes beyond their numbers'
        for key in _SCHEMAS.values():
            schema = dumped.get(key)
            defs = schema.get("$defs") if isinstance(schema, dict) else None
            if isinstance(schema, dict) and isinstance(defs, dict):
                numbered = {}
                for name, definition in defs.items():
                    known = self._numbers.get(id(definition))
                    if known is None or known[0] is not definition:
                        text = json.dumps(definition, **_COMPACT)
                        known = (definition, len(self._numbers), len(text.encode()))
                        self._numbers[id(definition)] = known
                        self._new.append(text)
                    numbered[name] = known[1]
                    extra += known[2] - len(str(known[1]))
                dumped[key] = {**schema, "$defs": numbered}
        return dumped, len(json.dumps(dumped, **_COMPACT).encode()) + extra


def _listed(server: MCPServer) -> list[Any]:
    """`server.list_tools()`, kept out of the task's result: when `asyncio.run` ends, Python 3.11's
    `signal.getsignal` formats the repr of its SIGINT handler, which holds the finished task and so its
    result (a quarter of a second for a chunk of big tools)."""
    out: list[Any] = []

    async def listing() -> None:
        out.extend(await server.list_tools())

    anyio.run(listing)
    return out


def main() -> None:
    gc.set_threshold(int(sys.argv[1]), 50, 1000)
    where = json.loads(sys.stdin.readline())
    pool = _Pool(where["module"], where.get("pool", True))
    _faster_schemas(pool)
    sys.path.insert(0, where["src"])
    if where.get("prepare"):
        # Told once the package's models are checked, while the generator still tidies and checks its
        # tool modules: nothing of the tools is imported before a chunk of them is asked for.
        pool.build(_ANSWERS)
    _fork(where.get("forks") or [])
    _serve(where["module"], where.get("budget", budget.BUDGET))


def _fork(forks: list[list[int]]) -> None:
    """Become one of `1 + len(forks)` workers: a forked copy of this process for each `[stdin, stdout,
    stderr]` triple of descriptors (the generator's pipes to it, passed to this process), sharing what
    this one has imported and built. Each copy stops when this process does."""
    if not forks:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    gc.freeze()  # the shared objects stay out of each copy's collections, so their pages stay shared
    parent = os.getpid()
    own = sorted({fd for triple in forks for fd in triple})
    for triple in forks:
        if os.fork() == 0:
            _stop_with(parent)
            for standard, fd in enumerate(triple):
                os.dup2(fd, standard)
            for fd in own:
                os.close(fd)
            # The inherited stdin object may hold lines read ahead for the first process.
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115  # this process's stdin until it exits
            return
    for fd in own:
        os.close(fd)


def _stop_with(parent: int) -> None:
    """Have the kernel kill this forked worker when its parent ends (the generator stops the parent)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0 or os.getppid() != parent:
        os._exit(1)  # the parent ended before the request took effect (or it cannot be made)


class _Registering:
    """What registering the package's tools needs, read from the package on the first chunk."""

    def __init__(self, module: str, limit: int) -> None:
        # The package's tools, registered by the runtime's own functions (`typed_mcp.runtime`, of which
        # the package carries a copy byte for byte), exactly as the package's eager server registers
        # them: never through code of its server module.
        about, self.listed = importlib.import_module(module + "._about"), importlib.import_module(module + ".tools")
        self.module = module
        self.tables = views.TableViews(about.PACKAGE, self.listed.VIEWS, self.listed.INDEX)
        self.icons = [Icon.model_validate(icon) for icon in about.ICONS] or None  # the server's own, on each tool
        self.trimmer = budget.Trimmer(functools.partial(schemas.uri, about.PACKAGE), limit)

    def server(self, names: list[str]) -> MCPServer:
        server = MCPServer(name="catalog")
        for name in names:
            entry = registry.tool_entry(self.module, self.listed.INDEX, name)
            registry.register_tool(server, entry, self.tables.meta(name), icons=self.icons)
        return server


def _serve(module: str, limit: int) -> None:
    """Answer each chunk of tool names on stdin with its tools (see the module's docstring)."""
    definitions = _Definitions()
    package: _Registering | None = None
    for line in sys.stdin:
        package = package or _Registering(module, limit)
        server, trimmer = package.server(json.loads(line)), package.trimmer
        tools, sizes, depths = [], [], {}
        for tool in _listed(server):
            # Within the budget before the tool is dumped: a trimmed tool is never serialized whole.
            done = budget.fit(tool.input_schema, tool.output_schema, trimmer.budget, trimmer.sizes)
            if done.depth is not None:
                depths[tool.name] = done.depth
                shortened = {
                    "input_schema": done.input_schema,
                    "output_schema": done.output_schema,
                    "description": trimmer.described(tool.name, tool.description),
                }
                tool = tool.model_copy(update=shortened)
            sent, size = definitions.tool(tool)
            tools.append(sent)
            sizes.append(size)
        print_result({"shared": definitions.sent(), "tools": tools, "sizes": sizes, "trimmed": depths})


if __name__ == "__main__":
    main()
