"""Processes: timed generation, stdio servers and their peak RSS, and the two clients that measure a
session (the MCP SDK's, and a bare JSON-RPC client that times the server alone)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import CALL_TIMEOUT_S, FASTMCP_PYTHON, FASTMCP_SERVER, LOGS, MAIN_PYTHON, MIB, TYPED_MCP, WORK


@dataclass
class Measured:
    returncode: int
    seconds: float
    peak_rss_kb: int  # max RSS of the command or of any process it waited for (GNU time %M)
    stdout: str
    stderr: str


def run_measured(cmd: list[str], env: dict[str, str] | None = None) -> Measured:
    """Run `cmd` (environment: this one's plus `env`), timed, with its peak RSS from GNU time
    (the corpus runner, `make corpus`, measures its children the same way)."""
    from harness.corpus import run_timed

    code, stdout, stderr, seconds, peak_mb = run_timed(cmd, env=env)
    return Measured(code, seconds, round(peak_mb * 1024), stdout, stderr)


CACHE_DIR = WORK / "cache"  # the benchmark's own generation cache, emptied at the start


def generate(spec: Path, out: Path, package: str, *, fresh: bool, cache: bool = False) -> Measured:
    """`typed-mcp generate` (into an emptied folder when `fresh`; with the benchmark's cache when
    `cache`), timed; raises on failure."""
    if fresh and out.exists():
        shutil.rmtree(out)
    cmd = [str(TYPED_MCP), "generate", str(spec), "--out", str(out), "--package-name", package, "--no-snapshot"]
    if not cache:
        cmd.append("--no-cache")
    result = run_measured(cmd, env={"TYPED_MCP_CACHE_DIR": str(CACHE_DIR)})
    if result.returncode != 0:
        raise RuntimeError(
            f"typed-mcp generate {spec.name} exited {result.returncode}: {result.stderr.strip()[-2000:]}"
        )
    return result


def read_vm(pid: int, key: str = "VmHWM") -> int:
    """A /proc/<pid>/status field in KiB (VmHWM: peak resident set size)."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


@dataclass
class ServerSpec:
    """How to start one stdio server."""

    label: str
    argv: list[str]
    env: dict[str, str]


def typed_mcp_server(package_dir: Path, upstream_url: str) -> ServerSpec:
    module = json.loads((package_dir / "typed-mcp.json").read_text())["module"]
    env = {**os.environ, "PYTHONPATH": str(package_dir / "src")}
    return ServerSpec("typed-mcp", [str(MAIN_PYTHON), "-m", module, "--base-url", upstream_url], env)


def fastmcp_server(spec: Path, upstream_url: str) -> ServerSpec:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return ServerSpec(
        "FastMCP", [str(FASTMCP_PYTHON), str(FASTMCP_SERVER), "--spec", str(spec), "--base-url", upstream_url], env
    )


def arguments_for(input_schema: dict[str, Any]) -> dict[str, Any]:
    """Valid arguments made from the inputSchema (the tests' own synthesizer); {} when it cannot."""
    from harness.arguments import synthesize_arguments

    try:
        return synthesize_arguments(input_schema)
    except (ValueError, KeyError, TypeError):
        return {}


@dataclass
class Session:
    """What one stdio session measured."""

    cold_s: float = math.nan
    tools: int = 0
    with_output_schema: int = 0
    payload_bytes: int = 0
    largest_page_bytes: int = 0
    pages: int = 0
    hwm_after_list_kb: int = 0
    warm_s: list[float] = field(default_factory=list)
    hwm_after_calls_kb: int = 0
    calls: int = 0
    call_errors: int = 0  # isError results
    call_exceptions: int = 0  # raised by the client (protocol error, timeout, invalid output)
    call_seconds: float = math.nan
    exception_samples: list[str] = field(default_factory=list)


async def list_all_tools(client: Any) -> tuple[list[Any], list[int]]:
    """Every tool, following next_cursor; also the compact JSON size of each page."""
    tools, sizes, cursor = [], [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        sizes.append(len(page.model_dump_json(by_alias=True, exclude_none=True).encode()))
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools, sizes


async def stdio_session(
    server: ServerSpec, *, warm_lists: int = 0, call_all: bool = False, call: tuple[str, ...] | list[str] = ()
) -> Session:
    """Spawn the server over stdio, list its tools (timed from the spawn), optionally more: warm
    listings, then a call to every tool (`call_all`) or to the tools named in `call`."""
    import anyio
    from mcp import Client, StdioServerParameters

    LOGS.mkdir(parents=True, exist_ok=True)
    stamp = f"{server.label.lower().replace('-', '')}-{os.getpid()}-{time.monotonic_ns()}"
    pidfile, errlog = LOGS / f"{stamp}.pid", LOGS / f"{stamp}.stderr"
    wrapper = 'echo $$ > "$1"; log="$2"; shift 2; exec "$@" 2>>"$log"'
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", wrapper, "sh", str(pidfile), str(errlog), *server.argv], env=server.env
    )
    result = Session()
    start = time.perf_counter()
    async with Client(params, cache=None, read_timeout_seconds=600) as client:
        tools, sizes = await list_all_tools(client)
        result.cold_s = time.perf_counter() - start
        pid = int(pidfile.read_text())
        result.hwm_after_list_kb = read_vm(pid)
        result.tools = len(tools)
        result.with_output_schema = sum(1 for tool in tools if tool.output_schema)
        result.payload_bytes = len(
            json.dumps(
                [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools], separators=(",", ":")
            ).encode()
        )
        result.largest_page_bytes, result.pages = max(sizes), len(sizes)
        for _ in range(warm_lists):
            t = time.perf_counter()
            await list_all_tools(client)
            result.warm_s.append(time.perf_counter() - t)
        chosen = tools if call_all else [tool for tool in tools if tool.name in call]
        if chosen:
            t = time.perf_counter()
            for tool in chosen:
                result.calls += 1
                try:
                    with anyio.fail_after(CALL_TIMEOUT_S):
                        reply = await client.call_tool(tool.name, arguments_for(tool.input_schema))
                    result.call_errors += bool(reply.is_error)
                except Exception as exc:  # counted, and a few kept for the report
                    result.call_exceptions += 1
                    if len(result.exception_samples) < 3:
                        first_line = (str(exc).strip().splitlines() or [""])[0][:160]
                        result.exception_samples.append(f"{tool.name}: {type(exc).__name__}: {first_line}")
            result.call_seconds = time.perf_counter() - t
            result.hwm_after_calls_kb = read_vm(pid)
    pidfile.unlink(missing_ok=True)
    return result


def session(server: ServerSpec, **kwargs: Any) -> Session:
    return asyncio.run(stdio_session(server, **kwargs))


@dataclass
class RawSession:
    """The same listing over bare JSON-RPC lines: the server's own time and its exact wire bytes.
    Times run to the last byte of each response; the client's JSON parsing is not counted."""

    cold_s: float = math.nan  # spawn -> last byte of the last page
    warm_s: list[float] = field(default_factory=list)  # one full listing (all pages)
    request_s: list[float] = field(default_factory=list)  # one tools/list request (one page)
    page_bytes: list[int] = field(default_factory=list)
    tools: int = 0  # tools listed in the cold listing


async def raw_stdio_session(server: ServerSpec, warm_lists: int) -> RawSession:
    """Spawn the server, `initialize` (handshake protocol 2025-06-18), then tools/list (all pages),
    each request timed from its write to the last byte of its response line."""
    LOGS.mkdir(parents=True, exist_ok=True)
    errlog = LOGS / f"raw-{server.label.lower().replace('-', '')}-{os.getpid()}-{time.monotonic_ns()}.stderr"
    result = RawSession()
    start = time.perf_counter()
    parsing = 0.0  # the client's own JSON parsing, taken out of the cold start
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        'log="$1"; shift; exec "$@" 2>>"$log"',
        "sh",
        str(errlog),
        *server.argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=server.env,
        limit=512 * MIB,
    )
    assert proc.stdin is not None and proc.stdout is not None
    next_id = 0

    async def request(method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int, float]:
        nonlocal next_id, parsing
        next_id += 1
        sent = time.perf_counter()
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}).encode() + b"\n"
        )
        await proc.stdin.drain()
        while True:
            line = await asyncio.wait_for(proc.stdout.readline(), 600)
            received = time.perf_counter()
            if not line:
                raise RuntimeError(f"{server.label} closed stdout during {method} (see {errlog})")
            message = json.loads(line)
            parsing += time.perf_counter() - received
            if message.get("id") == next_id:
                if "error" in message:
                    raise RuntimeError(f"{server.label} {method}: {message['error']}")
                return message["result"], len(line.rstrip(b"\n")), received - sent

    async def list_all() -> tuple[list[int], list[float]]:
        sizes, latencies, cursor = [], [], None
        result.tools = 0
        while True:
            page, size, latency = await request("tools/list", {"cursor": cursor} if cursor else {})
            sizes.append(size)
            latencies.append(latency)
            result.tools += len(page.get("tools") or [])
            cursor = page.get("nextCursor")
            if not cursor:
                return sizes, latencies

    try:
        await request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        result.page_bytes, _ = await list_all()
        result.cold_s = time.perf_counter() - start - parsing
        for _ in range(warm_lists):
            _, latencies = await list_all()
            result.warm_s.append(sum(latencies))
            result.request_s.extend(latencies)
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
    return result


def raw_session(server: ServerSpec, warm_lists: int = 0) -> RawSession:
    return asyncio.run(raw_stdio_session(server, warm_lists))
