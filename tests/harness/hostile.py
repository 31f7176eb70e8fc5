"""A hostile upstream on 127.0.0.1: a raw asyncio socket server that misbehaves at the byte level
(trickles, resets mid-body, hangs, floods, redirects elsewhere), which no well-behaved HTTP server
library would let a test script. The fault is the request path's last segment, so one tool with a
path parameter (the demo's `get_weather(city)`) reaches every fault: `GET /v1/weather/trickle`.

It runs its own event loop in a thread, so synchronous and async tests can use it alike, and
records every request it reads (`seen`), each with the origin it came to (the main listener or
`other`, a second port: another origin, for redirects)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import socket
import struct
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

GOOD = json.dumps({"temperature": 21.5, "humidity": 40.0, "conditions": "clear"}).encode()
MIB = 1024 * 1024
HEAD_LIMIT = 16 * MIB  # a longer request head is still recorded, as OVERSIZED
OVERSIZED = "<request head over 16 MiB>"


@dataclass
class Request:
    origin: str  # "main" or "other"
    method: str
    target: str  # the raw request target, as sent
    headers: dict[str, str]  # lower-case names
    body: bytes


Fault = Callable[[asyncio.StreamWriter, "Hostile"], Awaitable[None]]


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _reply(writer: asyncio.StreamWriter, status: str, body: bytes, content_type: str, **extra: str) -> None:
    headers = {"content-type": content_type, "content-length": str(len(body)), **extra}
    writer.write(_head(status, headers) + body)
    await writer.drain()


async def _flood(writer: asyncio.StreamWriter, status: str, total: int, *, declared: bool) -> None:
    """`total` bytes of a JSON string, with or without a Content-Length (without: until close)."""
    headers = {"content-type": "application/json"}
    headers.update({"content-length": str(total)} if declared else {"connection": "close"})
    writer.write(_head(status, headers) + b'"')
    chunk = b"x" * 65536
    sent = 1
    while sent < total:
        piece = chunk[: total - sent]
        writer.write(piece)
        sent += len(piece)
        await writer.drain()  # raises once the reader closed: the flood ends with the call


async def ok(writer, hostile) -> None:
    await _reply(writer, "200 OK", GOOD, "application/json")


async def trickle(writer, hostile) -> None:
    """A valid answer, one byte a second: every read gets data well within any read timeout."""
    body = GOOD + b" " * 40
    writer.write(_head("200 OK", {"content-type": "application/json", "content-length": str(len(body))}))
    for byte in body:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(1.0)


async def trickle_head(writer, hostile) -> None:
    """The status line and headers themselves, one byte a second."""
    for byte in _head("200 OK", {"content-type": "application/json", "content-length": str(len(GOOD))}) + GOOD:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(1.0)


async def reset(writer, hostile) -> None:
    """Half the promised body, then a TCP reset (SO_LINGER 0), not an orderly close."""
    writer.write(_head("200 OK", {"content-type": "application/json", "content-length": "4000"}) + GOOD[:20])
    await writer.drain()
    await asyncio.sleep(0.05)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def big_declared(writer, hostile) -> None:
    await _flood(writer, "200 OK", 64 * MIB, declared=True)


async def big_undeclared(writer, hostile) -> None:
    await _flood(writer, "200 OK", 64 * MIB, declared=False)


@functools.lru_cache(maxsize=1)
def gzip_bomb() -> bytes:
    """64 MiB of JSON in about 64 KB of gzip. Compressing it takes seconds of CPU on a busy machine:
    a scripted server makes it when it starts, never while a call waits on it (the call's upstream
    timeout would end first, and the test would see a timeout instead of the size cap)."""
    return gzip.compress(b'"' + b"x" * (64 * MIB - 2) + b'"', compresslevel=9, mtime=0)


async def big_gzip(writer, hostile) -> None:
    bomb = gzip_bomb()
    headers = {"content-type": "application/json", "content-encoding": "gzip", "content-length": str(len(bomb))}
    writer.write(_head("200 OK", headers) + bomb)
    await writer.drain()


async def invalid_json(writer, hostile) -> None:
    await _reply(writer, "200 OK", b'{"temperature": 21.5, "humidity": ', "application/json")


async def html(writer, hostile) -> None:
    page = b"<!doctype html><html><head><title>Login</title></head><body><form>sign in</form></body></html>"
    await _reply(writer, "200 OK", page, "text/html; charset=utf-8")


async def hang(writer, hostile) -> None:
    """Reads the request, then never answers (until the client goes away)."""
    await asyncio.sleep(3600)


async def hang_body(writer, hostile) -> None:
    """Headers at once, then never the body."""
    writer.write(_head("200 OK", {"content-type": "application/json", "content-length": str(len(GOOD))}))
    await writer.drain()
    await asyncio.sleep(3600)


async def redirect(writer, hostile) -> None:
    """A 302 to the same path on another origin, with a body that would pass the model."""
    await _reply(writer, "302 Found", GOOD, "application/json", location=f"{hostile.other_url}/v1/weather/ok")


async def redirect_same(writer, hostile) -> None:
    await _reply(writer, "301 Moved Permanently", GOOD, "application/json", location="/v1/weather/ok")


async def redirect_post(writer, hostile) -> None:
    """A 307 (the method and body are kept by a client that follows it) to another origin."""
    await _reply(writer, "307 Temporary Redirect", b"", "application/json", location=f"{hostile.other_url}/v1/reports")


async def huge_500(writer, hostile) -> None:
    await _flood(writer, "500 Internal Server Error", 64 * MIB, declared=False)


async def huge_503(writer, hostile) -> None:
    await _flood(writer, "503 Service Unavailable", 64 * MIB, declared=True)


FAULTS: dict[str, Fault] = {
    "ok": ok,
    "trickle": trickle,
    "trickle-head": trickle_head,
    "reset": reset,
    "big-declared": big_declared,
    "big-undeclared": big_undeclared,
    "big-gzip": big_gzip,
    "invalid-json": invalid_json,
    "html": html,
    "hang": hang,
    "hang-body": hang_body,
    "redirect": redirect,
    "redirect-same": redirect_same,
    "reports": redirect_post,  # POST /v1/reports (create_report, with a bearer token)
    "huge-500": huge_500,
    "huge-503": huge_503,
}


class Hostile:
    """The server: `url` (faults by last path segment), `other_url` (answers `ok` to anything and
    records it: a redirect target on another origin). `scripted=False` makes it a plain recording
    upstream that answers `ok` to every request (the fuzzer's: an argument may spell a fault's name)."""

    def __init__(self, scripted: bool = True) -> None:
        self.scripted = scripted
        self.seen: list[Request] = []
        self.url = self.other_url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task] = set()

    def __enter__(self) -> Hostile:
        if self.scripted:
            gzip_bomb()
        self._thread.start()
        main = asyncio.run_coroutine_threadsafe(self._listen("main"), self._loop).result()
        other = asyncio.run_coroutine_threadsafe(self._listen("other"), self._loop).result()
        self.url, self.other_url = main, other
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def requests(self, origin: str = "main") -> list[Request]:
        return [r for r in self.seen if r.origin == origin]

    async def _listen(self, origin: str) -> str:
        server = await asyncio.start_server(
            lambda r, w: self._serve(origin, r, w), "127.0.0.1", 0, limit=HEAD_LIMIT, reuse_address=True
        )
        self._servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    async def _close(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, origin: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            while True:  # keep-alive: several requests may come on one connection
                request = await _read_request(origin, reader)
                if request is None:
                    return
                self.seen.append(request)
                if request.target == OVERSIZED:
                    return
                name = request.target.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
                fault = FAULTS.get(name, ok) if origin == "main" and self.scripted else ok
                await fault(writer, self)
                if fault not in (ok, invalid_json, html, redirect, redirect_same, redirect_post):
                    return  # a fault leaves the connection unusable
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()


async def _read_request(origin: str, reader: asyncio.StreamReader) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError:  # still a request that left: recorded, never served
        return Request(origin, "?", OVERSIZED, {}, b"")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    body = await reader.readexactly(length) if length else b""
    return Request(origin, method, target, headers, body)


@contextlib.contextmanager
def hostile() -> Iterator[Hostile]:
    with Hostile() as server:
        yield server
