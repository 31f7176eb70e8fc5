"""The hosted server's HTTP/1.1 protocol (`runtime/deadlines.py`, what `uvicorn --http ...DeadlineProtocol`,
the package's command line and gunicorn's `DeadlineWorker` serve with) against clients that are slow,
greedy or pipelining, on a plain ASGI app in this process, with deadlines of a second: a request's
head and body each have theirs, measured from their first byte, on the first request of a connection
and on the next ones; a request that is in takes its time; an answer sent before its body arrived is
not followed by a 408; a head larger than the limit is refused at once, before it takes memory."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import uvicorn

from typed_mcp.runtime.deadlines import MAX_HEAD_BYTES, with_deadlines

pytestmark = pytest.mark.anyio

DEADLINE = 1.0  # seconds, for a request's head and for its body
GRACE = 2.0  # seconds past a deadline the connection may still be open (timers on a loaded machine)
SLOW_APP_SECONDS = 2.5  # longer than both deadlines together
BIG = 32 * 1024 * 1024  # an answer far larger than the socket buffers between the server and a client


async def app(scope, receive, send) -> None:
    """Reads the request's body (unless the path is /early, answered before it), sleeps on /slow."""
    if scope["type"] != "http":
        return
    if scope["path"] != "/early":
        while (await receive()).get("more_body"):
            pass
    if scope["path"] == "/slow":
        await asyncio.sleep(SLOW_APP_SECONDS)
    body = f"{scope['method']} {scope['path']}".encode()
    if scope["path"] == "/big":
        body = b"b" * BIG
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def served(write_seconds: float = DEADLINE) -> AsyncIterator[tuple[int, uvicorn.Server]]:
    protocol = with_deadlines(DEADLINE, DEADLINE, write_seconds)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, http=protocol, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1], server
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def serving() -> AsyncIterator[int]:
    async with served() as (port, _):
        yield port


def request(path: str, body: bytes = b"", method: str = "POST") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(body)}\r\n\r\n".encode()
    return head + body


async def until_closed(reader: asyncio.StreamReader, within: float) -> tuple[float, bytes]:
    """Everything the server sends until it closes the connection, and when it closed it (from now)."""
    started, answer = time.monotonic(), b""
    while chunk := await asyncio.wait_for(reader.read(65536), within):
        answer += chunk
    return time.monotonic() - started, answer


async def trickled(writer: asyncio.StreamWriter, data: bytes, reader: asyncio.StreamReader) -> tuple[float, bytes]:
    """`data` sent a byte every 0.1 s until the server closes the connection: when it did, and its answer."""

    async def send() -> None:
        for byte in data:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.1)

    sending = asyncio.create_task(send())
    try:
        return await until_closed(reader, DEADLINE + GRACE)
    finally:
        sending.cancel()


async def test_a_connection_that_sends_nothing_is_answered_408_at_the_head_deadline():
    async with serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        after, answer = await until_closed(reader, DEADLINE + GRACE)
        writer.close()
    assert DEADLINE - 0.2 <= after <= DEADLINE + GRACE
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer


async def test_a_trickled_head_is_cut_off_on_the_first_request_and_on_a_later_one():
    async with serving() as port:
        for earlier in (b"", request("/one")):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(earlier)
            after, answer = await trickled(writer, request("/two", b"x" * 100)[:-101], reader)
            writer.close()
            assert after <= DEADLINE + GRACE, after
            assert answer.endswith(b"the request came in too slowly\n"), answer
            assert answer.count(b"HTTP/1.1 ") == (2 if earlier else 1), answer
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n" if earlier else b"HTTP/1.1 408 "), answer


async def test_a_trickled_body_is_cut_off_at_the_body_deadline():
    async with serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        whole = request("/body", b"y" * 200)
        writer.write(whole[:-200])  # the head at once
        after, answer = await trickled(writer, whole[-200:], reader)
        writer.close()
    assert after <= DEADLINE + GRACE, after
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer


