"""Test helpers: a scriptable HTTP server on 127.0.0.1, the CLI as a subprocess, generated packages."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"  # the shared corpus sits beside the repository (also in CI)


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


class HttpServer:
    """A real HTTP server on 127.0.0.1 whose replies a test scripts: `routes[path] = Reply(...)`
    or a function of the request. Every request is recorded in `seen`."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply | Callable[[Seen], Reply]] = {}
        self.seen: list[Seen] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
                owner.seen.append(seen)
                route = owner.routes.get(self.path.split("?")[0])
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

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HttpServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True, text=True, cwd=cwd or REPO, env={**os.environ, **(env or {})}, timeout=600,
    )


def generate(spec: dict[str, Any] | Path | str, out: Path, package: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Generate from a spec dict (written to a file next to `out`), a path or a URL; must succeed."""
    if isinstance(spec, dict):
        path = out.parent / f"{package}.openapi.json"
        path.write_text(json.dumps(spec))
        spec = path
    proc = run_cli("generate", str(spec), "--out", str(out), "--package-name", package, "--no-snapshot", *extra)
    assert proc.returncode == 0, proc.stderr
    return proc


def import_server(out: Path, module: str):
    """Import a generated package in this process and build its MCPServer."""
    src = str(out / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module(f"{module}.server").build_server()


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def strip_annotations(schema: Any) -> Any:
    """A schema without the keys that only label it (titles, descriptions) and without
    `additionalProperties: true` (the one deliberate difference: models are open)."""
    if isinstance(schema, list):
        return [strip_annotations(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("title", "description") or (key == "additionalProperties" and value is True):
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: strip_annotations(sub) for name, sub in value.items()}
        else:
            out[key] = strip_annotations(value)
    return out
