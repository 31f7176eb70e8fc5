"""stdin for the SDK's stdio transport, with every line the SDK cannot read answered instead of
dropped. The SDK's stdio transport drops such a line without a word (a message nested deeper than
its JSON parser allows, about 200 levels; one that is not JSON-RPC), so the client waits for its
own timeout. Here the line gets the JSON-RPC error it deserves: -32700 for what does not parse,
-32600 for a request of the wrong shape, with its id when the line has one."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

MAX_REASON_CHARS = 200


class CheckedLines:
    """An async iterable of stdin's lines for `stdio_server(stdin=...)`; set `answer` to the
    transport's write stream as soon as it exists."""

    def __init__(self, stdin: Any = None) -> None:
        self._stdin = stdin or anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        self._ready = anyio.Event()
        self._answer: Any = None

    @property
    def answer(self) -> Any:
        return self._answer

    @answer.setter
    def answer(self, stream: Any) -> None:
        self._answer = stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._stdin:
            if not line.strip():
                continue
            try:
                jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError as exc:
                await self._refuse(line, exc)
                continue
            yield line

    async def _refuse(self, line: str, exc: ValidationError) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            message = None
        if isinstance(message, dict) and "id" not in message:
            return  # a notification: JSON-RPC never answers one
        request_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            request_id = None
        parse = any(error["type"] == "json_invalid" for error in exc.errors(include_url=False))
        reason = exc.errors(include_url=False)[0]["msg"][:MAX_REASON_CHARS]
        error = ErrorData(
            code=PARSE_ERROR if parse else INVALID_REQUEST,
            message=f"the server cannot read this message: {reason}",
        )
        await self._ready.wait()
        await self._answer.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
