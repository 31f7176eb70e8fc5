"""The MCP server of a package: publishes every tool of its `tools/` with its schemas, and calls them.

The package's `server.py` describes the package (`Package`: its names, its tools' index, toolsets and
table views, its upstream API); everything else is here, the same in every package. Over stdio and in
full mode a server loads no module of discovery, search, hosting, OAuth or table views: discovery mode
imports `discovery` (and its search), a table view `views` when one is first used, and streamable HTTP
is served by `streamable.py`.

Only the MCP SDK's public API is used: the low-level `Server` (constructor handlers `on_list_tools`,
`on_call_tool`, `get_tool_input_schema`, `on_list_resources` and `on_read_resource`, its `middleware`
list and `extensions` map, `run`, `create_initialization_options` and `streamable_http_app`),
`MCPServer.add_tool`/`call_tool`/`list_tools`/`custom_route`/`run`, the MCP Apps extension
(`mcp.server.apps.Apps`) and the `request` of the handler context. Nothing reaches into the SDK's
private attributes, so a new SDK release either keeps working or fails loudly, never by publishing an
empty tool list.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

import anyio
from mcp.server import MCPServer, ServerRequestContext
from mcp.server.caching import CACHEABLE_METHODS, CacheableMethod, CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.lowlevel import Server as LowLevelServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import find_invalid_x_mcp_header, x_mcp_header_map
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    Icon,
    InputRequiredResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as MCPTool
from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, get_tracer_provider
from starlette.requests import Request
from starlette.responses import JSONResponse

from . import heap, registry, schemas
from .arguments import ArgumentCheck
from .config import FORWARDED_AUTHORIZATION
from .contracts import unpack_catalog
from .http import Api
from .links import Links
from .models import build_models
from .narrowing import Narrowed, Narrowing
from .registry import ToolEntry
from .results import error_result
from .selection import Selection
from .stdio import CheckedLines
from .work import Overtime, off_loop

if TYPE_CHECKING:  # imported where a mode uses them (see the module's docstring)
    from .confirm import Confirmation
    from .discovery import Discovery
    from .tasks import LongRunning
    from .views import TableViews

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# A table view: the keys from `structuredContent` to the rows, and the columns (`tools.VIEWS`).
View = tuple[Sequence[str], Sequence[str]]
# The tool catalog, the table views and the schema resources are written at generation time and never
# change while the server runs: every list and read result a 2026-07-28 client may cache says so, for
# the longest a client keeps anything (24 hours: the SDK client's MAX_TTL_MS) and for every caller
# ("public": the answers depend on no client's credentials; the selection is the server's, not theirs).
_HINT = CacheHint(ttl_ms=24 * 60 * 60 * 1000, scope="public")
CACHE_HINTS = cast("dict[CacheableMethod, CacheHint]", dict.fromkeys(CACHEABLE_METHODS, _HINT))  # the SDK's names


class ServerInfo(TypedDict):
    """What a server says of itself beside its name, the same whichever SDK class serves."""

    version: str
    instructions: str
    description: str | None
    website_url: str | None
    icons: list[Icon] | None
    cache_hints: dict[CacheableMethod, CacheHint]


@dataclass(frozen=True)
class Package:
    """What differs from one package to the next, as its `server.py` gives it."""

    module: str  # the import name (`weather_mcp`): its tools are the modules `<module>.tools.<name>`
    name: str  # the distribution's name (`weather-mcp`): the server's name
    version: str
    instructions: str
    env_prefix: str  # the environment variables' prefix
    folder: Path  # where `catalog.json` (the tools/list result) and `search.json` were written
    index: Mapping[str, str]  # tool name -> its module (`tools.INDEX`)
    toolsets: Mapping[str, Sequence[str]]  # `tools.TOOLSETS`
    views: Mapping[str, View]  # tool name -> its table view (`tools.VIEWS`)
    api: Api  # the upstream API (`upstream.api`)
    tool_count: int
    description: str | None = None
    website_url: str | None = None
    icons: Sequence[Mapping[str, Any]] = ()
    # tool name -> the bytes of JSON it answers inline, where the config changes the default (`links.py`)
    inline_bytes: Mapping[str, int] = field(default_factory=dict)
    # the tools whose calls the person confirms before they are sent (`confirm.py`)
    confirm: frozenset[str] = frozenset()
    # the tools whose 202 answer is followed to the operation's end (`tasks.py`)
    long_running: frozenset[str] = frozenset()

    @property
    def catalog(self) -> Path:
        return self.folder / "catalog.json"

    @property
    def search(self) -> Path:
        return self.folder / "search.json"

    @functools.cached_property
    def icon_list(self) -> list[Icon] | None:
        """The server's icons, in its info beside its name, version, description and website (2025-11-25
        and later clients show them); the tools carry the same icons, so a host that lists tools of many
        servers shows whose each one is."""
        return [Icon.model_validate(icon) for icon in self.icons] or None

    @property
    def server_info(self) -> ServerInfo:
        return ServerInfo(
            version=self.version,
            instructions=self.instructions,
            description=self.description,
            website_url=self.website_url,
            icons=self.icon_list,
            cache_hints=CACHE_HINTS,
        )

    @functools.cached_property
    def tables(self) -> TableViews:
        """The table views (MCP Apps) of every list tool of the package."""
        from .views import TableViews  # only a server that shows a table view loads them

        return TableViews(self.name, dict(self.views), self.index)

    def tool_entry(self, name: str) -> ToolEntry:
        """A tool's function and description, importing its module."""
        return registry.tool_entry(self.module, self.index, name)

    def tool_entries(self) -> list[ToolEntry]:
        """Every tool, in the order of the spec (imports every tool module)."""
        return [self.tool_entry(name) for name in self.index]

    def register_tool(self, server: MCPServer, entry: ToolEntry) -> None:
        """Register the tool `entry` on `server` as the eager server does (the catalog is made this way)."""
        meta = self.tables.meta(entry.name) if entry.name in self.views else {}
        registry.register_tool(server, entry, meta, icons=self.icon_list)

    def schema_uri(self, name: str) -> str:
        """The resource that holds the tool `name`'s schemas whole (named by a trimmed tool)."""
        return schemas.uri(self.name, name)

    async def health(self, request: Request) -> JSONResponse:
        """GET /health (streamable HTTP), for load balancers."""
        return JSONResponse({"status": "ok", "package": self.name, "version": self.version, "tools": self.tool_count})


