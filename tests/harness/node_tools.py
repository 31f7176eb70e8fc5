"""Node-side tools: the official TypeScript MCP SDK as a strict client and Prism as a mock upstream.

Used by the tests and by `typed-mcp corpus` (in a checkout of this repository: they are
development tools, not part of the generator's wheel). Both live in tests/node (package.json +
package-lock.json, exact versions), installed by `make tests/node/node_modules/.installed`;
`npm_install()` fails at once, saying so, when node_modules is missing or does not match the lock.

- `run_ts_client(server_cmd, env, calls, client=TS1)` runs tests/node/mcp_client.mjs: the SDK's
  `Client` lists every tool and calls each one with `client.callTool`, which checks structuredContent
  against the tool's outputSchema (AJV): error -32602 on a mismatch, -32600 when a tool with an
  outputSchema returns no structuredContent. `client` picks the SDK line and the protocol revision
  (`STRICT_CLIENTS`: 1.x on the initialize handshake, 2.x on it and on 2026-07-28).
- `ajv_accepts(cases, line)` asks a line's own validator (AJV + ajv-formats) which values it accepts.
- `prism(spec, port)` serves a mock of an OpenAPI document with Prism and captures its log;
  `prism_violations(log)` extracts what Prism found wrong with the requests it received.

`strict_run` builds on these: a generated package called tool by tool against Prism.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.demo.process import free_port, stop

NODE_DIR = Path(__file__).resolve().parent.parent / "node"  # tests/node: the strict TypeScript client and Prism
CLIENT = NODE_DIR / "mcp_client.mjs"
CONTROL_SERVER = NODE_DIR / "control_server.mjs"
PRISM_BIN = NODE_DIR / "node_modules" / ".bin" / "prism"

LEGACY = "2025-11-25"  # the initialize handshake's latest revision, what both lines offer by default
MODERN = "2026-07-28"  # server/discover and per-request _meta: the 2.x line only, pinned


@dataclass(frozen=True)
class StrictClient:
    """One official TypeScript SDK client: its line (1: @modelcontextprotocol/sdk, draft-07 AJV;
    2: @modelcontextprotocol/client, AJV 2020-12, outputSchemas compiled per tool) and the protocol
    revision it negotiates."""

    line: int
    protocol: str = LEGACY

    @property
    def id(self) -> str:  # a pytest id and a report key: "ts1", "ts2", "ts2-2026-07-28"
        return f"ts{self.line}" + ("" if self.protocol == LEGACY else f"-{self.protocol}")

    def args(self) -> list[str]:
        return ["--line", str(self.line)] + (["--protocol", self.protocol] if self.line == 2 else [])


TS1 = StrictClient(1)
TS2 = StrictClient(2)
TS2_MODERN = StrictClient(2, MODERN)
STRICT_CLIENTS = (TS1, TS2, TS2_MODERN)
# As test parameters: the 2.x line on the handshake revision brings no validator (2.x on 2026-07-28 has
# its AJV) and no server path (1.x takes the handshake) the other two lack, so it runs in make test-long.
STRICT_CLIENT_PARAMS = [pytest.param(c, id=c.id, marks=[pytest.mark.long] if c is TS2 else []) for c in STRICT_CLIENTS]

INVALID_PARAMS = -32602  # callTool: structuredContent does not match the outputSchema
INVALID_REQUEST = -32600  # callTool: a tool with an outputSchema returned no structuredContent


class NodeToolsError(RuntimeError):
    pass


def require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise NodeToolsError(
            f"`{program}` is not on PATH: the strict clients and Prism need Node.js 20+ (the 2.x SDK line) and "
            "npm (Debian: apt-get install nodejs npm), then `make tests/node/node_modules/.installed`"
        )
    return path


def installed_matches_lock() -> bool:
    """True when node_modules holds exactly what package-lock.json pins (npm's own record of
    the installed tree, node_modules/.package-lock.json, agrees on every non-optional package)."""
    hidden = NODE_DIR / "node_modules" / ".package-lock.json"
    if not hidden.is_file() or not PRISM_BIN.exists():
        return False
    try:
        locked = json.loads((NODE_DIR / "package-lock.json").read_text())["packages"]
        installed = json.loads(hidden.read_text())["packages"]
        wanted = json.loads((NODE_DIR / "package.json").read_text())["dependencies"]
    except (OSError, ValueError, KeyError):
        return False
    if locked.get("", {}).get("dependencies") != wanted:
        raise NodeToolsError(
            "tests/node/package.json and package-lock.json disagree: run `npm install` in tests/node and commit the lock file"
        )
    for path, meta in locked.items():
        if not path or meta.get("optional"):
            continue
        if installed.get(path, {}).get("version") != meta.get("version"):
            return False
    return True


_installed = False


def npm_install() -> None:
    """Check that tests/node/node_modules is what package-lock.json pins, and fail at once saying how
    to install it when not (`make tests/node/node_modules/.installed`, which every make target that
    runs node depends on): installing from the registry in the middle of a test could sit for minutes."""
    global _installed
    if _installed:
        return
    require("node")
    require("npm")
    if not installed_matches_lock():
        raise NodeToolsError(
            f"{NODE_DIR / 'node_modules'} does not match package-lock.json: "
            "run `make tests/node/node_modules/.installed` (npm ci in tests/node)"
        )
    _installed = True


def run_ts_client(
    server_cmd: list[str] | None,
    env: dict[str, str] | None = None,
    calls: list[dict[str, Any]] | None = None,
    list_only: bool = False,
    timeout: float = 180.0,
    *,
    url: str | None = None,
    dump_tools: bool = False,
    compile_schemas: bool = False,
    request_timeout_ms: int = 60000,
    headers: dict[str, str] | None = None,
    client: StrictClient = TS1,
    elicit: str | None = None,
) -> dict[str, Any]:
    """Run the TypeScript SDK `client` against `server_cmd` (stdio; the server inherits this
    process's environment plus `env`) or against a streamable-HTTP `url`.

    Returns {"line", "protocol", "tools", "listed_bytes", "results": [{"name", "ok", "isError",
    "errorCode", "error", "errorType", "structuredContent", "text", "meta"}], "stderr"} (+
    "tool_list" with `dump_tools`). `headers` go with every HTTP request (`url` only). Raises
    NodeToolsError when the client could not connect or list the tools, or negotiated another
    revision than the one asked for."""
    npm_install()
    if (server_cmd is None) == (url is None):
        raise ValueError("give exactly one of server_cmd and url")
    with tempfile.TemporaryDirectory(prefix="ts-client-") as tmp:
        args = [require("node"), str(CLIENT), *client.args(), "--timeout", str(request_timeout_ms)]
        if list_only:
            args.append("--list-only")
        else:
            calls_file = Path(tmp) / "calls.json"
            calls_file.write_text(json.dumps(calls or []))
            args += ["--calls", str(calls_file)]
        if dump_tools:
            args.append("--dump-tools")
        if compile_schemas:
            args.append("--compile-schemas")
        for name, value in (headers or {}).items():
            args += ["--header", f"{name}: {value}"]
        if elicit is not None:  # answer every elicitation/create with this action
            args += ["--elicit", elicit]
        args += ["--url", url] if url is not None else ["--stdio", "--", *server_cmd]
        try:
            proc = subprocess.run(
                args,
                cwd=NODE_DIR,
                env={**os.environ, **(env or {})},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise NodeToolsError(
                f"the TypeScript client did not finish within {timeout:g}s; stderr:\n{(exc.stderr or b'')[-3000:]!r}"
            ) from exc
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NodeToolsError(f"the TypeScript client exited with {proc.returncode}; stderr:\n{proc.stderr[-4000:]}")
    try:
        out = json.loads(proc.stdout)
    except ValueError as exc:
        raise NodeToolsError(f"the TypeScript client printed no JSON document: {proc.stdout[:2000]!r}") from exc
    out["stderr"] = proc.stderr
    if (out.get("line"), out.get("protocol")) != (client.line, client.protocol):
        raise NodeToolsError(f"asked for {client}, the client ran line {out.get('line')} on {out.get('protocol')}")
    return out


def ajv_accepts(cases: list[tuple[dict[str, Any], Any]], line: int = 1) -> list[bool]:
    """For each (schema, value): does the TypeScript SDK's own validator of `line` (AJV with
    ajv-formats, as its Client checks structuredContent) accept the value?"""
    with tempfile.TemporaryDirectory(prefix="typed-mcp-ajv-") as temp:
        path = Path(temp) / "cases.json"
        path.write_text(json.dumps([{"schema": schema, "value": value} for schema, value in cases]))
        return node_script("ajv_check.mjs", str(line), str(path))


def node_script(name: str, *args: str, timeout: float = 120) -> Any:
    """Run tests/node/NAME with ARGS (in tests/node, its packages installed); the JSON it prints."""
    npm_install()
    done = subprocess.run(
        [require("node"), str(NODE_DIR / name), *args], cwd=NODE_DIR, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise NodeToolsError(f"{name} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


# ---------------------------------------------------------------------------------------------
# Prism


class PrismURL(str):
    """Prism's base URL (a str), carrying the mock's captured log."""

    log_lines: list[str]
    process: subprocess.Popen[str]
    hidden: list[range]  # lines of `settle` marker requests, not part of the test's traffic

    def log(self) -> str:
        lines = list(self.log_lines)
        return "\n".join(line for i, line in enumerate(lines) if not any(i in r for r in self.hidden))

    def settle(self, timeout: float = 30.0) -> None:
        """Wait until Prism has logged every request it received so far. Its log is written in
        order, so once the answer to a marker request is logged, every earlier line is there too.
        Reading the log without this can miss the last request's violations: a test that passes
        for the wrong reason."""
        import httpx

        marker = f"/typed-mcp-settle-{uuid.uuid4().hex}"
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(self + marker, timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            lines = list(self.log_lines)
            start = next((i for i, line in enumerate(lines) if marker in line), None)
            end = (
                next((i for i in range(start, len(lines)) if _TERMINATED.search(lines[i])), None)
                if start is not None
                else None
            )
            if end is not None:
                self.hidden.append(range(start, end + 1))
                return
            if time.monotonic() > deadline:
                raise NodeToolsError(f"Prism did not log the marker request within {timeout:g}s:\n{self.log()[-3000:]}")
            time.sleep(0.05)

    def violations(self, where: str = "request") -> list[dict[str, str]]:
        return prism_violations(self.log(), where)

    def requests(self) -> list[tuple[str, str]]:
        return prism_requests(self.log())

    def errors(self) -> list[str]:
        return prism_errors(self.log())


@contextlib.contextmanager
def prism(
    spec_path: str | Path,
    port: int | None = None,
    dynamic: bool = False,
    *,
    seed: str | None = None,
    startup_timeout: float = 60.0,
) -> Iterator[PrismURL]:
    """`prism mock SPEC --host 127.0.0.1 --port PORT [-d]`; yields its base URL (a PrismURL whose
    `log_lines` fill up while it runs) once it accepts connections; terminates it on exit."""
    npm_install()
    port = port or free_port()
    args = [str(PRISM_BIN), "mock", str(spec_path), "--host", "127.0.0.1", "--port", str(port)]
    if dynamic:
        args.append("-d")
    if seed is not None:
        args += ["--seed", seed]
    # Big specs (Cloudflare's 14 MB) outgrow node's default heap once Prism has dereferenced them.
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
        "NODE_OPTIONS": (os.environ.get("NODE_OPTIONS", "") + " --max-old-space-size=8192").strip(),
    }
    proc = subprocess.Popen(
        args,
        cwd=NODE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    url = PrismURL(f"http://127.0.0.1:{port}")
    url.process = proc
    url.log_lines = []
    url.hidden = []
    listening = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            url.log_lines.append(line.rstrip("\n"))
            if "Prism is listening on" in line:
                listening.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                reader.join(5)
                raise NodeToolsError(f"prism exited with {proc.returncode} before listening:\n{url.log()[-4000:]}")
            if time.monotonic() > deadline:
                raise NodeToolsError(f"prism did not listen on {url} within {startup_timeout:g}s:\n{url.log()[-4000:]}")
            if listening.is_set():
                # A bare TCP connect: an HTTP probe would be a request of its own in the log.
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            time.sleep(0.1)
        yield url
    finally:
        time.sleep(0.3)  # let the last request's log lines arrive
        stop(proc)
        reader.join(5)


# Prism (5.x) logs each violation it finds as one line, at the violation's severity, e.g.
#   [2:54:20 AM] ›     [VALIDATOR] ✖  error     Violation: request.query.limit Request query parameter limit must be integer
#   [2:54:20 AM] ›     [VALIDATOR] ✖  error     Violation: request.body Request body must have required property 'name'
# (prism-http-server: `Violation: ${location.join('.')} ${message}`, location starting with
# "request" or "response"; a property name may hold spaces, as Cloudflare's multipart part
# `<any part name>` does, so the message starts at "Request"/"Response", or else after the first
# word: `Violation: request Supported content types: ...`). When no response in the spec describes
# the failure, Prism answers 422 itself and logs the violations without the prefix and without a
# location:
#   [6:10:21 AM] ›     [VALIDATOR] ✖  error     Request path parameter sid must match pattern "^AC[0-9a-fA-F]{32}$"
# Those count too (location: "request" or "response", from the message); the summary lines
# ("Request did not pass the validation rules", at warning level) do not.
_VIOLATION = re.compile(
    r"\[VALIDATOR\]\s+\S+\s+(?P<severity>error|warning|info)\s+"
    r"(?:Violation: (?P<location>\S*(?: \S+)*?(?= (?:Request|Response) )|\S*) (?P<message>.*)|(?P<bare>(?P<side>Request|Response) (?!did not pass the validation rules).*))$"
)
REQUEST_LINE = re.compile(r"\[HTTP SERVER\] (?P<method>[a-z]+) (?P<path>\S+) \S+\s+info\s+Request received")
_TERMINATED = re.compile(r"Request terminated with error: (?P<message>.*)$")


def prism_violations(log: str, where: str = "request") -> list[dict[str, str]]:
    """The violations Prism logged for requests (`where="request"`) or for its own responses
    (`"response"`): [{"severity", "location", "message", "line"}], in log order."""
    found = []
    lines = log.splitlines()
    matches = [_VIOLATION.search(line) for line in lines]
    received = ""  # the request each violation belongs to: the last one Prism logged as received
    requests = []
    for line in lines:
        request = REQUEST_LINE.search(line)
        received = f"{request['method'].upper()} {request['path']}" if request else received
        requests.append(received)
    prefixed = {(i, m["message"]) for i, m in enumerate(matches) if m and m["location"] is not None}
    for index, (line, match) in enumerate(zip(lines, matches, strict=True)):
        if not match:
            continue
        if match["location"] is None and any((j, match["bare"]) in prefixed for j in range(index - 8, index + 9)):
            continue  # the same violation, also logged with its location next to it
        location = match["location"] if match["location"] is not None else match["side"].lower()
        if location == where or location.startswith(where + "."):
            found.append(
                {
                    "severity": match["severity"],
                    "location": location,
                    "message": match["message"] or match["bare"],
                    "line": line,
                    "request": requests[index],
                }
            )
    return found


def prism_requests(log: str) -> list[tuple[str, str]]:
    """(METHOD, path) of every request Prism received (Prism logs the path without the query)."""
    return [(m["method"].upper(), m["path"]) for m in map(REQUEST_LINE.search, log.splitlines()) if m]


def prism_errors(log: str) -> list[str]:
    """Requests Prism could not answer from the spec at all (no such path or method, ...)."""
    return [m["message"] for m in map(_TERMINATED.search, log.splitlines()) if m]
