"""Deadlines uvicorn's HTTP/1.1 server does not have: a client that sends its request headers one byte
a second (or a body it announced, or nothing at all after connecting) held its connection forever,
since uvicorn's only timer is the keep-alive of an idle connection, which the first byte of the next
request cancels. Enough such clients use up the process's file descriptors and no one else connects.

`DeadlineProtocol` is uvicorn's own h11 protocol, given with `uvicorn.Config(http=...)` (or `uvicorn
--http <module>._runtime.deadlines:DeadlineProtocol`): a request's headers must be complete within
`header_seconds` of its first byte (of the connection's start, for the first request), and its body
within `body_seconds` of its headers; past either, the client gets `408 Request Timeout` (when no
answer has begun) and the connection is closed. Between requests the keep-alive timeout applies as
before, and an answer that streams for long (an SSE stream) has no deadline here: the request is in."""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .options import BODY_SECONDS, HEADER_SECONDS

logger = logging.getLogger(__name__)
_TIMEOUT_BODY = b"the request came in too slowly\n"
_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_BODY), _TIMEOUT_BODY)
)


class DeadlineProtocol(H11Protocol):
    header_seconds = HEADER_SECONDS
    body_seconds = BODY_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: str | None = None
        super().connection_made(transport)
        self._watch(request_begun=True)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch(request_begun=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch(request_begun=False)  # idle until the next byte: the keep-alive timeout's time

    def connection_lost(self, exc: Exception | None) -> None:
        self._set(None)
        super().connection_lost(exc)

    def _watch(self, *, request_begun: bool) -> None:
        """The deadline of the phase the request is in (h11's view of the client): set when the phase
        begins, so that trickling bytes never moves it."""
        state = self.conn.their_state
        if state is h11.IDLE:
            self._set("headers" if request_begun else None)
        elif state is h11.SEND_BODY:
            self._set("body")
        else:  # the whole request is in (or the connection is done): the answer takes its time
            self._set(None)

    def _set(self, phase: str | None) -> None:
        if phase == self._phase:
            return
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = phase
        if phase is not None:
            seconds = self.header_seconds if phase == "headers" else self.body_seconds
            self._deadline = self.loop.call_later(seconds, self._expired, phase)

    def _expired(self, phase: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # no answer has begun
            self.transport.write(_TIMEOUT)
        logger.info("closed a connection whose request %s did not arrive in time", phase)
        self.transport.close()


def with_deadlines(header_seconds: float, body_seconds: float) -> type[DeadlineProtocol]:
    """The protocol class with these deadlines."""
    deadlines = {"header_seconds": header_seconds, "body_seconds": body_seconds}
    return type("DeadlineProtocol", (DeadlineProtocol,), deadlines)
