"""Several worker processes of one streamable HTTP server, each accepting connections on a socket of
its own, so that the kernel spreads new connections over them, and each closing connections after
their answer while it holds more than its share, so that kept-alive connections spread evenly too.

Workers that share one listening socket (uvicorn's and gunicorn's `--workers`) do not share the
connections: the worker that a new connection wakes accepts every connection then pending (asyncio's
accept loop), so a burst of connections lands on whichever worker runs first, and keep-alive keeps
each with it. Here each worker listens on its own socket, all bound to the same address with
SO_REUSEPORT, and Linux picks the socket of each new connection by a hash of its addresses, whichever
worker happens to be running. A hash spreads 100 connections over 4 workers as 16 / 38 / 21 / 25 as
often as not, and a client keeps its connection: so the workers count their open connections in
memory they share, and one holding more than the mean by a tenth and one closes each of its
connections after its answer (`Connection: close`, which HTTP clients follow by connecting again,
where the hash is drawn anew) until it holds no more (`deadlines.DeadlineProtocol.balance`).

The parent builds the app once and forks the workers (they share its memory until they write to it);
it holds the address (a socket bound, never listening, so it takes no connection) and accepts
nothing. It starts a worker again when one dies, and exits with `BOOT_FAILURE` when one cannot start
(a process manager then stops instead of restarting it forever). On SIGTERM or SIGINT it asks every
worker to stop (uvicorn's graceful shutdown: a worker finishes the requests it holds) and waits;
killed outright, it cannot, and each worker stops itself when it sees its parent gone. A worker that
is killed loses the connections waiting in its own queue, which the kernel resets."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from functools import partial
from multiprocessing.connection import wait
from typing import Any

import anyio

from .options import BOOT_FAILURE  # a worker that cannot start exits with it (uvicorn's STARTUP_FAILURE too)

logger = logging.getLogger(__name__)

# A worker holding more open connections than the workers' mean times (1 + SLACK), plus one, closes
# each of them after its answer until it holds no more.
SLACK = 0.1
RESTART_PAUSE = 1.0  # a worker that died this soon after it started is started again after this long
ORPHAN_CHECK = 0.5  # seconds between a worker's looks at whether its parent is still there


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) with SO_REUSEPORT, not listening yet."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn binds
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class Share:
    """The open connections of each worker, in memory the workers share (each writes only its own
    count, in the slot `slot`; a worker reads the others' as they are, a moment old at worst)."""

    def __init__(self, counts: Any, slot: int) -> None:
        self.counts, self.slot = counts, slot
        counts[slot] = 0  # a worker started again in the slot of one that died

    def opened(self) -> None:
        self.counts[self.slot] += 1

    def closed(self) -> None:
        self.counts[self.slot] -= 1

    def over(self) -> bool:
        """Whether this worker holds more than its share (to close a connection after its answer)."""
        counts: list[int] = self.counts[:]
        return counts[self.slot] > sum(counts) / len(counts) * (1 + SLACK) + 1


def _work(config: Any, host: str, port: int, parent: int, counts: Any, slot: int) -> None:
    """One worker: its own socket, uvicorn serving on it until SIGTERM or SIGINT, or until the
    process `parent` is gone; its open connections counted in `counts[slot]`."""
    import uvicorn

    # The parent's handlers are not this process's. uvicorn handles both signals while it serves and
    # raises them again once it has stopped: then SIGTERM ends the process, and a terminal's Ctrl-C
    # (which reaches every worker, and the parent, which asks them to stop) prints no traceback.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    protocol = config.http_protocol_class  # loaded before the fork: the deadlines' protocol
    config.http_protocol_class = type(protocol.__name__, (protocol,), {"balance": Share(counts, slot)})
    server = uvicorn.Server(config)
    try:
        sock = reuse_port_socket(host, port)
    except OSError as exc:
        logger.error("worker %d: cannot bind %s:%d: %s", os.getpid(), host, port, exc)
        raise SystemExit(BOOT_FAILURE) from None
    # A parent killed outright (SIGKILL, the OOM killer) cannot stop its workers: each stops itself
    # (gracefully) once it sees that, so none goes on serving old code beside a new server.
    orphaned = threading.Thread(target=_stop_when_orphaned, args=(server, parent), daemon=True)
    orphaned.start()
    with sock:  # an app whose startup fails exits here with uvicorn's own BOOT_FAILURE status
        anyio.run(partial(server.serve, sockets=[sock]))


def _stop_when_orphaned(server: Any, parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK)
    logger.warning("worker %d: the server's first process is gone: stopping", os.getpid())
    server.should_exit = True  # uvicorn's main loop reads it every tick


def serve(config: Any, host: str, port: int, count: int) -> int:
    """Serve uvicorn `config`'s app on (host, port) in `count` worker processes until SIGTERM or
    SIGINT; the exit status for the command (0; 1 when the address cannot be bound; `BOOT_FAILURE`)."""
    context = multiprocessing.get_context("fork")  # the app is built: the workers share it
    try:
        held = reuse_port_socket(host, port)  # the address, and an error now if another program has it
    except OSError as exc:
        logger.error("cannot bind %s:%d: %s", host, port, exc)  # one line, as uvicorn says it
        return 1
    config.load()  # once, before the fork
    stopping: list[int] = []

    def stop(signum: int, _frame: Any) -> None:
        stopping.append(signum)

    previous = {number: signal.signal(number, stop) for number in (signal.SIGTERM, signal.SIGINT)}
    workers: dict[int, tuple[multiprocessing.process.BaseProcess, float]] = {}  # slot -> process, started at
    counts = context.Array("i", count, lock=False)  # each worker's open connections

    def start(slot: int) -> None:
        arguments = (config, host, port, os.getpid(), counts, slot)
        process = context.Process(target=_work, args=arguments, name=f"worker-{slot}")
        process.start()
        workers[slot] = (process, time.monotonic())

    status = 0
    try:
        for slot in range(count):
            start(slot)
        logger.info("serving on %s:%d with %d workers, each on its own socket (SO_REUSEPORT)", host, port, count)
        while not stopping:
            # Woken by a worker's end, or every half second to see a signal (which only sets a flag).
            ended = wait([process.sentinel for process, _ in workers.values()], timeout=0.5)
            for slot, (process, started) in list(workers.items()):
                if process.sentinel not in ended or stopping:
                    continue
                process.join()
                if process.exitcode == BOOT_FAILURE:
                    logger.error("worker %d could not start: stopping", process.pid)
                    status = BOOT_FAILURE
                    stopping.append(0)
                    break
                logger.warning("worker %d exited with status %s: starting another", process.pid, process.exitcode)
                if time.monotonic() - started < RESTART_PAUSE:
                    time.sleep(RESTART_PAUSE)
                start(slot)
    finally:
        for process, _ in workers.values():
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn's graceful shutdown
        for process, _ in workers.values():
            process.join()
        held.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status
