"""The hosted server's HTTP/1.1 protocol: uvicorn's httptools one (its parser is llhttp, compiled; h11's,
pure Python, was a tenth of a served call's CPU) with the limits uvicorn does not give it.

Deadlines: a client that sends its request head one byte a second (or a body it announced, or
nothing at all after connecting) held its connection forever, since uvicorn's only timer is the
keep-alive of an idle connection, which the first byte of the next request cancels; enough such
clients use up the process's file descriptors and no one else connects. Here a request's head must be
complete within `header_seconds` of its first byte (of the connection's start, for the first request),
and its body within `body_seconds` of its head; past either, the client gets `408 Request Timeout`
(when no answer to it has begun) and the connection is closed. Between requests the keep-alive
timeout applies as before, and an answer that streams for long (an SSE stream) has no deadline here:
the request is in. And an answer may stand still for at most `write_seconds`: a client that asks
for a large answer and reads none of it held the connection, the request's task and the whole
answer (uvicorn hands it to the socket's buffer at once) for ever; one that stops reading longer
than that loses the connection, and the server what it held.

A head's size: llhttp has no limit of its own (h11's was 16 KiB), and uvicorn keeps every header
line it is given, so a client could send an endless head within its deadline and take the memory it
likes. A head still incomplete after MAX_HEAD_BYTES is answered 431 and the connection closed.

`DeadlineProtocol` is given with `uvicorn.Config(http=...)` (or `uvicorn --http
<module>._runtime.deadlines:DeadlineProtocol`; gunicorn's `DeadlineWorker` serves with it)."""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .options import BODY_SECONDS, HEADER_SECONDS, WRITE_SECONDS

logger = logging.getLogger(__name__)
MAX_HEAD_BYTES = 64 * 1024  # the request line and headers: four times h11's limit


def _answer(status: bytes, text: bytes) -> bytes:
    head = b"HTTP/1.1 %s\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n" % status
    return head + b"content-length: %d\r\n\r\n%s" % (len(text), text)


_TIMEOUT = _answer(b"408 Request Timeout", b"the request came in too slowly\n")
_TOO_LARGE = _answer(b"431 Request Header Fields Too Large", b"the request's head is too large\n")


class Balance(Protocol):
    """What a worker of several knows of their open connections (`workers.Share`)."""

    def opened(self) -> None: ...

    def closed(self) -> None: ...

    def over(self) -> bool: ...


class DeadlineProtocol(HttpToolsProtocol):
    header_seconds = HEADER_SECONDS
    body_seconds = BODY_SECONDS
    write_seconds = WRITE_SECONDS
    # Set in each worker of `--workers N`: a worker holding more than its share of the open connections
    # closes each after its answer (`Connection: close`), and the client's next connection may land
    # on another worker; kept-alive connections otherwise stay where the kernel first put them.
    balance: Balance | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: str | None = None
        # What of the current request the client still owes: "head", "body", nothing (None: it is
        # in), or "next" (answered: the next byte begins another request).
        self._owed: str | None = "head"
        self._head_bytes = 0
        self._begun_here = False
        self._stalled: asyncio.TimerHandle | None = None  # the write deadline, while the client reads nothing
        super().connection_made(transport)
        if self.balance is not None:
            self.balance.opened()
        self._set("head")

    def data_received(self, data: bytes) -> None:
        self._begun_here = False
        super().data_received(data)
        if self._owed == "head" and not self._begun_here:  # all of `data` is the head, still not whole
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
                logger.info("closed a connection whose request head was over %d bytes", MAX_HEAD_BYTES)
                self._refuse(_TOO_LARGE)
        self._set("head" if self._owed == "next" else self._owed)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # A head is counted from the read after the one it begins in (which may hold the end of the
        # request before it): what it takes is at most MAX_HEAD_BYTES and one read.
        self._owed, self._head_bytes, self._begun_here = "head", 0, True

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._owed = "body"
        if self.balance is not None and self.cycle is not None and self.balance.over():
            self.cycle.keep_alive = False

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._owed = None

    def on_response_complete(self) -> None:
        if self._owed is None and not self.pipeline:  # not while a pipelined request waits its turn
            self._owed = "next"
        super().on_response_complete()
        self._set(None)  # idle until the next byte: the keep-alive timeout's time

    def pause_writing(self) -> None:
        """The send buffer is full. Unless some of it leaves within each `write_seconds`, the client
        reads nothing, and the connection is dropped with its buffered answer (closing would wait to
        send it, for ever)."""
        super().pause_writing()
        self._watch_writes(self.transport.get_write_buffer_size())

    def resume_writing(self) -> None:
        self._unwatch_writes()
        super().resume_writing()

    def _watch_writes(self, buffered: int) -> None:
        self._unwatch_writes()
        self._stalled = self.loop.call_later(self.write_seconds, self._writes_checked, buffered)

    def _unwatch_writes(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def _writes_checked(self, buffered: int) -> None:
        self._stalled = None
        now = self.transport.get_write_buffer_size()
        if now < buffered:  # moving, if slowly (a buffered answer can be far above the low-water mark)
            self._watch_writes(now)
            return
        logger.info("dropped a connection whose client read none of its answer for %g s", self.write_seconds)
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._unwatch_writes()
        self._set(None)
        if self.balance is not None:
            self.balance.closed()
        super().connection_lost(exc)

    def _set(self, phase: str | None) -> None:
        """The deadline of `phase`, set when the phase begins, so that trickling bytes never move it."""
        if phase == self._phase:
            return
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = phase
        if phase is not None:
            seconds = self.header_seconds if phase == "head" else self.body_seconds
            self._deadline = self.loop.call_later(seconds, self._expired, phase)

    def _expired(self, phase: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        logger.info("closed a connection whose request %s did not arrive in time", phase)
        self._refuse(_TIMEOUT)

    def _refuse(self, answer: bytes) -> None:
        """`answer` the current request, unless an answer to it has begun, and close the connection."""
        cycle = self.cycle
        if self._owed in ("head", "next"):  # no cycle is this request's yet; one may still be answering
            answering = cycle is not None and not cycle.response_complete
        else:
            answering = cycle is not None and cycle.response_started
        if not answering:
            self.transport.write(answer)
        self.transport.close()


def with_deadlines(
    header_seconds: float, body_seconds: float, write_seconds: float = WRITE_SECONDS
) -> type[DeadlineProtocol]:
    """The protocol class with these deadlines."""
    deadlines = {"header_seconds": header_seconds, "body_seconds": body_seconds, "write_seconds": write_seconds}
    return type("DeadlineProtocol", (DeadlineProtocol,), deadlines)
