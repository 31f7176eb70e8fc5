"""Several worker processes of one streamable HTTP server, each accepting connections on a socket of
its own, so that the kernel spreads new connections over them evenly.

Workers that share one listening socket (uvicorn's and gunicorn's `--workers`) do not share the
connections: the worker that a new connection wakes accepts every connection then pending (asyncio's
accept loop), so a burst of connections lands on whichever worker runs first, and keep-alive keeps
each with it. Here each worker listens on its own socket, all bound to the same address with
SO_REUSEPORT, and Linux picks the socket of each new connection by a hash of its addresses, whichever
worker happens to be running.

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


def _work(config: Any, host: str, port: int, parent: int) -> None:
    """One worker: its own socket, uvicorn serving on it until SIGTERM or SIGINT, or until the
    process `parent` is gone."""
    import uvicorn

    # The parent's handlers are not this process's. uvicorn handles both signals while it serves and
    # raises them again once it has stopped: then SIGTERM ends the process, and a terminal's Ctrl-C
    # (which reaches every worker, and the parent, which asks them to stop) prints no traceback.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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

    def start(slot: int) -> None:
        process = context.Process(target=_work, args=(config, host, port, os.getpid()), name=f"worker-{slot}")
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
