"""`--workers N`: the committed demo package's own command line serving streamable HTTP in N worker
processes on 127.0.0.1, each accepting on a socket of its own (SO_REUSEPORT), so that connections
spread evenly over them; a killed worker replaced; SIGTERM stopping them all; the settings it refuses."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, socket_inodes, tcp_sockets, wait_http
from harness.demo.weather_api import CITIES
from harness.replicas import children_of
from support import demo_http, demo_http_command, demo_stdio
from typed_mcp.runtime.workers import SLACK

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="--workers above 1 is for Linux (SO_REUSEPORT)"),
]


def workers_listening(pid: int, port: int, count: int, timeout: float = 30.0) -> list[int]:
    """The `count` worker processes of the server `pid` once each listens on `port` (each its own socket)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sockets = tcp_sockets()
        listening = [
            child
            for child in sorted(children_of(pid))
            if any(
                (found := sockets.get(inode)) and found.local == port and not found.remote
                for inode in socket_inodes(child)
            )
        ]
        if len(listening) == count:
            return listening
        time.sleep(0.1)
    raise TimeoutError(f"{count} workers of {pid} did not all listen on {port}")


def accepted(port: int, workers: list[int], remotes: set[int]) -> dict[int, set[int]]:
    """Of the client ports `remotes`, those each worker holds a connection to `port` from, now."""
    sockets = tcp_sockets()
    return {
        worker: {
            found.remote
            for inode in socket_inodes(worker)
            if (found := sockets.get(inode)) and found.local == port and found.remote in remotes
        }
        for worker in workers
    }


def spread(port: int, workers: list[int], connections: int) -> dict[int, int]:
    """Open `connections` connections at once (a burst, as clients starting together open them): how
    many each worker accepted; then each asks for /health and is answered."""
    opened = [socket.create_connection(("127.0.0.1", port)) for _ in range(connections)]
    try:
        ours = {sock.getsockname()[1] for sock in opened}
        deadline = time.monotonic() + 10
        while True:  # until every connection is accepted (before any request: a worker holding more
            held = accepted(port, workers, ours)  # than its share closes connections after their answers)
            if sum(map(len, held.values())) == connections or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        counts = {worker: len(remotes) for worker, remotes in held.items()}
        for sock in opened:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for sock in opened:
            assert sock.recv(65536).startswith(b"HTTP/1.1 200"), "every connection answered"
        return counts
    finally:
        for sock in opened:
            sock.close()


async def test_connections_spread_evenly_over_the_workers_and_each_serves_mcp(demo_url):
    port = free_port()
    with demo_http(port, demo_url, "--stateless", "--workers", "3") as proc:
        workers = workers_listening(proc.pid, port, 3)
        accepted = spread(port, workers, 120)
        assert sum(accepted.values()) == 120, accepted
        # The kernel hashes each connection to a socket: each of 3 gets 40 on average, and fewer than
        # 20 (4 standard deviations below) would be an uneven spread, not chance. Workers sharing one
        # socket give a burst to whichever worker runs first.
        assert min(accepted.values()) >= 20, accepted

        url = f"http://127.0.0.1:{port}/mcp"
        cities = sorted(CITIES)
        answers = {}

        async def client(index: int) -> None:
            async with Client(streamable_http_client(url)) as session:  # each its own connection
                city = cities[index % len(cities)]
                result = await session.call_tool("get_weather", {"city": city})
                assert not result.is_error, result.content
                answers[index] = (city, result.structured_content)

        async with anyio.create_task_group() as group:
            for index in range(12):
                group.start_soon(client, index)
    assert len(answers) == 12
    for city, structured in answers.values():
        assert structured == CITIES[city].model_dump()


