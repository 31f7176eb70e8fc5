"""The CPU work of a tool call (checking its arguments, reading and validating the upstream's answer,
searching the tools) runs in a worker thread with a deadline, so the event loop keeps answering every
other client, `GET /health` included, while it runs: Python hands the interpreter over between
bytecodes (jsonschema's check of a 1 MiB argument is seconds of them), and SQLite lets go of it while
it searches. One C or Rust call that holds the interpreter still holds the loop: pydantic-core
validating a 16 MiB answer of 200,000 small objects held it for 3 s in one stretch.

Past the deadline the call is an error result at once; the thread cannot be stopped and finishes
unobserved (the sizes it can be given are capped, and every regex it runs is linear in its text).

Work on at most `ON_LOOP_BYTES` of JSON runs on the loop itself: since its time follows its size, it
takes a fraction of a millisecond, less than the hand-over to a thread and back (a queue, a lock, a
wake-up and the interpreter passed twice), which for a typical call cost the worker more CPU than the
work itself."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

from .results import UpstreamError

T = TypeVar("T")
ON_LOOP_BYTES = 8 * 1024


class Overtime(UpstreamError):
    """Work that passed its deadline; the message says which and how long."""


async def off_loop(what: str, seconds: float, function: Callable[..., T], *args: Any, size: int | None = None) -> T:
    """`function(*args)` in a worker thread; an `Overtime` error naming `what` after `seconds`. With
    `size` (the bytes of JSON the work reads) at most `ON_LOOP_BYTES`, on the loop, at once."""
    if size is not None and size <= ON_LOOP_BYTES:
        return function(*args)
    try:
        with anyio.fail_after(seconds):
            return await anyio.to_thread.run_sync(functools.partial(function, *args), abandon_on_cancel=True)
    except TimeoutError:
        raise Overtime(f"{what} took longer than {seconds:g}s") from None
