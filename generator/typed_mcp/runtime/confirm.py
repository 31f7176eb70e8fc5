"""Confirmation before destructive calls: a tool the config marks (`[confirm] destructive = true`, or
`[operations.X] confirm = true`) asks the person through the client's elicitation before its request
goes upstream, and nothing is sent unless the person accepts.

- A 2026-07-28 client (multi round-trip requests) gets an `InputRequiredResult`: the question as an
  elicitation input request, and a `requestState` that the SDK's `RequestStateBoundary` seals with
  its AES-GCM codec, bound to the tool, its exact arguments, this server and an expiry. The client
  retries the call with the person's answer and that state; a state this server did not seal, one
  sealed for another tool or other arguments, or an expired one is refused before the tool runs,
  and one already used to send a call is refused by this process (each state carries a one-time
  number).
- An older client that declares elicitation is asked with `elicitation/create` within the call.
- A client with neither gets an `isError` result naming the setting; so does a declined or cancelled
  question. No request is sent in any of these cases.

The state is sealed with a key derived from `<PREFIX>_LINK_KEY` (the key of the resource links), so
any replica that holds the same key verifies it; without the variable, a key of this process only.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.request_state import AESGCMRequestStateCodec, RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import is_version_at_least

from .contracts import OPERATION
from .results import error_result

logger = logging.getLogger(__name__)

CONFIRM_SECONDS = 600  # how long the person has to answer before the question must be asked again
QUESTION = "confirm"  # the key of the input request and of the answer's only field
ROUND_TRIP_VERSION = "2026-07-28"  # the first protocol whose tools/call asks through InputRequiredResult
# A distinct secret for the confirmation states: a link's token is never a confirmation, nor the reverse.
KEY_CONTEXT = "typed-mcp/confirm:"
REMEMBERED = 10_000  # one-time numbers kept (each until its state expires) to refuse a replayed state
SETTING = "[confirm] destructive = true (or confirm = true for the operation) in the package's typed-mcp.toml"
SCHEMA = {
    "type": "object",
    "properties": {
        QUESTION: {
            "type": "boolean",
            "title": "Send this request",
            "description": "true sends the request to the API; anything else sends nothing",
        }
    },
    "required": [QUESTION],
}


class Confirmation:
    """The tools of `package` whose calls the person confirms (`tools`), and how each is asked."""

    def __init__(self, package: str, env_prefix: str, tools: frozenset[str], secret: str) -> None:
        self.package = package
        self.env_prefix = env_prefix
        self.tools = tools
        codec = AESGCMRequestStateCodec([KEY_CONTEXT + secret])
        security = RequestStateSecurity(codec=codec, ttl=CONFIRM_SECONDS, audience=f"{package}/confirm")
        # The SDK's middleware: seals the state of every InputRequiredResult, and verifies (and
        # unseals) the state of every retried tools/call before the handler sees it.
        self.boundary = RequestStateBoundary(security, default_audience=None)
        self.used: OrderedDict[str, float] = OrderedDict()  # one-time number -> when its state expires
        self.warned = bool(os.environ.get(f"{env_prefix}_LINK_KEY"))

    def needs(self, name: str) -> bool:
        return name in self.tools

    async def ask(
        self, ctx: ServerRequestContext, params: CallToolRequestParams, tool: Mapping[str, Any], arguments: Any
    ) -> CallToolResult | InputRequiredResult | None:
        """None when the person confirmed the call of `tool` with `arguments`; else what the client
        gets instead: the question (2026-07-28), or an error result saying why nothing was sent."""
        name = tool["name"]
        if ctx.protocol_version and is_version_at_least(ctx.protocol_version, ROUND_TRIP_VERSION):
            if params.request_state is not None:  # verified by the boundary: sealed here, for this call
                return self._answered(name, params.request_state, (params.input_responses or {}).get(QUESTION))
            refused = self._unaskable(ctx, name)
            if refused is not None:
                return refused
            self._warn()
            number, expires = secrets.token_urlsafe(16), time.time() + CONFIRM_SECONDS
            state = json.dumps({"k": QUESTION, "n": number, "e": expires}, separators=(",", ":"))
            request = ElicitRequest(
                params=ElicitRequestFormParams(message=_question(tool, arguments), requested_schema=SCHEMA)
            )
            return InputRequiredResult(input_requests={QUESTION: request}, request_state=state)
        if not ctx.session.can_send_request:
            return error_result(
                f"tool {name!r} needs the person's confirmation ({SETTING}), and this connection cannot carry "
                "the question (a stateless HTTP server and a client older than 2026-07-28): nothing was sent"
            )
        refused = self._unaskable(ctx, name)
        if refused is not None:
            return refused
        try:
            answer = await ctx.session.elicit_form(
                _question(tool, arguments), SCHEMA, related_request_id=ctx.request_id
            )
        except MCPError as exc:
            return error_result(f"tool {name!r}: asking the person failed ({exc}): nothing was sent to the API")
        return _outcome(name, answer)

    def _answered(self, name: str, state: str, answer: Any) -> CallToolResult | None:
        try:
            found = json.loads(state)
            number, expires = found["n"], float(found["e"])
            if found["k"] != QUESTION or not isinstance(number, str):
                raise ValueError(state)
        except (ValueError, KeyError, TypeError):
            return error_result(
                f"tool {name!r}: the requestState is not a confirmation of this server: nothing was sent"
            )
        if not isinstance(answer, ElicitResult):
            return error_result(f"tool {name!r}: the retried call carries no answer to {QUESTION!r}: nothing was sent")
        refused = _outcome(name, answer)
        if refused is not None:
            return refused
        now = time.time()
        while self.used and (next(iter(self.used.values())) < now or len(self.used) > REMEMBERED):
            self.used.popitem(last=False)
        if number in self.used:
            return error_result(
                f"tool {name!r}: this confirmation was already used to send the call once: call the tool again "
                "to be asked again; nothing was sent"
            )
        self.used[number] = expires
        return None

    def _unaskable(self, ctx: ServerRequestContext, name: str) -> CallToolResult | None:
        """The error result when the client declares no form elicitation (a bare `elicitation: {}`
        is form, as before modes existed); None when it can be asked."""
        elicitation = ctx.session.client_capabilities.elicitation if ctx.session.client_capabilities else None
        if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
            return None
        return error_result(
            f"tool {name!r} needs the person's confirmation before its request is sent ({SETTING}), and this "
            "client cannot ask: it declares no elicitation capability. Nothing was sent to the API; use a "
            "client that supports elicitation, or generate the package without the setting"
        )

    def _warn(self) -> None:
        if not self.warned:
            self.warned = True
            logger.warning(
                "%s_LINK_KEY is not set: confirmations are sealed with a key of this process only (a retried "
                "call that reaches another replica is refused)",
                self.env_prefix,
            )


def _question(tool: Mapping[str, Any], arguments: Any) -> str:
    """What the person reads: the tool, its HTTP operation and the exact arguments."""
    operation = (tool.get("_meta") or {}).get(OPERATION, "")
    said = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    if len(said) > 2000:
        said = said[:2000] + "…"
    where = f" ({operation})" if operation else ""
    return f"Send {tool['name']}{where} with {said} to the API? Nothing is sent unless you confirm."


def _outcome(name: str, answer: ElicitResult) -> CallToolResult | None:
    """None when the person accepted and said yes; the error result of anything else."""
    if answer.action == "accept" and (answer.content or {}).get(QUESTION) is True:
        return None
    said = {"accept": "answered no", "decline": "declined", "cancel": "cancelled"}[answer.action]
    return error_result(f"tool {name!r}: the person {said} the call: nothing was sent to the API")