def holder(port: int, workers: list[int], sock: socket.socket, timeout: float = 5.0) -> int:
    """The worker that accepted `sock`'s connection (once one has)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker, remotes in accepted(port, workers, {sock.getsockname()[1]}).items():
            if remotes:
                return worker
        time.sleep(0.01)
    raise TimeoutError("no worker accepted the connection")


def health(sock: socket.socket) -> bool:
    """GET /health on `sock`, its whole answer read: whether the server closes the connection after it."""
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    length = int(
        next(line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))
    )
    while len(body) < length:
        body += sock.recv(65536)
    return b"\r\nconnection: close" in head.lower()


def test_kept_alive_connections_on_one_worker_spread_over_all(demo_url):
    """40 connections that the kernel gave one worker of 4 (kept by their source ports; a hash spreads
    connections about as unevenly as 16 / 38 / 21 / 25 of 100, and a client keeps its connection): as
    clients use them, that worker closes them after their answers, clients connect again (new ports,
    a new draw) and within a few requests each no worker holds more than the mean by a tenth and one.
    On the old code the first worker still held all 40."""
    port = free_port()
    with demo_http(port, demo_url, "--stateless", "--workers", "4") as proc:
        workers = workers_listening(proc.pid, port, 4)
        held: list[socket.socket] = []
        while len(held) < 40:
            sock = socket.create_connection(("127.0.0.1", port))
            if holder(port, workers, sock) == workers[0]:
                held.append(sock)
            else:
                sock.close()
        try:
            for _ in range(5):  # each client's request in turn, as a keep-alive client pool makes them
                for index, sock in enumerate(held):
                    if health(sock):  # the server closes it: the client connects again
                        sock.close()
                        held[index] = socket.create_connection(("127.0.0.1", port))
            counts = Counter(holder(port, workers, sock) for sock in held)
        finally:
            for sock in held:
                sock.close()
    most = 40 / 4 * (1 + SLACK) + 1
    assert max(counts.values()) <= most and len(counts) == 4, counts


@pytest.mark.parametrize("flags", [(), ("--no-access-log",)], ids=["access log", "no access log"])
def test_the_access_log_writes_a_line_per_request_unless_turned_off(demo_url, flags):
    port = free_port()
    args, env = demo_http_command(port, demo_url, "--stateless", "--workers", "2", *flags)
    proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=30)
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", port)) as sock:
                assert not health(sock)
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    lines = output.decode().count('"GET /health HTTP/1.1" 200')
    assert lines == (0 if flags else 6), output.decode()[-2000:]  # the readiness probe's, and five


def test_a_killed_worker_is_replaced_and_sigterm_stops_them_all(demo_url):
    port = free_port()
    args, env = demo_http_command(port, demo_url, "--stateless", "--workers", "2")
    proc = subprocess.Popen(
        args, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=30)
        first = workers_listening(proc.pid, port, 2)
        os.kill(first[0], signal.SIGKILL)
        again = workers_listening(proc.pid, port, 2)
        assert first[1] in again and first[0] not in again  # one new worker, the other untouched
        assert min(spread(port, again, 60).values()) >= 5  # the new one takes its share
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert "exited with status -9: starting another" in stderr
    assert not any(alive(pid) for pid in again), again  # SIGTERM stopped every worker


def test_workers_stop_themselves_when_the_first_process_is_killed_outright(demo_url):
    port = free_port()
    args, env = demo_http_command(port, demo_url, "--stateless", "--workers", "2")
    proc = subprocess.Popen(args, env={**os.environ, **env}, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=30)
        workers = workers_listening(proc.pid, port, 2)
        proc.kill()  # SIGKILL: it cannot stop them
        proc.wait()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(alive(pid) for pid in workers):
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers), "orphaned workers went on serving"
        with socket.socket() as sock:  # the address is free again: no socket of theirs is left
            sock.bind(("127.0.0.1", port))
    finally:
        proc.kill()
        for pid in filter(alive, workers):  # the test failed: leave no server behind
            os.kill(pid, signal.SIGKILL)
    assert "the server's first process is gone: stopping" in proc.stderr.read()


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, which has exited, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(
    ("flags", "variables", "message"),
    [
        (("--workers", "2"), {}, "--workers above 1 needs --stateless (WEATHER_MCP_STATELESS=1)"),
        (("--stateless",), {"WEATHER_MCP_WORKERS": "0"}, "the number of workers must be from 1 to 64 (got '0'"),
        (("--stateless", "--workers", "65"), {}, "the number of workers must be from 1 to 64 (got '65'"),
        (("--stateless",), {"WEATHER_MCP_WORKERS": "two"}, "(got 'two'; --workers or WEATHER_MCP_WORKERS)"),
    ],
)
def test_settings_that_cannot_work_are_refused_with_one_line(demo_url, flags, variables, message):
    args, env = demo_http_command(free_port(), demo_url, *flags, **variables)
    done = subprocess.run(
        args,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_stdio_takes_no_workers(demo_url):
    stdio = demo_stdio(demo_url, "--workers", "2")
    done = subprocess.run(
        [stdio.command, *stdio.args],
        env={**os.environ, **(stdio.env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "--workers is for --transport streamable-http" in done.stderr


def test_an_address_another_program_holds_is_one_line_and_status_1(demo_url):
    port = free_port()
    with socket.socket() as taken:  # another program holds the address, without SO_REUSEPORT
        taken.bind(("127.0.0.1", port))
        taken.listen()
        args, env = demo_http_command(port, demo_url, "--stateless", "--workers", "2")
        done = subprocess.run(
            args,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert f"cannot bind 127.0.0.1:{port}: [Errno 98] Address already in use" in done.stderr
    assert "Traceback" not in done.stderr


FAILING_APP = """
import sys, uvicorn
from typed_mcp.runtime import workers

async def app(scope, receive, send):  # an ASGI app whose startup fails in every worker
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no upstream"})

config = uvicorn.Config(app, lifespan="on", log_level="error")
sys.exit(workers.serve(config, "127.0.0.1", int(sys.argv[1]), 2))
"""


def test_workers_that_cannot_start_stop_the_server_with_the_boot_failure_status():
    done = subprocess.run(
        [sys.executable, "-c", FAILING_APP, str(free_port())], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr  # what uvicorn's and gunicorn's supervisors read as "cannot boot"
    assert "could not start: stopping" in done.stderr and "starting another" not in done.stderr