class Server(LowLevelServer):
    """The SDK's low-level server, answering tools/list from `catalog.json`, in pages, without
    importing a single tool, and calling a tool through an `MCPServer` that registers it the first
    time it is called.

    `catalog.json` is what the SDK itself published for these functions when the package was
    generated (the eager `build_server(eager=True)`), so the schemas are the same, just precomputed.
    The low-level server is the SDK's route for tools whose schemas come from a file: it validates
    and shapes each page for the client's protocol version, but validates no arguments, so every
    call goes to the `MCPServer`, which does (with the tool's own argument model).

    This class only adds names the SDK's class does not have (a test checks it): the handlers are
    passed to the constructor, nothing of the SDK is overridden.
    """

    PAGE_BYTES = 4 * 1024 * 1024  # a client's message cap is 10 MiB (TypeScript SDK, stdio): stay well below

    def __init__(
        self,
        package: Package,
        *,
        forward_authorization_header: bool = False,
        selection: Selection | None = None,
        discovery: bool = False,
    ) -> None:
        selection = selection or Selection()
        catalog = _Catalog(package, self.PAGE_BYTES, forward_authorization_header, selection, discovery)
        # The served tools that have a table view; without any, no resources capability and no Apps extension.
        viewed = [name for name in catalog.by_name if name in package.views]
        links = Links(package.name, package.env_prefix, package.inline_bytes)  # big answers: a preview and a link
        # Resources: the table views, the whole schemas of the tools the schema budget shortened, and
        # the links to big answers.
        resources = bool(viewed or catalog.shortened or links.serves(catalog.tools))
        super().__init__(
            package.name,
            **package.server_info,
            on_list_tools=self.typed_mcp_list_tools,
            on_call_tool=cast(_CallTool, self.typed_mcp_call_tool),
            get_tool_input_schema=self.typed_mcp_input_schema,
            on_list_resources=self.typed_mcp_list_resources if resources else None,
            on_list_resource_templates=self.typed_mcp_list_resource_templates if resources else None,
            on_read_resource=self.typed_mcp_read_resource if resources else None,
        )
        # The SDK's default middleware, its OpenTelemetry span per message, runs only while a tracer
        # provider is installed: without one the span records nothing and costs about 2% of a call.
        self.middleware = [_when_traced(middleware) for middleware in self.middleware]
        self.typed_mcp = catalog
        self.typed_mcp_viewed = viewed
        self.typed_mcp_links = links
        self.typed_mcp_confirm: Confirmation | None = None
        if package.confirm:
            from .confirm import Confirmation  # only a package with tools to confirm loads it

            self.typed_mcp_confirm = Confirmation(package.name, package.env_prefix, package.confirm, links.secret)
            self.middleware.append(self.typed_mcp_confirm.boundary)
        self.typed_mcp_tasks: LongRunning | None = None
        if package.long_running & catalog.by_name.keys():  # a served tool is long-running
            from .tasks import LongRunning  # only such a server loads it

            tasks = LongRunning(
                package.name, package.env_prefix, package.long_running, links.secret, package.api, catalog.package
            )
            self.typed_mcp_tasks = tasks
            if not discovery:  # discovery's call_tool follows within the call: it creates no task
                for method in tasks.extension.methods():  # the SDK's extension bindings, on the low-level server
                    handler = self.typed_mcp_forwarding(method.handler)
                    self.add_request_handler(method.method, method.params_type, handler)
                self.extensions[tasks.extension.identifier] = tasks.extension.settings()

        def narrowed(selection: Narrowed) -> _Catalog:
            return _Catalog(package, self.PAGE_BYTES, forward_authorization_header, selection, discovery)

        # The catalog a hosted request sees, narrowed by its X-MCP-* headers (never widened).
        self.typed_mcp_narrowing = Narrowing(catalog, selection, catalog.by_name, narrowed)
        if viewed:
            from mcp.server.apps import EXTENSION_ID

            self.extensions[EXTENSION_ID] = {}
        self.middleware.append(self.typed_mcp_splice_tools)

    @functools.cached_property
    def typed_mcp_views(self) -> TableViews:
        """The table views of the served tools, loaded when a client first asks for one."""
        from .views import TableViews

        return TableViews(self.typed_mcp.info.name, dict(self.typed_mcp.info.views), self.typed_mcp_viewed)

    async def typed_mcp_list_tools(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        """tools/list: the page the cursor names (the first without one). Inside the splice below, the
        page's envelope only: the middleware puts the tools in."""
        cursor = params.cursor if params is not None else None
        if _SPLICING.get():
            return self.typed_mcp_for(ctx).envelope(cursor)
        return self.typed_mcp_for(ctx).page(cursor)

    async def typed_mcp_splice_tools(self, ctx: Any, call_next: Any) -> Any:
        """Middleware: a tools/list answer is the envelope the SDK shapes for the client's protocol
        version (cursor, result type, server stamp), with the page's tools put in as the JSON objects
        they already are. The SDK validates and re-dumps every result it shapes, which for megabytes
        of schemas costs a third of a second per page; the tools are what the SDK itself listed at
        generation time, and a test checks, for every protocol version, that this answer equals the
        SDK's own. Fails closed: when the SDK answers in a form this does not know, the request is
        answered the SDK's own way, with the whole page."""
        if ctx.method != "tools/list":
            return await call_next(ctx)
        token = _SPLICING.set(True)
        try:
            result = await call_next(ctx)
        finally:
            _SPLICING.reset(token)
        cursor = ctx.params.get("cursor") if isinstance(ctx.params, dict) else None
        if isinstance(result, dict) and result.get("tools") == []:
            return {**result, "tools": self.typed_mcp_for(ctx).tools_of(cursor)}
        return await call_next(ctx)

    def typed_mcp_forwarding(
        self, handler: Callable[[Any, Any], Awaitable[Any]]
    ) -> Callable[[Any, Any], Awaitable[Any]]:
        """`handler` with the request's Authorization forwarded upstream, as tools/call does."""

        async def forwarding(ctx: ServerRequestContext, params: Any) -> Any:
            with self.typed_mcp_forwarded_scope(ctx):
                return await handler(ctx, params)

        return forwarding

    @contextlib.contextmanager
    def typed_mcp_forwarded_scope(self, ctx: ServerRequestContext) -> Iterator[None]:
        """While the block runs, upstream requests carry the request's Authorization when the server
        forwards it (`credentials.py` reads it from the context variable)."""
        token = FORWARDED_AUTHORIZATION.set(self.typed_mcp_forwarded(ctx))
        try:
            yield
        finally:
            FORWARDED_AUTHORIZATION.reset(token)

    async def typed_mcp_call_tool(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult | dict[str, Any]:
        """tools/call: the tool's result; a failure (unknown tool, invalid arguments) is an `isError`
        result with the SDK's message, as `MCPServer` answers it. A tool of the package that the
        server's selection leaves out is an `isError` result saying how to enable it. In discovery
        mode only the discovery tools are served: `call_tool` calls the others. A tool the person
        confirms first answers with the question (2026-07-28 clients: `confirm.py`)."""
        with self.typed_mcp_forwarded_scope(ctx):
            try:
                return await self.typed_mcp_answer(ctx, params)
            except _Asking as asking:
                return asking.question

    async def typed_mcp_answer(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | dict[str, Any]:
        """tools/call's result (see `typed_mcp_call_tool`)."""
        catalog = self.typed_mcp_for(ctx)
        arguments = params.arguments or {}
        size = _json_bytes(params.name, arguments)
        oversized = _oversized(catalog.info, params.name, size)
        if oversized:
            return error_result(oversized)
        gate = self.typed_mcp_gate(ctx, params)
        if catalog.discovery is not None:
            return await self.typed_mcp_discover(ctx, catalog, params.name, arguments, gate)
        refused = catalog.refusal(params.name)
        if refused is not None:
            return refused
        result = await self.typed_mcp_call(params.name, arguments, size, gate=gate)
        tool = catalog.by_name.get(params.name)
        if self.typed_mcp_tasks is not None:  # a long-running operation: a task, or followed to its end
            followed = await self.typed_mcp_tasks.follow(ctx, tool, result)
            if not isinstance(followed, CallToolResult):
                return followed
            result = followed
        answer = self.typed_mcp_links.answer
        return await _off_loop(catalog.info, CUTTING, answer, tool, arguments, result, size=_text_bytes(result))

    async def typed_mcp_discover(
        self, ctx: ServerRequestContext, catalog: _Catalog, name: str, arguments: dict[str, Any], gate: Gate
    ) -> CallToolResult:
        """A call in discovery mode: one of the discovery tools, or the refusal of any other."""
        from . import discovery  # loaded with the mode (`_Catalog`)

        found = catalog.discovery
        assert found is not None
        if name == discovery.SEARCH_TOOLS:
            return await _off_loop(catalog.info, discovery.SEARCH_TOOLS, found.search_tools, arguments)
        if name == discovery.LIST_TOOLSETS:
            return found.list_toolsets(arguments)
        if name == discovery.DESCRIBE_TOOL:
            return found.describe_tool(arguments, catalog.refusal)
        if name == discovery.CALL_TOOL:

            async def called(tool: str, tool_arguments: dict[str, Any]) -> CallToolResult:
                result = await self.typed_mcp_call(tool, tool_arguments, gate=gate)
                if self.typed_mcp_tasks is None:
                    return result
                # A long-running operation is followed to its end within the call (never a task: the
                # result is the tool's answer, which `fields` may trim).
                followed = await self.typed_mcp_tasks.follow(ctx, catalog.by_name.get(tool), result, task=False)
                return cast(CallToolResult, followed)

            result = await found.call_tool(arguments, catalog.refusal, called, self.typed_mcp_select)
            links = self.typed_mcp_links
            size = _text_bytes(result)
            return await _off_loop(catalog.info, CUTTING, links.called, catalog.by_name, arguments, result, size=size)
        return catalog.refusal(name) or error_result(
            f"tool {name!r}: this server is in discovery mode: call it with {discovery.CALL_TOOL}"
        )

    async def typed_mcp_select(self, result: CallToolResult, fields: str | None) -> CallToolResult:
        """What discovery's `fields` (JMESPath) keeps of `result`, worked out in a worker thread within
        the call's timeout (`fields.py` bounds its steps and what it builds)."""
        if fields is None:
            return result
        from . import fields as selection  # only a call with `fields` loads it (and jmespath)

        size = _text_bytes(result)
        return await _off_loop(self.typed_mcp.info, SELECTING, selection.select, result, fields, size=size)

    async def typed_mcp_call(
        self, name: str, arguments: dict[str, Any], size: int | None = None, gate: Gate | None = None
    ) -> CallToolResult:
        """A tool's result exactly as tools/call answers it in full mode. Arguments its inputSchema
        refuses are an error result naming the fields; no request is sent. `size`: the bytes of JSON of
        the name and arguments, when known (a small check runs on the loop: `work.py`). `gate`: the
        person's confirmation, for a tool that needs it (without one, such a tool is refused)."""
        tool = self.typed_mcp.by_name.get(name)
        if tool is not None:
            what, check = f"checking the arguments of {name!r}", self.typed_mcp.arguments
            package = self.typed_mcp.info
            refused = await _off_loop(package, what, _refused, check, name, tool["inputSchema"], arguments, size=size)
            if refused is not None:
                return refused
        confirm = self.typed_mcp_confirm
        if tool is not None and confirm is not None and confirm.needs(name):
            # Without a gate (a link's read) nobody can be asked: such a call is never made.
            unasked = error_result(f"tool {name!r} is sent only when the person confirms it: call the tool itself")
            stopped = await gate(tool, arguments) if gate is not None else unasked
            if stopped is not None:
                return stopped
        try:
            # The SDK's MCPServer.call_tool is typed as returning Any: it answers a CallToolResult here.
            return cast(CallToolResult, await self.call_tool(name, arguments))
        except MCPError:
            raise
        except Exception as exc:
            logger.info("tool %r failed: %s", name, type(exc).__name__)
            return error_result(str(exc))

    async def typed_mcp_list_resources(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        """resources/list: the table view of every served list tool (one page: a few hundred bytes each)."""
        return ListResourcesResult(resources=[Resource.model_validate(r) for r in self.typed_mcp_views.resources()])

    async def typed_mcp_list_resource_templates(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        """resources/templates/list: a tool's whole schemas, when the schema budget shortened any."""
        templates = [schemas.resource_template(self.typed_mcp.info.name)] if self.typed_mcp.shortened else []
        return ListResourceTemplatesResult(resource_templates=templates)

    async def typed_mcp_read_resource(
        self, ctx: ServerRequestContext, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        """resources/read: a table view's HTML (`text/html;profile=mcp-app`), or a served tool's whole
        schemas (`schemas.py`), as the SDK derives them from its function."""
        address = str(params.uri)
        if self.typed_mcp_links.owns(address):  # a big answer's link: the call made again, whole
            with self.typed_mcp_forwarded_scope(ctx):
                refusal = self.typed_mcp_for(ctx).refusal
                return await self.typed_mcp_links.read(address, refusal, self.typed_mcp_call, self.typed_mcp_select)
        name = schemas.tool_named(self.typed_mcp.info.name, address)
        if name is not None and name in self.typed_mcp.by_name:
            self.typed_mcp.register(name)
            tool = next(tool for tool in await self.typed_mcp.sdk.list_tools() if tool.name == name)
            whole = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            return ReadResourceResult(contents=[schemas.contents(address, whole)])
        html = self.typed_mcp_views.html(address)
        if html is None:
            message = f"Unknown resource {params.uri}: not a table view or a tool's schemas of this server"
            raise MCPError(code=INVALID_PARAMS, message=message)
        from .views import APP_MIME_TYPE

        content = TextResourceContents(uri=params.uri, mime_type=APP_MIME_TYPE, text=html)
        return ReadResourceResult(contents=[content])

    def typed_mcp_gate(self, ctx: ServerRequestContext, params: CallToolRequestParams) -> Gate:
        """The person's confirmation of a call this request makes (`confirm.py`): None when given;
        the question escapes as `_Asking` (tools/call answers it); an error result when refused."""

        async def gate(tool: Mapping[str, Any], arguments: dict[str, Any]) -> CallToolResult | None:
            assert self.typed_mcp_confirm is not None
            asked = await self.typed_mcp_confirm.ask(ctx, params, tool, arguments)
            if isinstance(asked, InputRequiredResult):
                raise _Asking(asked)
            return asked

        return gate

    def typed_mcp_forwarded(self, ctx: ServerRequestContext) -> str | None:
        """The request's Authorization when the server forwards it (None on stdio: no HTTP request)."""
        headers = getattr(ctx.request, "headers", None)
        return headers.get("authorization") if headers is not None and self.typed_mcp.forward_authorization else None

    def typed_mcp_for(self, ctx: Any) -> _Catalog:
        """The catalog a request sees: the server's, narrowed by its X-MCP-* headers (`narrowing.py`)."""
        return self.typed_mcp_narrowing.catalog(getattr(getattr(ctx, "request", None), "headers", None))

    def typed_mcp_input_schema(self, name: str) -> dict[str, Any] | None:
        """What the SDK checks a call's `Mcp-Param-*` headers against: the inputSchema of a tool that
        declares such headers; None, "nothing to check", for the others (the SDK would otherwise walk
        the whole schema on every call to find no declaration)."""
        return self.typed_mcp.header_schema(name)

    async def list_tools(self) -> list[MCPTool]:
        """Every tool tools/list shows, as the SDK's `MCPServer.list_tools()` lists them."""
        return [MCPTool.model_validate(tool) for tool in self.typed_mcp.listed]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """`MCPServer.call_tool`, registering the tool first if this is its first call."""
        if name in self.typed_mcp.by_name:
            self.typed_mcp.register(name)
        return await self.typed_mcp.sdk.call_tool(name, arguments)


class _Catalog:
    """The tools of `catalog.json` that the selection keeps (`tools`), what tools/list shows
    (`listed`: those tools, or the discovery tools) cut into pages, and the `MCPServer` that calls them."""

    def __init__(
        self,
        package: Package,
        page_bytes: int,
        forward_authorization: bool,
        selection: Selection | Narrowed,
        discovery: bool,
    ) -> None:
        self.info = package
        tools, sizes, trimmed = unpack_catalog(json.loads(package.catalog.read_bytes()))
        self.package = {tool["name"]: tool for tool in tools}  # every tool of the package
        self.selection = selection
        if not selection.everything:
            chosen = selection.select(tools, package.toolsets)
            kept = [index for index, tool in enumerate(tools) if tool["name"] in chosen]
            tools, sizes = [tools[index] for index in kept], [sizes[index] for index in kept]
            if not tools:
                logger.warning("the selection (toolsets, tools, read-only) leaves no tools to serve")
        self.tools = tools
        self.by_name = {tool["name"]: tool for tool in tools}
        self.shortened = [name for name in trimmed if name in self.by_name]  # by the schema budget
        self.discovery: Discovery | None = None
        self.listed: list[dict[str, Any]] = tools
        if discovery:
            from . import discovery as mode  # discovery mode's tools and their search: only in that mode

            self.discovery = mode.Discovery(self.tools, package.search, _definition, package.toolsets)
            self.listed, sizes = mode.DISCOVERY_TOOLS, [len(json.dumps(tool)) for tool in mode.DISCOVERY_TOOLS]
        self.listed_by_name = {tool["name"]: tool for tool in self.listed}
        self.header_schemas: dict[str, dict[str, Any] | None] = {}  # per listed tool, on its first call
        self.pages = _pages(sizes, page_bytes)
        self.results: dict[int, ListToolsResult] = {}
        self.forward_authorization = forward_authorization
        self.sdk = MCPServer(name=package.name, version=package.version, instructions=package.instructions)
        self.arguments = ArgumentCheck()
        self.registered: set[str] = set()

    def header_schema(self, name: str) -> dict[str, Any] | None:
        """The inputSchema of the listed tool `name` if it declares `Mcp-Param-*` headers the SDK
        checks (decided by the SDK's own reading of the schema, once); else None."""
        if name in self.header_schemas:
            return self.header_schemas[name]
        tool = self.listed_by_name.get(name)
        if tool is None:
            return None  # not remembered: a client's unknown names must not grow the memo
        schema = tool["inputSchema"]
        declares = find_invalid_x_mcp_header(schema) is None and bool(x_mcp_header_map(schema))
        self.header_schemas[name] = schema if declares else None
        return self.header_schemas[name]

    def register(self, name: str) -> None:
        """The served tool `name` registered on the SDK's server, on its first use: this imports its
        module and the models it uses, no more."""
        if name not in self.registered:
            self.info.register_tool(self.sdk, _built(self.info.tool_entry(name)))
            self.registered.add(name)
            heap.settle()  # the tool's module, models and argument model live as long as the server

    def bounds(self, cursor: Any) -> tuple[int, int]:
        """The page a cursor names: (start, end) indexes of its tools."""
        if cursor is None:
            start = 0
        elif isinstance(cursor, str) and cursor.isdigit() and int(cursor) in self.pages:
            start = int(cursor)
        else:
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor: use the nextCursor of a tools/list result")
        return start, self.pages[start]

    def tools_of(self, cursor: Any) -> list[dict[str, Any]]:
        """The tools of a page, as tools/list shows them."""
        start, end = self.bounds(cursor)
        tools = self.listed[start:end]
        if self.listed and not tools:  # fail closed: never an empty page while there are tools
            raise MCPError(code=INTERNAL_ERROR, message="tools/list: empty page")
        return tools

    def envelope(self, cursor: Any) -> ListToolsResult:
        """The page's result without its tools. A page narrowed by a request's X-MCP-* headers is no
        other client's, and a client's cache is keyed by its credentials, not its headers: it is
        marked private and stale at once (asked again each time), never cached across clients."""
        start, end = self.bounds(cursor)
        following = str(end) if end < len(self.listed) else None
        if isinstance(self.selection, Narrowed):
            return ListToolsResult(tools=[], next_cursor=following, ttl_ms=0, cache_scope="private")
        return ListToolsResult(tools=[], next_cursor=following)

    def page(self, cursor: Any) -> ListToolsResult:
        """The page's whole result, validated by the SDK's model."""
        start, _ = self.bounds(cursor)
        result = self.results.get(start)
        if result is None:
            result = self.envelope(cursor)
            result.tools = [MCPTool.model_validate(tool) for tool in self.tools_of(cursor)]
            self.results[start] = result
        return result

    def refusal(self, name: str) -> CallToolResult | None:
        """The error result for a tool of the package that the selection leaves out; None otherwise."""
        if name in self.package and name not in self.by_name:
            return error_result(self.selection.not_enabled(name, self.package[name], self.info.toolsets))
        return None


# tools/call's handler as the SDK's constructor types it: a task (the tasks extension's result shape,
# `tasks.py`) is a dict, which the SDK's runner serializes as it does any handler's result, though the
# constructor's type names the core shapes only.
_CallTool = Callable[[ServerRequestContext, CallToolRequestParams], Awaitable[CallToolResult | InputRequiredResult]]
# The person's confirmation of a call of a tool (its definition) with arguments: None when given.
Gate = Callable[[Mapping[str, Any], dict[str, Any]], Awaitable[CallToolResult | None]]


class _Asking(Exception):  # noqa: N818 (not an error: the question travels up to tools/call)
    """The question a 2026-07-28 client answers before the call is made (`Server.typed_mcp_gate`)."""

    def __init__(self, question: InputRequiredResult) -> None:
        super().__init__("the person's confirmation is asked")
        self.question = question


def _definition(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's definition exactly as tools/list publishes it."""
    return MCPTool.model_validate(tool).model_dump(mode="json", by_alias=True, exclude_none=True)


def _json_bytes(name: str, arguments: dict[str, Any]) -> int:
    """The UTF-8 bytes of JSON of a call's name and arguments."""
    return len(json.dumps([name, arguments], ensure_ascii=False, separators=(",", ":")).encode())


def _oversized(package: Package, name: str, size: int) -> str | None:
    """The error for a call whose name and arguments hold more JSON (`size` bytes) than
    `…_MAX_ARGUMENT_BYTES`, said before anything checks, searches or sends them; None for one within it."""
    try:
        limit = package.api.max_argument_bytes
    except ValueError as exc:  # a setting changed since the start to one the runtime cannot use
        return str(exc)
    if size <= limit:
        return None
    return (
        f"tool {name[:100]!r}: the call's name and arguments are {size} bytes of JSON, over the limit of "
        f"{limit} bytes ({package.env_prefix}_MAX_ARGUMENT_BYTES)"
    )


def _when_traced(middleware: ServerMiddleware[Any]) -> ServerMiddleware[Any]:
    """`middleware`, skipped while no OpenTelemetry tracer provider is installed (checked on every
    message, so that one installed after the server was built is used from then on)."""

    async def when_traced(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if isinstance(get_tracer_provider(), (ProxyTracerProvider, NoOpTracerProvider)):
            return await call_next(ctx)
        return await middleware(ctx, call_next)

    return when_traced


def _refused(check: ArgumentCheck, name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> Any:
    """The error result for arguments the tool's inputSchema refuses; None when it accepts them."""
    refused = check.refusal(name, schema, arguments)
    return error_result(refused) if refused else None


async def _off_loop(
    package: Package, what: str, function: Callable[..., _T], *args: Any, size: int | None = None
) -> _T | CallToolResult:
    """`function(*args)` in a worker thread within the call's timeout, or on the loop for a `size`
    small enough (`work.py`); past the timeout, an error result naming `what`."""
    try:
        seconds = package.api.timeout
    except ValueError as exc:  # the setting changed since the start to one the runtime cannot use
        return error_result(str(exc))
    try:
        return await off_loop(what, seconds, function, *args, size=size)
    except Overtime as exc:
        return error_result(str(exc))


def _text_bytes(result: CallToolResult) -> int:
    """About the bytes of JSON a result holds (its text blocks carry its structuredContent as JSON):
    what decides whether measuring it against its inline budget may run on the event loop."""
    return sum(len(block.text) for block in result.content if isinstance(block, TextContent))


CUTTING = "cutting a big answer to its inline budget"  # what `_off_loop` names when it takes too long
SELECTING = "selecting `fields` of the answer"
# Set while the splice middleware handles a tools/list request (see `Server.typed_mcp_splice_tools`).
_SPLICING = contextvars.ContextVar("typed_mcp_splicing", default=False)


def _pages(sizes: list[int], budget: int) -> dict[int, int]:
    """Page start -> end index, each page holding as many tools as fit in `budget` bytes (at least one)."""
    pages: dict[int, int] = {}
    start, used = 0, 0
    for index, size in enumerate(sizes):
        if index > start and used + size > budget:
            pages[start] = index
            start, used = index, 0
        used += size
    pages[start] = len(sizes)
    return pages


def _built(entry: ToolEntry) -> ToolEntry:
    """`entry`, its answer's models built (those of a big recursive group are built on first use):
    the SDK's adapter and the runtime's then share one validator instead of building one each. (The
    catalog worker registers entries as they are: it needs their schemas, not their validators.)"""
    build_models(entry.fn.__annotations__.get("return"))
    return entry


def build_server(
    package: Package,
    *,
    forward_authorization_header: bool = False,
    eager: bool = False,
    selection: Selection | None = None,
    discovery: bool = False,
) -> Server | MCPServer:
    """The server. `eager=True` is an `MCPServer` with every tool registered up front, the SDK's own
    way: the reference the catalog is checked against; without a catalog, the server is always eager.
    `selection` (toolsets, tools, read-only) and `discovery` need the catalog; an unknown toolset or
    tool name raises `SelectionError` (one line, listing the valid names)."""
    if not eager and package.catalog.is_file():
        return Server(
            package, forward_authorization_header=forward_authorization_header, selection=selection, discovery=discovery
        )
    if forward_authorization_header:  # fail closed: never send configured credentials instead
        raise ValueError("--forward-authorization needs the package's catalog.json (regenerate the package)")
    if discovery or not (selection or Selection()).everything:
        raise ValueError("--toolsets, --tools, --read-only and --discovery need the package's catalog.json")
    from mcp.server.apps import Apps  # the SDK's own MCP Apps extension serves the eager server's table views

    apps = Apps()
    if package.views:
        tables = package.tables
        for uri in tables.by_uri:
            apps.add_html_resource(uri, tables.html(uri) or "", name=tables.by_uri[uri] + " table")
    server = MCPServer(
        name=package.name,
        **package.server_info,
        extensions=[apps] if package.views else [],
    )
    for entry in package.tool_entries():
        package.register_tool(server, _built(entry))
    server.custom_route("/health", methods=["GET"], include_in_schema=False)(package.health)
    return server


def hosted_server(package: Package, auth: str, selection: Selection, discovery: bool) -> Server | MCPServer:
    """The server for the auth mode `auth` (`options.AUTH_MODES`) and the selection; in forwarded mode
    the upstream gets each client's Authorization and never the environment's credentials."""
    package.api.forward_authorization = auth == "forwarded"
    forward = package.api.forward_authorization
    return build_server(package, forward_authorization_header=forward, selection=selection, discovery=discovery)


def serve_stdio(server: Server | MCPServer) -> None:
    """Serve MCP over stdio until stdin closes."""
    if isinstance(server, MCPServer):
        server.run("stdio")
    else:
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: Server) -> None:
    lines = CheckedLines()  # a line the SDK cannot read gets an error answer, not silence
    # `CheckedLines` is read as the SDK reads stdin (an async iterator of lines), not an `AsyncFile`.
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer = write_stream
        await server.run(read_stream, write_stream, server.create_initialization_options())
