"""`typed_mcp.runtime.work.off_loop`: work on at most `ON_LOOP_BYTES` of JSON runs on the event loop's
own thread (the hand-over to a thread cost more than such work); larger work, or work of unknown size,
runs in a worker thread, where a deadline can still answer for it."""

from __future__ import annotations

import threading

import anyio

from typed_mcp.runtime.work import ON_LOOP_BYTES, off_loop


def thread_of(size: int | None) -> bool:
    """Whether `off_loop` ran its function on the loop's thread for work of `size` bytes."""

    async def run() -> bool:
        loop_thread = threading.get_ident()
        ran_on = await off_loop("a test", 60, threading.get_ident, size=size)
        return ran_on == loop_thread

    return anyio.run(run)


def test_small_work_runs_on_the_loop():
    assert thread_of(0)
    assert thread_of(ON_LOOP_BYTES)


def test_larger_or_unsized_work_runs_in_a_thread():
    assert not thread_of(ON_LOOP_BYTES + 1)
    assert not thread_of(None)
