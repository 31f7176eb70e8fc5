"""The one intermediate representation between parsing (plan) and rendering.

Everything here is already safe to render: names are identifiers, and spec text is carried as
plain strings that the templates only ever emit through escaping filters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from typed_mcp.profile import Profile

Location = Literal["path", "query", "header", "cookie"]
# A table view (MCP Apps): (keys from the answer to its rows, the columns a row declares)
Table = tuple[tuple[str, ...], tuple[str, ...]]
ResponseKind = Literal["json", "text", "image", "binary", "empty"]


@dataclass(frozen=True)
class Parameter:
    wire_name: str  # the name on the wire, from the spec
    location: Location
    arg_name: str  # the Python and MCP argument name
    required: bool
    annotation: str  # a Python type expression built by the generator (never spec text)
    description: str | None = None
    has_default: bool = False
    default: Any = None  # a JSON value, rendered with repr()
    style: str | None = None  # only when it differs from the location's default
    explode: bool | None = None
    constraints: tuple[tuple[str, Any], ...] = ()  # pydantic Field keywords: ge, le, max_length, ...


BodyEncoding = Literal["json", "form", "multipart", "text", "base64"]  # how a body argument goes on the wire


@dataclass(frozen=True)
class Body:
    arg_name: str
    required: bool
    schema_key: str | None  # key of the body schema among the models; None for raw bodies
    media_type: str
    encoding: BodyEncoding
    description: str | None = None
    base64_argument: bool = False  # the argument is base64 text (decoded before sending, or sent as is)
    # multipart: the fields that are files, each of which may also be a file reference (`_runtime/files.py`)
    file_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Response:
    status: str
    kind: ResponseKind
    media_type: str | None
    schema_key: str | None = None  # for kind == "json"
    nullable: bool = False  # the JSON body may be `null` (the schema itself says so)
    empty_statuses: tuple[str, ...] = ()  # other 2xx statuses declared without a body ("204"; "2XX" matches any)
    json_also: str | None = None  # another 2xx answer's JSON media type, asked for after media_type


@dataclass(frozen=True)
class Hints:
    """A tool's annotations (MCP's behaviour hints), decided in the plan (plan/hints.py, then curation)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = True
    title: str | None = None  # the annotations' title, where curation gives one other than the tool's
    why: tuple[tuple[str, str], ...] = ()  # (MCP hint name, the reason for its value), for typed-mcp.json


@dataclass(frozen=True)
class Operation:
    key: str  # "GET /weather/{city}": stable identity across regenerations
    tool_name: str
    func_name: str
    method: str  # upper case
    path: str  # the request path template (a `#fragment` or `?query` in the spec's key is split off)
    operation_id: str | None
    title: str | None
    description: str
    parameters: tuple[Parameter, ...]
    body: Body | None
    response: Response
    security: tuple[tuple[str, ...], ...]  # alternatives; () = none needed
    tags: tuple[str, ...] = ()
    deprecated: bool = False
    fixed_query: tuple[tuple[str, str], ...] = ()  # from a spec path like `/search?type=user`
    # Curation (plan/curation.py): False drops the outputSchema (the JSON answer comes as text);
    # "text" returns an answer that does not match its model as text with a warning, not an error.
    output_schema: bool = True
    output_policy: Literal["error", "text"] = "error"
    credentials_required: bool = False  # the config's [auth] required: refuse a call without them
    keywords: tuple[str, ...] = ()  # x-mcp and config keywords: words users say for it (search)
    hints: Hints = Hints(read_only=False, destructive=True, idempotent=False)  # MCP's defaults; set by build
    title_from_description: bool = False  # no summary: the title is the description's first sentence
    # The config's naive_datetimes: the answer's `format: date-time` is published and checked as a
    # pattern admitting date-times with and without a timezone (plan/variants.py, the "naive" view)
    naive_datetimes: bool = False
    # The config's inline_bytes for the operation (None: the runtime's default, contracts.INLINE_BYTES)
    inline_bytes: int | None = None
    # The config's confirm: the person confirms each call (elicitation) before it is sent (`_runtime/confirm.py`)
    confirm: bool = False
    # The config's long_running: a 202 answer's Location is followed to the end (`_runtime/tasks.py`)
    long_running: bool = False
    # Read from the schemas when the plan is finished (plan/resolved.py), so that rendering needs no spec:
    body_words: tuple[str, ...] = ()  # the request body's property names and enumerated values (search)
    returns_array: bool = False  # the JSON answer is an array (search: the tool lists)
    table: Table | None = None  # the answer's table view, for a tool with an outputSchema (views)

    @property
    def has_output_schema(self) -> bool:
        """The tool publishes an outputSchema (and its answers carry structuredContent)."""
        return self.response.kind == "json" and self.output_schema and self.output_policy == "error"

    @property
    def read_only(self) -> bool:
        return self.hints.read_only

    @property
    def destructive(self) -> bool:
        return self.hints.destructive

    @property
    def idempotent(self) -> bool:
        return self.hints.idempotent


