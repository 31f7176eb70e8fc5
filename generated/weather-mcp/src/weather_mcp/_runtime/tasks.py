"""Long-running operations: a tool the config marks `long_running` whose API answers 202 Accepted with
a status resource (`Operation-Location`, else `Location`) is followed to the operation's end.

- A 2026-07-28 client that declares the tasks extension (`io.modelcontextprotocol/tasks`) gets a
  task at once (`resultType: "task"`, `taskId`, `status: "working"`, `pollIntervalMs`). `tasks/get`
  polls the status resource once (GET, with the credentials the call went with) and answers the
  task's status; when the operation has finished, the task holds the final result: the status
  resource's answer checked against the tool's outputSchema, or an `isError` result naming what
  failed. `tasks/cancel` sends the operation's cancel request, found by one rule in the spec's
  operations: `POST <status path>/cancel` where the spec has it, else `DELETE <status path>`; an
  operation with neither says it cannot be cancelled.
- Any other client: the call polls within itself, honouring Retry-After, with a progress
  notification per poll when the client sent a progressToken, for at most `<PREFIX>_LONG_RUNNING_SECONDS`
  (120 by default); past that, an `isError` result naming the status resource and how to poll it.

The operation is finished when its status resource answers other than 202 and its `status` (or
`state`) field, if any, is not a word of work in progress (`running`, `pending`, ...): `failed` and
the like make the task fail, `cancelled` cancels it, anything else completes it.

No task is stored: the taskId is the task itself (the status resource's URL, the tool, the
credentials' schemes, the principal, the creation time and an expiry) sealed by the SDK's AES-GCM
codec under a key derived from `<PREFIX>_LINK_KEY` (the key of the resource links, `links.py`), so
any replica holding the same key serves `tasks/get` and `tasks/cancel`, and the client can neither
read nor alter it. A taskId sealed for another principal, altered, forged or expired is refused.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import httpx2
from mcp.server import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, RequestHandler
from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState, authenticated_principal
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent
from mcp_types import CancelTaskRequestParams, GetTaskRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .arguments import LinearValidator
from .config import FORWARDED_AUTHORIZATION
from .contracts import OPERATION, PREFIX, SOURCE
from .http import Api
from .results import error_result, provenance

EXTENSION = "io.modelcontextprotocol/tasks"
KEY_CONTEXT = "typed-mcp/tasks:"  # a distinct secret: a taskId is never a link or a confirmation state
TASK_SECONDS = 24 * 3600  # how long a taskId is honoured
POLL_SECONDS = 1.0  # between polls when the API sends no Retry-After
LONG_RUNNING = PREFIX + "long-running"  # in a result: the status resource, and how to poll it
WORKING = {"running", "pending", "queued", "inprogress", "notstarted", "accepted", "working", "processing", "started"}
FAILED = {"failed", "failure", "error", "errored"}
CANCELLED = {"cancelled", "canceled"}


class Tasks(Extension):
    """The tasks extension's methods (`tasks/get`, `tasks/cancel`), declared with the SDK's extension
    types; the low-level server registers them (`server.py`)."""

    identifier = EXTENSION

    def __init__(self, get: RequestHandler, cancel: RequestHandler) -> None:
        self.get, self.cancel = get, cancel

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding(method="tasks/get", params_type=GetTaskRequestParams, handler=self.get),
            MethodBinding(method="tasks/cancel", params_type=CancelTaskRequestParams, handler=self.cancel),
        )


class LongRunning:
    """The long-running tools of `package` (`tools`), and their tasks."""

    def __init__(
        self,
        package: str,
        env_prefix: str,
        tools: frozenset[str],
        secret: str,
        api: Api,
        operations: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self.package = package
        self.env_prefix = env_prefix
        self.tools = tools
        self.api = api
        self.operations = operations  # every tool of the package, by name (its operation in `_meta`)
        self.codec = AESGCMRequestStateCodec([KEY_CONTEXT + secret])
        self.extension = Tasks(self.get, self.cancel)

    async def follow(
        self, ctx: ServerRequestContext, tool: Mapping[str, Any] | None, result: CallToolResult, *, task: bool = True
    ) -> CallToolResult | dict[str, Any]:
        """A call's result, followed when the tool is long-running and the API accepted it (202): a
        task for a client of the extension (unless `task` is false: discovery's call_tool, whose result
        is the tool's answer), else the operation's end polled within the call."""
        status = (result.meta or {}).get(SOURCE) or {}
        if tool is None or tool["name"] not in self.tools or result.is_error or "location" not in status:
            return result
        wait = float(status.get("retry_after", POLL_SECONDS))
        try:
            self._relative(status["location"])
        except MCPError as exc:  # never polled: the answer as it came, and why it is not followed
            return _failure(f"{tool['name']}: accepted by the API, not followed: {exc.error.message}", status)
        if task and _declares_tasks(ctx):
            return self._created(ctx, tool["name"], status["location"], status.get("security", []), wait)
        return await self._within(ctx, tool, status["location"], status.get("security", []), wait)

    def _created(
        self, ctx: ServerRequestContext, name: str, location: str, security: list[list[str]], wait: float
    ) -> dict[str, Any]:
        now = time.time()
        task = {
            "p": self.package,
            "t": name,
            "u": location,
            "s": security,
            "w": _principal(ctx),
            "c": int(now),
            "e": int(now) + TASK_SECONDS,
        }
        token = self.codec.seal(json.dumps(task, separators=(",", ":"), sort_keys=True).encode())
        message = f"{name}: accepted by the API; poll tasks/get (status resource {location})"
        return {"resultType": "task", **_task(token, task, "working", message, wait)}

    async def _within(
        self, ctx: ServerRequestContext, tool: Mapping[str, Any], location: str, security: list[list[str]], wait: float
    ) -> CallToolResult:
        seconds = self.api.long_running_seconds
        deadline = anyio.current_time() + seconds
        polls = 0
        while anyio.current_time() + wait <= deadline:
            await anyio.sleep(wait)
            state, final, wait = await self._poll(tool, location, security)
            polls += 1
            await ctx.session.report_progress(polls, None, f"{tool['name']}: {state} after {polls} status polls")
            if final is not None:
                return final
        text = (
            f"{tool['name']}: the API accepted the operation, and it is still running after {seconds:g} s "
            f"({self.env_prefix}_LONG_RUNNING_SECONDS). Continue here: GET {location} (its status resource), "
            f"waiting as its Retry-After says{self._reader(location)}, until its status is no longer running."
        )
        meta = {LONG_RUNNING: {"location": location, "polls": polls}}
        return error_result(text, meta)

    async def _poll(
        self, tool: Mapping[str, Any], location: str, security: list[list[str]]
    ) -> tuple[str, CallToolResult | None, float]:
        """One GET of the status resource: the task's status, the final result once it has one, and
        how long to wait before the next poll."""
        path, query = self._relative(location)
        alternatives = tuple(tuple(alternative) for alternative in security)
        polled = await self.api.call("GET", path, query=query, security=alternatives, accept="application/json")
        source = (polled.meta or {}).get(SOURCE) or {}
        wait = float(source.get("retry_after", POLL_SECONDS))
        name = tool["name"]
        if polled.is_error:
            return "failed", _failure(f"{name}: polling its status resource failed: {_text(polled)}", source), wait
        value = polled.structured_content
        word = _status_word(value)
        if source.get("status") == 202 or word in WORKING:
            return "working", None, wait
        if word in FAILED:
            return "failed", _failure(f"{name}: the operation failed: {json.dumps(value)[:2000]}", source), wait
        if word in CANCELLED:
            return "cancelled", _failure(f"{name}: the operation was cancelled", source), wait
        schema = tool.get("outputSchema")
        if schema is not None and not LinearValidator(schema).is_valid(value):
            text = (
                f"{name}: the operation's final answer does not match the tool's outputSchema: {_text(polled)[:2000]}"
            )
            return "failed", _failure(text, source), wait
        return "completed", polled, wait

    def _relative(self, location: str) -> tuple[str, dict[str, str]]:
        """The status resource's path below the base URL, and its query; an MCPError for one elsewhere
        (the server's credentials go to the configured API only)."""
        base = httpx2.URL(self.api.effective_base_url or "")
        url = httpx2.URL(location)
        root = base.path.rstrip("/")
        if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port) or not url.path.startswith(
            root + "/"
        ):
            raise MCPError(code=INVALID_PARAMS, message=f"the status resource {location[:200]} is outside the API")
        return url.path[len(root) :], dict(url.params)

    def _spec(self) -> list[tuple[str, str, str]]:
        """Every tool of the package with its operation's method and path template."""
        operations = [
            (name, str((tool.get("_meta") or {}).get(OPERATION, ""))) for name, tool in self.operations.items()
        ]
        return [(name, *operation.partition(" ")[::2]) for name, operation in operations]

    def _reader(self, location: str) -> str:
        """`, or call the tool X with ...` for the tool of the package that reads the status resource."""
        path, _ = self._relative(location)
        for name, method, template in self._spec():
            found = _match(template, path) if method == "GET" else None
            if found is not None:
                return f", or call the tool {name} with {json.dumps(found)}"
        return ""

    def _canceller(self, path: str) -> tuple[str, str] | None:
        """The operation's cancel request (method, path): `POST <status path>/cancel` where the spec
        has it, else `DELETE <status path>`; None when the spec has neither."""
        found: dict[str, tuple[str, str]] = {}
        for _, method, template in self._spec():
            if method == "POST" and template.endswith("/cancel") and _match(template, path + "/cancel") is not None:
                found.setdefault("POST", ("POST", path + "/cancel"))
            elif method == "DELETE" and _match(template, path) is not None:
                found.setdefault("DELETE", ("DELETE", path))
        return found.get("POST") or found.get("DELETE")

    def _unsealed(self, ctx: ServerRequestContext, task_id: str) -> dict[str, Any]:
        try:
            task = json.loads(self.codec.unseal(task_id))
        except (InvalidRequestState, ValueError):
            raise MCPError(
                code=INVALID_PARAMS,
                message=(
                    "not a task of this server (altered, forged, or sealed with another key: every replica "
                    f"needs the same {self.env_prefix}_LINK_KEY)"
                ),
            ) from None
        if not isinstance(task, dict) or task.get("p") != self.package or task.get("t") not in self.tools:
            raise MCPError(code=INVALID_PARAMS, message="a task of another server")
        if task.get("w") != _principal(ctx):
            raise MCPError(code=INVALID_PARAMS, message="a task of another principal")
        if not isinstance(task.get("e"), int) or task["e"] < time.time():
            raise MCPError(code=INVALID_PARAMS, message="the task has expired: call the tool again")
        return task

    async def get(self, ctx: ServerRequestContext, params: GetTaskRequestParams) -> dict[str, Any]:
        """tasks/get: one poll of the status resource, and the task as it stands."""
        task = self._unsealed(ctx, params.task_id)
        tool = self.operations[task["t"]]
        state, final, wait = await self._poll(tool, task["u"], task["s"])
        answer = _task(params.task_id, task, state, f"{task['t']}: {state}", wait)
        if final is not None:
            answer["result"] = final.model_dump(by_alias=True, mode="json", exclude_none=True)
        return answer

    async def cancel(self, ctx: ServerRequestContext, params: CancelTaskRequestParams) -> dict[str, Any]:
        """tasks/cancel: the operation's cancel request sent upstream (see `_canceller`)."""
        task = self._unsealed(ctx, params.task_id)
        path, _ = self._relative(task["u"])
        canceller = self._canceller(path)
        if canceller is None:
            message = (
                f"{task['t']}: the API has no cancel operation for {path} (neither POST {path}/cancel nor "
                f"DELETE {path} in its spec): this task cannot be cancelled"
            )
            raise MCPError(code=INVALID_PARAMS, message=message)
        method, target = canceller
        security = tuple(tuple(alternative) for alternative in task["s"])
        sent = await self.api.call(method, target, security=security, accept="application/json")
        if sent.is_error:
            raise MCPError(code=INVALID_PARAMS, message=f"{task['t']}: cancelling failed: {_text(sent)[:2000]}")
        return _task(params.task_id, task, "cancelled", f"{task['t']}: cancelled ({method} {target})", POLL_SECONDS)


def _declares_tasks(ctx: ServerRequestContext) -> bool:
    """The request's client declares the tasks extension, on a protocol version that has extensions."""
    capabilities = ctx.session.client_capabilities
    declared = (capabilities.extensions if capabilities is not None else None) or {}
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and EXTENSION in declared


def _principal(ctx: ServerRequestContext) -> str | None:
    """Who the task is for: the OAuth principal, else (forwarded mode) a digest of the client's
    Authorization, else nobody in particular (stdio, or the server's own credentials)."""
    principal = authenticated_principal(ctx)
    if principal is not None:
        return principal
    forwarded = FORWARDED_AUTHORIZATION.get()
    return "authorization:" + hashlib.sha256(forwarded.encode()).hexdigest() if forwarded else None


def _task(task_id: str, task: Mapping[str, Any], status: str, message: str, wait: float) -> dict[str, Any]:
    """The task's fields as the extension's `Task` gives them."""
    return {
        "taskId": task_id,
        "status": status,
        "statusMessage": message,
        "createdAt": _iso(task["c"]),
        "lastUpdatedAt": _iso(time.time()),
        "ttlMs": TASK_SECONDS * 1000,
        "pollIntervalMs": int(wait * 1000),
    }


def _iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(int(seconds), datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def _status_word(value: Any) -> str | None:
    """The answer's `status` (or `state`) in lower case without separators, when it has one."""
    if not isinstance(value, dict):
        return None
    word = value.get("status", value.get("state"))
    return re.sub(r"[\s_-]", "", word).lower() if isinstance(word, str) else None


def _match(template: str, path: str) -> dict[str, str] | None:
    """The path parameters of `path` when it is an instance of the spec's path `template`."""
    names = re.findall(r"\{([^{}]+)\}", template)
    pattern = "".join(
        "([^/]+)" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^{}]+\})", template)
    )
    found = re.fullmatch(pattern, path) if template else None
    return dict(zip(names, found.groups(), strict=True)) if found is not None else None


def _failure(text: str, source: Mapping[str, Any]) -> CallToolResult:
    return error_result(text, provenance(dict(source)))


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))
