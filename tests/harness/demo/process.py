"""Start local servers as real subprocesses on 127.0.0.1, for `make demo` and for the tests."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

import httpx

import harness

_CLAIMS = Path(tempfile.gettempdir()) / f"typed-mcp-test-ports-{os.getuid()}"
_CLAIM_SECONDS = 900.0  # longer than any one test keeps a server
_RANDOM = random.SystemRandom()  # a test that seeds `random` must not make two processes pick alike


def free_port() -> int:
    """A port on 127.0.0.1 that no other caller, in any process, got in the last 15 minutes, and
    that the kernel never hands out for port 0 (a server that binds port 0 between our check and
    the child's bind would take it) or as a connection's local port: one below the ephemeral range."""
    low, _ = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    first, last = 10_000, low - 1
    if last - first < 1_000:
        raise RuntimeError(f"the ephemeral port range starts at {low}: too low to keep test ports out of it")
    with open(_CLAIMS, "a+") as claims:
        fcntl.flock(claims, fcntl.LOCK_EX)  # every process's claims pass through this one file
        claims.seek(0)
        now = time.time()
        recent = {}
        for line in claims.read().splitlines():
            port, _, when = line.partition(" ")
            if port.isdigit() and now - float(when or 0) < _CLAIM_SECONDS:
                recent[int(port)] = float(when)
        for _ in range(1_000):
            port = _RANDOM.randint(first, last)
            if port not in recent and _bindable(port):
                break
        else:
            raise RuntimeError(f"no free port in {first}-{last}")
        recent[port] = now
        claims.seek(0)
        claims.truncate()
        claims.write("".join(f"{p} {t}\n" for p, t in recent.items()))
        return port


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no conflict
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class TcpSocket(NamedTuple):
    local: int  # port
    remote: int  # port; 0 for a listening socket
    established: bool


def tcp_sockets() -> dict[str, TcpSocket]:
    """Every IPv4 TCP socket of this network namespace, by inode (`/proc/net/tcp`)."""
    sockets = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        local, remote, state, inode = parts[1], parts[2], parts[3], parts[9]
        sockets[inode] = TcpSocket(_port(local), _port(remote), state == "01")
    return sockets


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets process `pid` holds (as `tcp_sockets` names them)."""
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _port(address: str) -> int:
    """The port of a `/proc/net/tcp` address (`0100007F:1F90`: hex, after the colon)."""
    return int(address.rsplit(":", 1)[1], 16)


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout:g}s")


@contextlib.contextmanager
def running(
    args: list[str], ready_url: str, env: dict[str, str] | None = None, timeout: float = 30.0
) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_http(ready_url, proc, timeout)
        yield proc
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Terminate a child, then kill it if it has not exited within `grace` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def demo_api(env: dict[str, str] | None = None) -> Iterator[str]:
    """The demo Weather API on a free port; yields its base URL (http://127.0.0.1:PORT)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "harness.demo.weather_api", "--port", str(port)]
    with running(args, f"{base}/v1/openapi.json", {**harness.environment(), **(env or {})}):
        yield base


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    content_type: str = "application/json"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    raw_path: str
    headers: dict[str, str]
    body: bytes
    all_headers: list[tuple[str, str]] = field(default_factory=list)  # as sent: repeated ones too


class HttpServer:
    """A real HTTP server on 127.0.0.1 whose replies a caller scripts: `routes[path] = Reply(...)`
    or a function of the request. Every request is recorded in `seen`. With `tls` (a server-side
    SSL context), it speaks HTTPS."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Reply | Callable[[Seen], Reply]] = {}
        self.default: Reply | Callable[[Seen], Reply] | None = None  # for paths without a route
        self.seen: list[Seen] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                    list(self.headers.items()),
                )
                owner.seen.append(seen)
                route = owner.routes.get(self.path.split("?")[0], owner.default)
                reply = route(seen) if callable(route) else route or Reply(404, b'{"detail":"no route"}')
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body
                if not isinstance(body, (bytes, str)):
                    body = json.dumps(body)
                if isinstance(body, str):
                    body = body.encode()
                self.send_response(reply.status)
                if reply.content_type:
                    self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    try:
                        self.wfile.write(body)
                    except (BrokenPipeError, ConnectionResetError):
                        pass

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_TRACE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HttpServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
