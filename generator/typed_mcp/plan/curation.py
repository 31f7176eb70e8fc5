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
3. the config file (`--config typed-mcp.toml`, or a pyproject.toml's `[tool.typed-mcp]`), here.

Every operation excluded or changed is recorded with the rule that did it (`ApiPlan.curation`,
written to `typed-mcp.json`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from typed_mcp import names
from typed_mcp.errors import ConfigError, SpecError
from typed_mcp.plan import hints, listing
from typed_mcp.plan.ir import ApiPlan, Hints, Operation
from typed_mcp.plan.reading import mapping
from typed_mcp.repository import Use, path_problem
from typed_mcp.runtime.contracts import HEADER_TOKEN, SEARCH_WORD, client_owns_header
from typed_mcp.spec.load import is_url
from typed_mcp.spec.normalize import HTTP_METHODS, Document

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# Set by the HTTP client, content negotiation or [auth]: a credential is never written into the package.
_RESERVED_HEADERS = {"authorization", "host", "content-length", "content-type", "cookie", "accept"}


# --- the config file: a typed schema, unknown keys are errors ---------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Selection(_Strict):
    """Operations matching rules. In `include`, an operation must match every list given; in
    `exclude`, any one entry of any list excludes it."""

    tags: list[str] = []  # exact tag names
    paths: list[str] = []  # globs on the path template (`*` also matches `/`): "/admin/*"
    methods: list[str] = []  # "GET", "delete" (any case)
    operation_ids: list[str] = []  # globs on operationId: "*Admin*"

    def given(self) -> bool:
        return bool(self.tags or self.paths or self.methods or self.operation_ids)


class ToolsetConfig(Selection):
    """A toolset the config defines: the operations matching every list given (as `include`),
    and those named in `operations`."""

    operations: list[str] = []  # "METHOD /path" or an operationId

    def given(self) -> bool:
        return super().given() or bool(self.operations)


class AnnotationsConfig(_Strict):
    """A tool's annotations, in MCP's own names; each one given replaces what typed-mcp inferred."""

    readOnlyHint: StrictBool | None = None  # MCP's names, as users write them
    destructiveHint: StrictBool | None = None
    idempotentHint: StrictBool | None = None
    openWorldHint: StrictBool | None = None
    title: StrictStr | None = None

    def given(self) -> dict[str, bool | str]:
        return self.model_dump(exclude_none=True)


# Whether answers may carry date-times without a timezone where the spec says `format: date-time`
# (which RFC 3339 and strict clients read as requiring one): many FastAPI apps send them.
NaiveDatetimes = Literal["refuse", "accept"]


class OperationConfig(_Strict):
    title: str | None = None
    description: str | None = None
    # false: no outputSchema and no structuredContent; the JSON answer is returned as text
    output_schema: bool = True
    # an answer that does not match its model: an error result, or the data as text with a warning
    on_mismatch: Literal["error", "text"] = "error"
    # words users say for what the operation does, found by discovery mode's search like its name
    keywords: list[str] = []
    # the tool's annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title)
    annotations: AnnotationsConfig = AnnotationsConfig()
    # "accept": the answer's date-times may come without a timezone (see Config.naive_datetimes)
    naive_datetimes: NaiveDatetimes | None = None
    # the bytes of JSON the answer holds inline (see Config.inline_bytes)
    inline_bytes: int | None = Field(None, ge=1)
    # true: the person confirms each call before it is sent; false: never asked (see ConfirmConfig)
    confirm: bool | None = None
    # true: a 202 answer with a Location (or Operation-Location) is followed to the operation's end
    # (a task for a client of the tasks extension, else polled within the call: `_runtime/tasks.py`)
    long_running: bool = False


class ConfirmConfig(_Strict):
    # true: a destructive tool (destructiveHint true, after curation's annotations) asks the person,
    # through the client's elicitation, before its request is sent
    destructive: bool = False


class SchemeConfig(_Strict):
    """A security scheme the spec does not declare, in OpenAPI's own terms."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    type: Literal["http", "apiKey"]
    scheme: Literal["basic", "bearer"] | None = None  # type = "http"
    in_: Literal["header", "query", "cookie"] | None = Field(None, alias="in")  # type = "apiKey"
    name: str | None = None  # type = "apiKey": the header, query or cookie name
    description: str | None = None


class AuthConfig(_Strict):
    basic: bool = False  # shorthand for schemes.basic = {type = "http", scheme = "basic"}
    bearer: bool = False  # shorthand for schemes.bearer = {type = "http", scheme = "bearer"}
    schemes: dict[str, SchemeConfig] = {}
    # false (the default): the credentials are sent when configured, and calls go out without them
    # otherwise; true: a call without them fails before reaching the API
    required: bool = False


class SearchConfig(_Strict):
    # an API word -> the words (or phrases) users say for it, added to discovery mode's thesaurus:
    # issue = ["ticket", "bug"] makes "close ticket 12" find the issue tools
    synonyms: dict[str, list[str]] = {}


class RegistryConfig(_Strict):
    """How the server presents itself: its MCP Registry entry (`server.json`, written only with a
    `name`) and its server info; the spec gives the defaults (plan/listing.py)."""

    name: str | None = None  # "io.github.OWNER/NAME": the MCP Registry name (reverse-DNS namespace / name)
    remote_url: str | None = None  # a hosted deployment's MCP URL (https): server.json's `remotes`
    # what that deployment's clients send: the API's own credential (--auth forwarded), or an OAuth token
    remote_auth: Literal["forwarded", "oauth"] = "forwarded"
    website_url: str | None = None  # default: the spec's externalDocs.url, else info.contact.url
    description: str | None = None  # default: the first sentence of info.description (at most 100 characters)
    icon: str | None = None  # an https image URL; default: the spec's info.x-logo.url


class Config(_Strict):
    # What `generate` and `check` run on when the command line does not say (paths relative to this file):
    source: str | None = None  # the spec: an http(s) URL or a file
    package_name: str | None = None  # the distribution name
    out: str | None = None  # the package folder
    snapshot: str | None = None  # where a fetched spec is saved (generate) and compared with (check)
    overlays: list[str] = []  # overlay files, relative to the config file, applied before --overlay ones
    include: Selection = Selection()
    exclude: Selection = Selection()
    rename: dict[str, str] = {}  # "GET /x" or an operationId -> tool name
    operations: dict[str, OperationConfig] = {}  # "GET /x" or an operationId -> overrides
    auth: AuthConfig = AuthConfig()
    headers: dict[str, str] = {}  # sent with every request (never a credential: see [auth])
    toolsets: dict[str, ToolsetConfig] = {}  # name -> its operations (beside the tags' toolsets)
    search: SearchConfig = SearchConfig()
    # "data-tools": every result is {sources, data, table} (platforms that register only such tools)
    profile: Literal["default", "data-tools"] = "default"
    # "accept": every answer's `format: date-time` is published and checked as a pattern that admits
    # date-times with and without a timezone; [operations.X] naive_datetimes says it per operation
    naive_datetimes: NaiveDatetimes = "refuse"
    # a read (GET) tool's answer over this many bytes of JSON comes as a preview (its lists cut to
    # their first items) and a resource_link that reads it whole; None: 100,000 (about 25,000 tokens).
    # [operations.X] inline_bytes says it per operation
    inline_bytes: int | None = Field(None, ge=1)
    confirm: ConfirmConfig = ConfirmConfig()  # [operations.X] confirm says it per operation
    registry: RegistryConfig = RegistryConfig()


class LoadedConfig(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    path: Path
    sha256: str
    config: Config
    prefix: str  # "tool.typed-mcp." in a pyproject.toml, for error locations

    @property
    def overlay_paths(self) -> tuple[Path, ...]:
        return tuple(self.path.parent / overlay for overlay in self.config.overlays)


MAX_CONFIG_BYTES = 1024 * 1024  # a config is a page of TOML; a bigger file is no config


def load_config(path: Path) -> LoadedConfig:
    """Read and check a config file; a problem is one ConfigError naming the file and the key."""
    if not path.is_file():
        raise ConfigError(path, "", "no such config file")
    with path.open("rb") as handle:
        raw = handle.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(path, "", f"larger than the {MAX_CONFIG_BYTES} byte cap of a config")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(path, "", f"invalid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(path, "", "invalid TOML: nested too deeply") from None
    except ValueError as exc:  # an integer past Python's 4,300 digits
        raise ConfigError(path, "", f"invalid TOML: {str(exc).split(';')[0]}") from None
    prefix = ""
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("typed-mcp") if isinstance(data.get("tool"), dict) else None
        if not isinstance(table, dict):
            raise ConfigError(path, "tool.typed-mcp", "no [tool.typed-mcp] table")
        data, prefix = table, "tool.typed-mcp."
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        key = prefix + ".".join(str(part) for part in error["loc"])
        problem = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(path, key, problem) from None
    loaded = LoadedConfig(path=path, sha256=hashlib.sha256(raw).hexdigest(), config=config, prefix=prefix)
    _check_values(loaded)
    return loaded


def _check_values(loaded: LoadedConfig) -> None:
    config, fail = loaded.config, _failer(loaded)
    # Every path the config names stays in its folder, the repository (symbolic links followed).
    paths: list[tuple[str, str | None, Use]] = [("out", config.out, "folder"), ("snapshot", config.snapshot, "spec")]
    if config.source is not None and not is_url(config.source):
        paths.append(("source", config.source, "read"))
    paths += [(f"overlays.{index}", overlay, "read") for index, overlay in enumerate(config.overlays)]
    for key, path, use in paths:
        problem = path_problem(loaded.path.parent, path, use) if path is not None else None
        if problem:
            fail(key, problem)
    toolsets = [(f"toolsets.{_quoted(name)}", toolset) for name, toolset in config.toolsets.items()]
    for where, selection in [("include", config.include), ("exclude", config.exclude), *toolsets]:
        for method in selection.methods:
            if method.lower() not in HTTP_METHODS:
                fail(f"{where}.methods", f"{method!r} is not an HTTP method")
    for key, name in config.rename.items():
        if not _TOOL_NAME.match(name) or len(name) > names.MAX_TOOL_NAME:
            fail(
                f"rename.{_quoted(key)}",
                f"{name!r} is not a tool name (lower case letters, digits and '_', starting with a letter, "
                f"at most {names.MAX_TOOL_NAME})",
            )
    for name, value in config.headers.items():
        if not HEADER_TOKEN.fullmatch(name):
            fail(f"headers.{_quoted(name)}", "not an HTTP header name")
        if client_owns_header(name):
            fail(f"headers.{_quoted(name)}", "a framing, routing or hop-by-hop header the HTTP client sets itself")
        elif name.lower() in _RESERVED_HEADERS:
            fail(f"headers.{_quoted(name)}", "set by typed-mcp itself (credentials go in [auth], read from the env)")
        if any(c in value for c in "\r\n\x00"):
            fail(f"headers.{_quoted(name)}", "a header value cannot hold line breaks")
    for name, toolset in config.toolsets.items():
        if not _TOOL_NAME.match(name):
            fail(f"toolsets.{_quoted(name)}", "not a toolset name ([a-z][a-z0-9_]*)")
        if not toolset.given():
            fail(f"toolsets.{_quoted(name)}", "selects nothing: give tags, paths, methods, operation_ids or operations")
    for reference, override in config.operations.items():
        for word in override.keywords:
            if not _words(word):
                fail(f"operations.{_quoted(reference)}.keywords", f"{word!r} has no word in it")
    for target, said in config.search.synonyms.items():
        if not _words(target):
            fail(f"search.synonyms.{_quoted(target)}", "the API word has no word in it")
        for word in said:
            if not _words(word):
                fail(f"search.synonyms.{_quoted(target)}", f"{word!r} has no word in it")
    _check_registry(config.registry, fail)
    for name, scheme in _schemes(config.auth).items():
        where = f"auth.schemes.{_quoted(name)}"
        if scheme.type == "http" and scheme.scheme is None:
            fail(where, "an http scheme needs scheme = 'basic' or 'bearer'")
        if scheme.type == "apiKey" and (scheme.in_ is None or not scheme.name):
            fail(where, "an apiKey scheme needs 'in' (header, query or cookie) and 'name'")


def _check_registry(registry: RegistryConfig, fail: _Fail) -> None:
    problems = [
        ("name", registry.name, listing.registry_name_problem),
        ("remote_url", registry.remote_url, lambda url: listing.url_problem(url, https_only=True)),
        ("website_url", registry.website_url, lambda url: listing.url_problem(url, https_only=False)),
        ("icon", registry.icon, lambda url: listing.url_problem(url, https_only=True, limit=listing.ICON_URL_CHARS)),
        ("description", registry.description, listing.description_problem),
    ]
    for key, value, check in problems:
        if value is not None and (problem := check(value)) is not None:
            fail(f"registry.{key}", problem)
    if registry.remote_url is not None and registry.name is None:
        fail("registry.remote_url", "needs registry.name: the hosted URL is listed in the MCP Registry's server.json")


def _words(text: str) -> list[str]:
    """The words of a keyword or synonym, as the search reads them (letters and digits)."""
    return SEARCH_WORD.findall(text.lower())


_Fail = Callable[[str, str], NoReturn]  # ends a config check: the key at fault, and what is wrong with it


def _failer(loaded: LoadedConfig) -> _Fail:
    def fail(key: str, problem: str) -> NoReturn:
        raise ConfigError(loaded.path, loaded.prefix + key, problem)

    return fail


def _quoted(key: str) -> str:
    # A quoted key as TOML writes it: a control character in it stays on the error's one line.
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _schemes(auth: AuthConfig) -> dict[str, SchemeConfig]:
    schemes: dict[str, SchemeConfig] = {}
    if auth.basic:
        schemes["basic"] = SchemeConfig(type="http", scheme="basic")
    if auth.bearer:
        schemes["bearer"] = SchemeConfig(type="http", scheme="bearer")
    schemes.update(auth.schemes)
    return schemes


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

    def __init__(self, loaded: LoadedConfig | None = None, removed: list[tuple[str, str]] | None = None) -> None:
        self.loaded = loaded
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
        _failer(self.loaded)(key, problem)

    # -- the document ------------------------------------------------------------------------------

    def add_schemes(self, doc: Document) -> None:
        """The config's security schemes, added to the document's own (before planning reads them)."""
        schemes = _schemes(self.config.auth)
        if not schemes:
            return
        components = mapping(doc.data.get("components"))
        declared = mapping(components.get("securitySchemes"))
        added = dict(declared)
        for name, scheme in schemes.items():
            if name in declared:
                self._fail(f"auth.schemes.{_quoted(name)}", f"the spec already declares a security scheme {name!r}")
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
                    f"{table}.{_quoted(reference)}", "matches no operation (give 'METHOD /path' or an operationId)"
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
                if _TOOL_NAME.match(names.snake_case(name)):
                    self._names[key] = (names.snake_case(name), "x-mcp name")
                else:
                    self._warnings.append(f"{key}: x-mcp name {name!r} is not a usable tool name: ignored")
            description = _x_mcp(op).get("description")
            if isinstance(description, str) and description.strip():
                self._descriptions[key] = description.strip()
            keywords = _x_mcp(op).get("keywords")
            if keywords is not None:
                if isinstance(keywords, list) and all(isinstance(k, str) for k in keywords):
                    self._keywords[key] = tuple(k.strip() for k in keywords if _words(k))
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
                        f"toolsets.{_quoted(name)}.operations",
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
            return f"config operations.{_quoted(reference)}.naive_datetimes" if own == "accept" else None
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
            self._fail(f"rename.{_quoted(reference)}", problem)
        raise SpecError(f"x-mcp name of {key}: {problem}")

    # -- the plan --------------------------------------------------------------------------------------

    def finish(self, plan: ApiPlan) -> None:
        """Descriptions, titles, output policies and config credentials on the planned operations;
        the record of it all on the plan, in a deterministic order."""
        overrides = {self._resolve(reference): value for reference, value in self.config.operations.items()}
        schemes = tuple(name for name in _schemes(self.config.auth) if name in plan.schemes)
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
            target.strip(): [word.strip() for word in said if _words(word)]
            for target, said in self.config.search.synonyms.items()
        }
        if plan.search_synonyms:
            self._record("*", f"search synonyms for {len(plan.search_synonyms)} words", "config search.synonyms")
        tools = {op.key: op.tool_name for op in plan.operations}
        for name, keys in self._toolsets.items():
            members = [tools[key] for key in keys if key in tools]
            if members:
                plan.toolsets[name] = members
                self._record("*", f"toolset {name} ({len(members)} tools)", f"config toolsets.{_quoted(name)}")
            else:
                plan.warnings.append(f"config toolsets.{_quoted(name)}: matches no operation; not served")
        plan.warnings += self._warnings
        # In the spec's order of operations (those an overlay removed first, by key); "*" before all.
        order = self._order
        plan.curation = sorted(
            self.entries, key=lambda e: (e["operation"] != "*", order.get(e["operation"], -1), e["operation"])
        )
        sources = []
        if self.loaded is not None:
            sources.append({"config": self.loaded.path.name, "sha256": self.loaded.sha256})
        plan.curation_sources = sources

    def _finish_operation(
        self, op: Operation, override: OperationConfig | None, schemes: tuple[str, ...], plan: ApiPlan
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
            where = f"config operations.{_quoted(self._reference(op.key))}"
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
            return f"config operations.{_quoted(self._reference(key))}.confirm" if override.confirm else None
        return "config confirm.destructive" if self.config.confirm.destructive and annotated.destructive else None

    def _annotate(self, key: str, current: Hints, given: dict[str, bool | str], rule: str) -> Hints:
        said = ", ".join(f"{hint} {json.dumps(value)}" for hint, value in given.items())
        self._record(key, f"annotations: {said}", rule)
        return hints.overridden(current, given, rule)

    def _reference(self, key: str) -> str:
        return next((r for r in self.config.operations if self._resolve(r) == key), key)
