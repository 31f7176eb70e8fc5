"""A slow HTTP client: a request sent a byte a second, to see whether and when a server cuts it off."""

from __future__ import annotations

import time

import anyio


async def trickle(port: int, sent_at_once: bytes, trickled: bytes, within: float) -> tuple[float, bytes] | None:
    """Connect to 127.0.0.1:`port`, send `sent_at_once`, then `trickled` a byte a second: the seconds
    after which the server closed the connection and what it answered, or None while it was still
    open after `within` seconds."""
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        started, answer = time.monotonic(), b""
        if sent_at_once:
            await stream.send(sent_at_once)
        for byte in trickled:
            if time.monotonic() - started > within:
                return None
            try:
                await stream.send(bytes([byte]))
                with anyio.move_on_after(1):
                    while True:
                        answer += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
                return time.monotonic() - started, answer
    return None
