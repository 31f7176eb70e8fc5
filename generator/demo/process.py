"""Start local servers as real subprocesses on 127.0.0.1, for `make demo` and for the tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
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
def running(args: list[str], ready_url: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_http(ready_url, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


@contextlib.contextmanager
def demo_api(env: dict[str, str] | None = None) -> Iterator[str]:
    """The demo Weather API on a free port; yields its base URL (http://127.0.0.1:PORT)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "generator.demo.weather_api", "--port", str(port)]
    with running(args, f"{base}/v1/openapi.json", env):
        yield base