@dataclass(frozen=True)
class SecurityScheme:
    key: str  # the name under components.securitySchemes
    kind: Literal["bearer", "basic", "apiKey", "oauth2"]
    env_vars: tuple[str, ...]  # bearer/apiKey/oauth2: (token,), basic: (username, password)
    location: str | None = None  # apiKey: header, query or cookie
    param_name: str | None = None  # apiKey: the header/query/cookie name
    description: str | None = None
    token_url: str | None = None  # oauth2 client credentials
    client_env: tuple[str, ...] = ()  # oauth2 client credentials: (client id, client secret)


@dataclass(frozen=True)
class Skipped:
    key: str
    reason: str


@dataclass(frozen=True)
class Icon:
    src: str  # an https URL
    mime_type: str | None = None


@dataclass(frozen=True)
class Listing:
    """How the server presents itself (plan/listing.py): its server info and tools' icons, and its
    MCP Registry entry (`server.json`, written only with a registry name)."""

    title: str
    description: str  # one sentence of plain text, at most 100 characters
    website_url: str | None = None
    icons: tuple[Icon, ...] = ()
    registry_name: str | None = None  # "io.github.OWNER/NAME"
    remote_url: str | None = None  # a hosted deployment's MCP URL
    remote_auth: Literal["forwarded", "oauth"] = "forwarded"


@dataclass(frozen=True)
class Tag:
    """A tag the spec describes (its top-level `tags`), for search: its name (None when it is not a
    string) and its description."""

    name: str | None
    description: str


@dataclass(frozen=True)
class ApiPlan:
    """The finished plan: built once, by `plan.build.plan`, and read by everything after it."""

    title: str
    api_version: str
    description: str
    openapi_version: str
    default_base_url: str | None
    package_name: str  # distribution name
    module: str  # import name
    env_prefix: str
    operations: tuple[Operation, ...]
    schemes: Mapping[str, SecurityScheme]
    # schema_key -> (JSON pointer of an existing schema) or an inline schema to add under that key
    schemas: Mapping[str, str | dict[str, Any]]
    skipped: tuple[Skipped, ...]
    warnings: tuple[str, ...]
    degraded: tuple[str, ...]  # parts of the spec read in a degraded way (--strict refuses)
    extra_headers: Mapping[str, str]  # sent with every request (config)
    toolsets: Mapping[str, tuple[str, ...]]  # the config's toolsets: name -> tool names
    # the config's search synonyms: an API word -> the words users say for it
    search_synonyms: Mapping[str, tuple[str, ...]]
    # the config's `[search] semantic`: ship the tools' vectors for the optional semantic ranking
    search_semantic: bool
    curation: tuple[Mapping[str, str], ...]  # {operation, action, rule}, for typed-mcp.json
    curation_sources: tuple[Mapping[str, str], ...]  # the config and overlays used
    profile: Profile  # DATA_TOOLS: every result is {sources, data, table} (render/package.py)
    listing: Listing  # plan/listing.py
    tags: tuple[Tag, ...]  # the spec's described tags, for search

    def variables(self) -> list[dict[str, str | bool]]:
        """The variables a user sets to run the package: the base URL (with the spec's default, if any;
        `required` without one) and every credential, `secret` where it is one. Installers read it: the
        MCPB bundle's user_config (from typed-mcp.json) and the MCP Registry's server.json."""
        base: dict[str, str | bool] = {"name": f"{self.env_prefix}_BASE_URL", "about": "upstream API base URL"}
        if self.default_base_url:
            base["default"] = self.default_base_url
        else:
            base["required"] = True  # the spec names no server: nothing to call without it
        found = [base]
        for scheme in self.schemes.values():
            about = f"{scheme.kind} credential for security scheme {scheme.key}"
            for index, var in enumerate(scheme.env_vars):
                part = ("username", "password")[index] if scheme.kind == "basic" else ""
                # a username names an account: shown as typed; everything else is a secret
                about_var = f"{about} ({part})" if part else about
                found.append({"name": var, "about": about_var, "secret": part != "username"})
            for index, var in enumerate(scheme.client_env):
                part = "client secret" if index else "client id"
                found.append({"name": var, "about": f"OAuth2 {part} for {scheme.key}", "secret": bool(index)})
        return found


@dataclass
class Draft:
    """The plan while `plan.build` makes it: what planning and curation add to, never seen outside
    the plan layer; `plan.build.plan` turns it into the frozen `ApiPlan`."""

    operations: list[Operation] = field(default_factory=list)
    schemas: dict[str, str | dict[str, Any]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    extra_headers: dict[str, str] = field(default_factory=dict)
    toolsets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    search_synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    search_semantic: bool = False
    curation: list[dict[str, str]] = field(default_factory=list)
    curation_sources: list[dict[str, str]] = field(default_factory=list)