async def test_a_request_that_is_in_takes_its_time_and_pipelined_requests_are_answered():
    async with serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request("/slow") + request("/after", b"z" * 10))  # pipelined, both in at once
        started, answer = time.monotonic(), b""
        while answer.count(b"HTTP/1.1 200 OK") < 2 and time.monotonic() - started < SLOW_APP_SECONDS + GRACE:
            answer += await asyncio.wait_for(reader.read(65536), SLOW_APP_SECONDS + GRACE)
        writer.close()
    assert b"408" not in answer, answer
    assert answer.endswith(b"POST /after") and b"POST /slow" in answer, answer


async def test_an_answer_sent_before_the_body_is_not_followed_by_a_408():
    async with serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        whole = request("/early", b"w" * 200)
        writer.write(whole[:-200])
        after, answer = await trickled(writer, whole[-200:], reader)
        writer.close()
    assert after <= DEADLINE + GRACE, after
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"POST /early"), answer


async def test_a_head_over_the_limit_is_refused_before_it_is_all_read():
    async with serving() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        filler = b"x-filler: " + b"a" * 4000 + b"\r\n"
        sent = 0

        async def send() -> None:
            nonlocal sent
            writer.write(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            while sent < 64 * MAX_HEAD_BYTES:  # far more than the limit: the server must stop it
                writer.write(filler)
                await writer.drain()
                sent += len(filler)
                await asyncio.sleep(0)  # the server runs in this loop too: let it read

        sending = asyncio.create_task(send())
        answer = b""
        try:
            while chunk := await asyncio.wait_for(reader.read(65536), GRACE):
                answer += chunk
        except ConnectionError:  # reset: the server closed with our bytes unread
            pass
        when_closed = sent
        sending.cancel()
        await asyncio.gather(sending, return_exceptions=True)
        writer.close()
    assert when_closed < 8 * MAX_HEAD_BYTES, f"the server took {when_closed} bytes of a head before it closed"
    assert not answer or answer.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), answer[:200]


async def test_a_client_that_stops_reading_its_answer_is_cut_off_at_the_write_deadline():
    """A client that asks for a large answer and never reads it held the connection, the request's
    task and the whole answer in memory for ever (uvicorn waits for the socket to drain); once the
    answer stops moving for the deadline, the connection is dropped with what it held."""
    async with served() as (port, server):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(request("/big", method="GET"))
        while not any(c.transport.get_write_buffer_size() for c in server.server_state.connections):
            await asyncio.sleep(0.01)  # until the answer is sent and stands in the server's buffer
        started = time.monotonic()
        while server.server_state.connections and time.monotonic() - started < DEADLINE + GRACE:
            await asyncio.sleep(0.1)
        held = len(server.server_state.connections)
        sock.close()
    assert held == 0, "the connection of a client that stopped reading is still open"


async def test_a_client_that_reads_slowly_gets_its_whole_answer():
    """The write deadline is for an answer that stands still, not one that moves slowly. What moves
    is measured at the server's own buffer, which the kernel drains only in steps (once a third or so
    of the socket's send buffer, up to megabytes, is free), so an answer to a slow reader stands still
    for seconds between steps: a client reading about 1 MB/s with a deadline of 5 s gets all of it
    (the default is 30 s: readers slower than about 50 KB/s of answers larger than the buffers may
    be cut off)."""
    async with served(write_seconds=5.0) as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**20)
        writer.write(request("/big", method="GET"))
        received, started = 0, time.monotonic()
        while received < BIG and time.monotonic() - started < 120:
            chunk = await asyncio.wait_for(reader.read(64 * 1024), 5.0 + GRACE)
            if not chunk:
                break
            received += len(chunk)
            await asyncio.sleep(0.05 if received < 8 * 1024 * 1024 else 0)  # slowly, then at once
        writer.close()
    assert received >= BIG, f"cut off after {received} bytes"
