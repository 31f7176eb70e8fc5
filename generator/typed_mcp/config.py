"""The config file (`--config typed-mcp.toml`, or a pyproject.toml's `[tool.typed-mcp]`): its typed
schema (unknown keys are errors) and its loading, read once per command into one `LoadedConfig`.
What `generate` and `check` run on when the command line does not say (project.py), and the
curation that `plan/curation.py` applies. Reading a config needs nothing of the plan.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from typed_mcp import names, published
from typed_mcp.errors import ConfigError
from typed_mcp.profile import Profile
from typed_mcp.repository import Use, path_problem
from typed_mcp.runtime.contracts import HEADER_TOKEN, SEARCH_WORD, client_owns_header
from typed_mcp.spec.load import is_url
from typed_mcp.spec.normalize import HTTP_METHODS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
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
    # true: the package ships its tools' vectors for discovery mode's optional semantic ranking (its
    # `[semantic]` extra; generating needs typed-mcp's own, `typed-mcp[semantic]`)
    semantic: bool = False


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
    profile: Profile = Profile.DEFAULT
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
    config, fail = loaded.config, failer(loaded)
    # Every path the config names stays in its folder, the repository (symbolic links followed).
    paths: list[tuple[str, str | None, Use]] = [("out", config.out, "folder"), ("snapshot", config.snapshot, "spec")]
    if config.source is not None and not is_url(config.source):
        paths.append(("source", config.source, "read"))
    paths += [(f"overlays.{index}", overlay, "read") for index, overlay in enumerate(config.overlays)]
    for key, path, use in paths:
        problem = path_problem(loaded.path.parent, path, use) if path is not None else None
        if problem:
            fail(key, problem)
    toolsets = [(f"toolsets.{quoted(name)}", toolset) for name, toolset in config.toolsets.items()]
    for where, selection in [("include", config.include), ("exclude", config.exclude), *toolsets]:
        for method in selection.methods:
            if method.lower() not in HTTP_METHODS:
                fail(f"{where}.methods", f"{method!r} is not an HTTP method")
    for key, name in config.rename.items():
        if not TOOL_NAME.match(name) or len(name) > names.MAX_TOOL_NAME:
            fail(
                f"rename.{quoted(key)}",
                f"{name!r} is not a tool name (lower case letters, digits and '_', starting with a letter, "
                f"at most {names.MAX_TOOL_NAME})",
            )
    for name, value in config.headers.items():
        if not HEADER_TOKEN.fullmatch(name):
            fail(f"headers.{quoted(name)}", "not an HTTP header name")
        if client_owns_header(name):
            fail(f"headers.{quoted(name)}", "a framing, routing or hop-by-hop header the HTTP client sets itself")
        elif name.lower() in _RESERVED_HEADERS:
            fail(f"headers.{quoted(name)}", "set by typed-mcp itself (credentials go in [auth], read from the env)")
        if any(c in value for c in "\r\n\x00"):
            fail(f"headers.{quoted(name)}", "a header value cannot hold line breaks")
    for name, toolset in config.toolsets.items():
        if not TOOL_NAME.match(name):
            fail(f"toolsets.{quoted(name)}", "not a toolset name ([a-z][a-z0-9_]*)")
        if not toolset.given():
            fail(f"toolsets.{quoted(name)}", "selects nothing: give tags, paths, methods, operation_ids or operations")
    for reference, override in config.operations.items():
        for word in override.keywords:
            if not words(word):
                fail(f"operations.{quoted(reference)}.keywords", f"{word!r} has no word in it")
    for target, said in config.search.synonyms.items():
        if not words(target):
            fail(f"search.synonyms.{quoted(target)}", "the API word has no word in it")
        for word in said:
            if not words(word):
                fail(f"search.synonyms.{quoted(target)}", f"{word!r} has no word in it")
    _check_registry(config.registry, fail)
    for name, scheme in schemes_of(config.auth).items():
        where = f"auth.schemes.{quoted(name)}"
        if scheme.type == "http" and scheme.scheme is None:
            fail(where, "an http scheme needs scheme = 'basic' or 'bearer'")
        if scheme.type == "apiKey" and (scheme.in_ is None or not scheme.name):
            fail(where, "an apiKey scheme needs 'in' (header, query or cookie) and 'name'")


def _check_registry(registry: RegistryConfig, fail: Fail) -> None:
    problems = [
        ("name", registry.name, published.registry_name_problem),
        ("remote_url", registry.remote_url, lambda url: published.url_problem(url, https_only=True)),
        ("website_url", registry.website_url, lambda url: published.url_problem(url, https_only=False)),
        (
            "icon",
            registry.icon,
            lambda url: published.url_problem(url, https_only=True, limit=published.ICON_URL_CHARS),
        ),
        ("description", registry.description, published.description_problem),
    ]
    for key, value, check in problems:
        if value is not None and (problem := check(value)) is not None:
            fail(f"registry.{key}", problem)
    if registry.remote_url is not None and registry.name is None:
        fail("registry.remote_url", "needs registry.name: the hosted URL is listed in the MCP Registry's server.json")


def words(text: str) -> list[str]:
    """The words of a keyword or synonym, as the search reads them (letters and digits)."""
    return SEARCH_WORD.findall(text.lower())


Fail = Callable[[str, str], NoReturn]  # ends a config check: the key at fault, and what is wrong with it


def failer(loaded: LoadedConfig) -> Fail:
    def fail(key: str, problem: str) -> NoReturn:
        raise ConfigError(loaded.path, loaded.prefix + key, problem)

    return fail


def quoted(key: str) -> str:
    # A quoted key as TOML writes it: a control character in it stays on the error's one line.
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def schemes_of(auth: AuthConfig) -> dict[str, SchemeConfig]:
    schemes: dict[str, SchemeConfig] = {}
    if auth.basic:
        schemes["basic"] = SchemeConfig(type="http", scheme="basic")
    if auth.bearer:
        schemes["bearer"] = SchemeConfig(type="http", scheme="bearer")
    schemes.update(auth.schemes)
    return schemes
