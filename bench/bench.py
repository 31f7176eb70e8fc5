"""Benchmark: the MCP server typed-mcp generates vs FastMCP's `FastMCP.from_openapi`, on one OpenAPI spec.

    python bench/bench.py [--spec PATH] [--runs N] [--markdown OUT.md]

Default spec: the GitHub REST API document in `<repo>/../shared/corpus/github__api.github.com.json`.
FastMCP runs from the benchmark's own venv, `bench/.venv-fastmcp` (created here, `fastmcp` pinned to
FASTMCP_VERSION); typed-mcp and the MCP SDK client run from the repository's `.venv` (the script
re-executes itself with that interpreter when started with another one). Generated packages and
logs go to `bench/.work/`.

Measurements (every "median" is over --runs runs unless said otherwise):

1. cold start: spawning the stdio server -> the last byte of the last tools/list page, with a bare
   JSON-RPC client (the server's time; the client's JSON parsing is not counted), and the same
   through the MCP Python SDK `Client(StdioServerParameters(...))`, its parsing included;
2. warm tools/list latency per request (one page) and per complete listing (median and p95 over
   WARM_LISTS listings on one session), bare and through the SDK client, and the size of the
   tools/list result (compact JSON of all tools; exact wire bytes per page);
3. peak RSS (VmHWM from /proc/<pid>/status of the server process) after listing, and after calling
   every tool once with arguments synthesized from its inputSchema against a local upstream
   answering 200 `{}`;
4. in-process first-call latency (nothing imported beforehand but the server) and per-call overhead
   of one argument-less GET tool vs a direct HTTP GET to the same upstream (`bench/inproc_calls.py`,
   run with each server's own venv);
5. `typed-mcp generate` time and peak RSS on the spec: fresh, regenerating an unchanged folder, and
   regenerating with the generation cache of the previous run;
6. scaling on synthetic OpenAPI 3.0 specs (100, 1,000, 5,000 operations): generation time and cold start.

Servers are spawned through `/bin/sh -c 'echo $$ > PIDFILE; exec ...'`, so the recorded pid is
the server's own (exec keeps it) and its stderr goes to a log file under `bench/.work/logs/`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(
    0, str(REPO / "tests")
)  # the test harness (`harness`): the demo API, argument synthesis, timed children
WORK = BENCH / ".work"
LOGS = WORK / "logs"
CORPUS = REPO.parent / "shared" / "corpus"
DEFAULT_SPEC = CORPUS / "github__api.github.com.json"
MAIN_PYTHON = REPO / ".venv" / "bin" / "python"
TYPED_MCP = REPO / ".venv" / "bin" / "typed-mcp"
FASTMCP_VENV = BENCH / ".venv-fastmcp"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
FASTMCP_VERSION = "4.2.3"  # latest 4.x on PyPI when this was written (`pip index versions fastmcp`)
# The generation peer named by the issue: a client generator (not MCP), timed on the same spec in the
# same runs, interleaved with typed-mcp's, so both see the same machine (its load varies by 20%).
OPC_VENV = BENCH / ".venv-openapi-python-client"
OPC_VERSION = "0.29.1"  # latest on PyPI when this was written
FASTMCP_SERVER = BENCH / "fastmcp_server.py"
INPROC = BENCH / "inproc_calls.py"

WARM_LISTS = 20
INPROC_CALLS = 500
CALL_TIMEOUT_S = 60.0
SCALING_SIZES = (100, 1000, 5000)
# Called in-process without arguments: an operation whose response model `{}` satisfies.
DEFAULT_CALL_OPERATION = "GET /emojis"

MIB = 1024 * 1024


def _reexec_with_repo_venv() -> None:
    """The benchmark needs the MCP SDK and typed-mcp from the repository's .venv."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        if MAIN_PYTHON.exists() and Path(sys.prefix).resolve() != MAIN_PYTHON.parent.parent.resolve():
            os.execv(str(MAIN_PYTHON), [str(MAIN_PYTHON), *sys.argv])
        raise


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


# --------------------------------------------------------------------------------------------
# Environment: FastMCP's own venv, the local upstream, machine description
# --------------------------------------------------------------------------------------------


def ensure_venv(venv: Path, package: str, version: str) -> str:
    """Create `venv` with package==version (only when missing or different); return the version."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip() == version:
            return version
    else:
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log(f"pip install {package}=={version} into {venv}")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{package}=={version}"],
        check=True,
    )
    return subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()


def machine_info() -> dict[str, str]:
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    import importlib.metadata as metadata

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "typed-mcp": metadata.version("typed-mcp"),
        "mcp SDK": metadata.version("mcp"),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# --------------------------------------------------------------------------------------------
# Processes: timed generation, stdio servers, peak RSS
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------------


GENERATION_LABELS = {
    "fresh": "typed-mcp generate (fresh folder, no cache)",
    "regenerate": "regenerate, nothing changed (no cache)",
    "regenerate cached": "regenerate, nothing changed (cache of the previous run)",
    "peer": "openapi-python-client generate (a client, not MCP; omits responses it cannot type)",
}


def generate_peer(spec: Path) -> Measured:
    """openapi-python-client on the same spec (its default post-hooks: ruff check --fix, ruff format), timed."""
    out = WORK / "openapi-python-client-out"
    shutil.rmtree(out, ignore_errors=True)
    tool = OPC_VENV / "bin" / "openapi-python-client"
    result = run_measured(
        [str(tool), "generate", "--path", str(spec), "--output-path", str(out), "--meta", "none"],
        env={"PATH": f"{OPC_VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    if result.returncode != 0 or not out.is_dir():
        raise RuntimeError(f"openapi-python-client exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    return result


def measure_generation(spec: Path, out: Path, package: str, runs: int) -> dict[str, Any]:
    """5. Fresh generation, and regeneration of an unchanged folder without and with the cache."""
    results: dict[str, list[Measured]] = {name: [] for name in GENERATION_LABELS}
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    for run in range(runs):
        log(f"generate {spec.name} (run {run + 1}/{runs})")
        results["fresh"].append(generate(spec, out, package, fresh=True))
        log(f"regenerate {spec.name} unchanged (run {run + 1}/{runs})")
        results["regenerate"].append(generate(spec, out, package, fresh=False))
        if run == 0:
            generate(spec, out, package, fresh=False, cache=True)  # fills the cache, not timed
        log(f"regenerate {spec.name} unchanged, cached (run {run + 1}/{runs})")
        results["regenerate cached"].append(generate(spec, out, package, fresh=False, cache=True))
        log(f"openapi-python-client generate {spec.name} (run {run + 1}/{runs})")
        results["peer"].append(generate_peer(spec))
    summary = {
        name: {
            "seconds": median([m.seconds for m in ms]),
            "peak_rss_kb": median([m.peak_rss_kb for m in ms]),
            "samples_s": [round(m.seconds, 2) for m in ms],
        }
        for name, ms in results.items()
    }
    summary["summary_line"] = (
        results["fresh"][-1].stdout.strip().splitlines()[-1:] or results["fresh"][-1].stderr.strip().splitlines()[-1:]
    )
    return summary


def measure_stdio(typed: ServerSpec, fast: ServerSpec, runs: int) -> dict[str, Any]:
    """1-3. Cold starts (interleaved), then one session each with warm lists and a call to every tool."""
    cold: dict[str, list[Session]] = {typed.label: [], fast.label: []}
    for run in range(runs):
        for server in (typed, fast):
            log(f"cold start {server.label} (run {run + 1}/{runs})")
            cold[server.label].append(session(server))
    raw: dict[str, list[RawSession]] = {typed.label: [], fast.label: []}
    for run in range(runs):
        for server in (typed, fast):
            log(f"raw JSON-RPC cold start {server.label} (run {run + 1}/{runs})")
            raw[server.label].append(raw_session(server, warm_lists=WARM_LISTS if run == runs - 1 else 0))
    full: dict[str, Session] = {}
    for server in (typed, fast):
        log(f"{server.label}: {WARM_LISTS} warm tools/list + call every tool")
        full[server.label] = session(server, warm_lists=WARM_LISTS, call_all=True)
    return {"cold": cold, "raw": raw, "full": full}


def measure_inproc(package_dir: Path, spec: Path, upstream_url: str, operation: str, runs: int) -> dict[str, Any]:
    """4. First call and per-call overhead in-process, each server in its own venv (median over runs)."""
    module = json.loads((package_dir / "typed-mcp.json").read_text())["module"]
    commands = {
        "typed-mcp": [
            str(MAIN_PYTHON),
            str(INPROC),
            "typed-mcp",
            "--src",
            str(package_dir / "src"),
            "--module",
            module,
        ],
        "FastMCP": [str(FASTMCP_PYTHON), str(INPROC), "fastmcp", "--spec", str(spec)],
    }
    results: dict[str, Any] = {}
    for label, cmd in commands.items():
        samples, failure = [], None
        for run in range(runs):
            log(f"in-process calls {label} (run {run + 1}/{runs})")
            done = subprocess.run(
                [*cmd, "--operation", operation, "--base-url", upstream_url, "--calls", str(INPROC_CALLS)],
                capture_output=True,
                text=True,
                env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            )
            if done.returncode != 0:
                failure = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
                break
            samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if failure or not samples:
            results[label] = {"error": failure}
            continue
        pick = lambda key, samples=samples: median([s[key] for s in samples])  # noqa: E731
        results[label] = {
            "tool": samples[0]["tool"],
            "first_call_s": pick("first_call_s"),
            "first_is_error": any(s["first_is_error"] for s in samples),
            "first_text": samples[0]["first_text"],
            "overhead_median_s": median([s["tool_median_s"] - s["direct_median_s"] for s in samples]),
            "overhead_p99_s": median([s["tool_p99_s"] - s["direct_p99_s"] for s in samples]),
            "tool_median_s": pick("tool_median_s"),
            "tool_p99_s": pick("tool_p99_s"),
            "direct_median_s": pick("direct_median_s"),
            "direct_p99_s": pick("direct_p99_s"),
            "errors": sum(s["errors"] for s in samples),
            "build_s": pick("build_s"),
        }
    return results


def synthetic_spec(operations: int) -> dict[str, Any]:
    """An OpenAPI 3.0 document with `operations` GET operations, each with a path parameter, a query
    parameter and its own small object response schema. Deterministic."""
    paths, schemas = {}, {}
    for i in range(operations):
        schemas[f"Item{i}"] = {
            "type": "object",
            "required": ["id", "name"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string", "description": f"name of item {i}"},
                "count": {"type": "integer", "minimum": 0},
                "active": {"type": "boolean"},
            },
        }
        paths[f"/resources{i}/{{item_id}}"] = {
            "get": {
                "operationId": f"getResource{i}",
                "summary": f"Get resource {i}",
                "parameters": [
                    {"name": "item_id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/Item{i}"}}},
                    },
                },
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": f"Synthetic {operations}", "version": "1.0.0"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def measure_scaling(sizes: tuple[int, ...], upstream_url: str, runs: int) -> list[dict[str, Any]]:
    """6. Generation time and cold start (typed-mcp, and FastMCP for reference) per synthetic size."""
    rows = []
    for size in sizes:
        spec = WORK / "specs" / f"synthetic-{size}.json"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(json.dumps(synthetic_spec(size), indent=1))
        out = WORK / f"synthetic-{size}-mcp"
        gens, typed_cold, fast_cold = [], [], []
        for run in range(runs):
            log(f"synthetic {size}: generate (run {run + 1}/{runs})")
            gens.append(generate(spec, out, f"synthetic-{size}-mcp", fresh=True))
            log(f"synthetic {size}: cold starts (run {run + 1}/{runs})")
            typed_cold.append(session(typed_mcp_server(out, upstream_url)).cold_s)
            fast_cold.append(session(fastmcp_server(spec, upstream_url)).cold_s)
        rows.append(
            {
                "operations": size,
                "generate_s": median([g.seconds for g in gens]),
                "generate_peak_rss_kb": median([g.peak_rss_kb for g in gens]),
                "typed_cold_s": median(typed_cold),
                "fastmcp_cold_s": median(fast_cold),
            }
        )
    return rows


def growth(rows: list[dict[str, Any]], key: str) -> str:
    """Log-log slope between consecutive sizes: ~1 is linear, <1 sub-linear (fixed costs), >1 super-linear."""
    slopes = [
        math.log(b[key] / a[key]) / math.log(b["operations"] / a["operations"])
        for a, b in zip(rows, rows[1:], strict=False)
        if a[key] > 0 and b[key] > 0
    ]
    if not slopes:
        return "n/a"
    verdict = "about linear or better" if slopes[-1] <= 1.2 else "super-linear"
    return f"slopes {', '.join(f'{s:.2f}' for s in slopes)} -> {verdict}"


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def fmt_s(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value * 1000:.1f} ms" if abs(value) < 1 else f"{value:.2f} s"


def fmt_bytes(value: float) -> str:
    return "n/a" if not value else f"{value / MIB:.2f} MiB"


def fmt_kb(value: float) -> str:
    return "n/a" if not value else f"{value / 1024:.0f} MiB"


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return "n/a"
    return f"{a / b:.2f}x"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("yes" if ok else "NO")


Row = tuple[str, str, str, str, str, str]


def comparison_rows(stdio: dict[str, Any], inproc: dict[str, Any]) -> list[Row]:
    """metric | typed-mcp | FastMCP | ratio typed/FastMCP | target | met."""
    typed_cold, fast_cold = stdio["cold"]["typed-mcp"], stdio["cold"]["FastMCP"]
    typed_full, fast_full = stdio["full"]["typed-mcp"], stdio["full"]["FastMCP"]
    rows: list[Row] = []

    def add(metric: str, a: float, b: float, fmt: Callable[[float], str], target: str, ok: bool | None) -> None:
        rows.append((metric, fmt(a), fmt(b), ratio(a, b), target, verdict(ok)))

    typed_raw, fast_raw = stdio["raw"]["typed-mcp"], stdio["raw"]["FastMCP"]
    tc, fc = median([s.cold_s for s in typed_raw]), median([s.cold_s for s in fast_raw])
    add("cold start -> complete tools/list, server time (median)", tc, fc, fmt_s, "<= 0.2x FastMCP", tc <= fc / 5)
    tc, fc = median([s.cold_s for s in typed_cold]), median([s.cold_s for s in fast_cold])
    add("  the same through the Python SDK client (its parsing included)", tc, fc, fmt_s, "", None)
    rows.append(
        (
            "tools listed (with outputSchema)",
            f"{typed_full.tools} ({typed_full.with_output_schema})",
            f"{fast_full.tools} ({fast_full.with_output_schema})",
            "",
            "",
            "",
        )
    )
    tr, fr = typed_raw[-1].request_s, fast_raw[-1].request_s
    add(
        f"warm tools/list request, server time, median of {len(tr)} / {len(fr)}",
        median(tr),
        median(fr),
        fmt_s,
        "< 50 ms",
        median(tr) < 0.050,
    )
    add("  warm tools/list request, server time, p95", quantile(tr, 0.95), quantile(fr, 0.95), fmt_s, "", None)
    tw, fw = median(typed_raw[-1].warm_s), median(fast_raw[-1].warm_s)
    add(f"  warm complete listing (all pages), server time, median of {WARM_LISTS}", tw, fw, fmt_s, "", None)
    tw, fw = median(typed_full.warm_s), median(fast_full.warm_s)
    add(f"  warm complete listing through the Python SDK client, median of {WARM_LISTS}", tw, fw, fmt_s, "", None)
    add(
        "tools/list payload (all tools, compact JSON)",
        typed_full.payload_bytes,
        fast_full.payload_bytes,
        fmt_bytes,
        "<= FastMCP",
        typed_full.payload_bytes <= fast_full.payload_bytes,
    )
    ts, fs = sum(typed_raw[-1].page_bytes), sum(fast_raw[-1].page_bytes)
    add("  tools/list bytes on the wire (all pages)", ts, fs, fmt_bytes, "", None)
    ts, fs = max(typed_raw[-1].page_bytes), max(fast_raw[-1].page_bytes)
    add(
        "largest tools/list message on the wire "
        f"({len(typed_raw[-1].page_bytes)} / {len(fast_raw[-1].page_bytes)} pages)",
        ts,
        fs,
        fmt_bytes,
        "<= 10 MiB",
        ts <= 10 * MIB,
    )
    th, fh = median([s.hwm_after_list_kb for s in typed_cold]), median([s.hwm_after_list_kb for s in fast_cold])
    add("peak RSS after tools/list (median)", th, fh, fmt_kb, "< 0.5x FastMCP", th < fh / 2)
    th, fh = typed_full.hwm_after_calls_kb, fast_full.hwm_after_calls_kb
    add("peak RSS after calling every tool", th, fh, fmt_kb, "< 0.5x FastMCP", th < fh / 2)
    rows.append(
        (
            "every tool called once: isError / raised",
            f"{typed_full.call_errors} / {typed_full.call_exceptions} of {typed_full.calls}",
            f"{fast_full.call_errors} / {fast_full.call_exceptions} of {fast_full.calls}",
            "",
            "",
            "",
        )
    )
    add("  time to call every tool once", typed_full.call_seconds, fast_full.call_seconds, fmt_s, "", None)
    ti, fi = inproc.get("typed-mcp", {}), inproc.get("FastMCP", {})
    get = lambda d, k: d.get(k, math.nan)  # noqa: E731
    add(
        "in-process first call (cold)",
        get(ti, "first_call_s"),
        get(fi, "first_call_s"),
        fmt_s,
        "< 300 ms",
        get(ti, "first_call_s") < 0.3 if "first_call_s" in ti else None,
    )
    add(
        f"per-call overhead vs direct GET, median ({INPROC_CALLS} calls)",
        get(ti, "overhead_median_s"),
        get(fi, "overhead_median_s"),
        fmt_s,
        "< 1 ms",
        get(ti, "overhead_median_s") < 0.001 if "overhead_median_s" in ti else None,
    )
    add("per-call overhead vs direct GET, p99", get(ti, "overhead_p99_s"), get(fi, "overhead_p99_s"), fmt_s, "", None)
    add("  tool call latency, median", get(ti, "tool_median_s"), get(fi, "tool_median_s"), fmt_s, "", None)
    add("  direct GET latency, median", get(ti, "direct_median_s"), get(fi, "direct_median_s"), fmt_s, "", None)
    return rows


def generation_rows(gen: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [
        (
            label,
            fmt_s(gen[name]["seconds"]),
            fmt_kb(gen[name]["peak_rss_kb"]),
            ", ".join(f"{s:.2f}" for s in gen[name]["samples_s"]),
        )
        for name, label in GENERATION_LABELS.items()
    ]


def scaling_rows(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    out = [
        (
            f"{r['operations']:,}",
            fmt_s(r["generate_s"]),
            f"{r['generate_s'] / r['operations'] * 1000:.1f} ms",
            fmt_kb(r["generate_peak_rss_kb"]),
            fmt_s(r["typed_cold_s"]),
            fmt_s(r["fastmcp_cold_s"]),
            ratio(r["typed_cold_s"], r["fastmcp_cold_s"]),
        )
        for r in rows
    ]
    return out


SCALING_HEADER = (
    "operations",
    "generate",
    "per op",
    "generate peak RSS",
    "typed-mcp cold start",
    "FastMCP cold start",
    "ratio",
)
COMPARISON_HEADER = ("metric", "typed-mcp", "FastMCP", "typed/FastMCP", "target", "met")
GENERATION_HEADER = ("typed-mcp generate", "median time", "peak RSS", "samples (s)")


def print_tables(
    title: str, tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]], notes: list[str]
) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None
    if Console is not None:
        console = Console(width=200)
        console.print(f"[bold]{title}[/bold]")
        for caption, header, rows in tables:
            table = Table(title=caption, title_justify="left")
            for i, column in enumerate(header):
                table.add_column(column, justify="left" if i == 0 else "right")
            for row in rows:
                table.add_row(*row)
            console.print(table)
        for note in notes:
            console.print(note, markup=False)
        return
    print(title)
    for caption, header, rows in tables:
        widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]
        print(f"\n{caption}")
        for row in (header, *rows):
            print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    for note in notes:
        print(note)


def markdown(
    title: str,
    machine: dict[str, str],
    tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]],
    notes: list[str],
) -> str:
    lines = [f"# {title}", "", "| machine | |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in machine.items()]
    for caption, header, rows in tables:
        lines += [
            "",
            f"## {caption}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|",
        ]
        lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    lines += ["", "## Notes", ""] + [f"- {note}" for note in notes] + [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spec", type=Path, default=DEFAULT_SPEC, help=f"OpenAPI JSON document (default {DEFAULT_SPEC})"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (medians are reported)")
    parser.add_argument("--markdown", type=Path, help="also write the tables as Markdown here")
    parser.add_argument(
        "--operation",
        default=DEFAULT_CALL_OPERATION,
        help='argument-less GET called in-process (default "GET /emojis")',
    )
    parser.add_argument(
        "--scaling-sizes", default=",".join(map(str, SCALING_SIZES)), help="synthetic spec sizes; empty to skip"
    )
    parser.add_argument("--json", type=Path, help="also write the raw results as JSON here")
    parser.add_argument(
        "--generation-only", action="store_true", help="only the generation table (typed-mcp and openapi-python-client)"
    )
    args = parser.parse_args(argv)

    spec = args.spec.resolve()
    WORK.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    fastmcp_version = ensure_venv(FASTMCP_VENV, "fastmcp", FASTMCP_VERSION)
    machine["openapi-python-client"] = ensure_venv(OPC_VENV, "openapi-python-client", OPC_VERSION)
    machine["FastMCP"] = fastmcp_version
    package = re.sub(r"[^a-z0-9]+", "-", spec.stem.lower()).strip("-")[:40].strip("-") + "-mcp"
    package_dir = WORK / package
    started = time.monotonic()

    gen = measure_generation(spec, package_dir, package, args.runs)
    generation_table = (
        f"Generation of {spec.name} ({gen['summary_line'][0] if gen['summary_line'] else ''})",
        GENERATION_HEADER,
        generation_rows(gen),
    )
    import payments  # bench/payments.py: Stripe's shape, where closures are the whole API

    payments_table = (
        "Generation and serving of the synthetic payments API",
        payments.HEADER,
        payments.rows(payments.measure(args.runs)),
    )
    if args.generation_only:
        machine["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        title = f"typed-mcp generate vs openapi-python-client on {spec.name} (medians of {args.runs} runs)"
        print_tables(title, [generation_table, payments_table], [])
        if args.markdown:
            args.markdown.write_text(markdown(title, machine, [generation_table, payments_table], []), encoding="utf-8")
        return 0
    from harness.demo.process import HttpServer, Reply

    with HttpServer() as upstream:
        upstream.default = Reply(200, b"{}")  # every request: 200 with an (empty) JSON object
        stdio = measure_stdio(
            typed_mcp_server(package_dir, upstream.url), fastmcp_server(spec, upstream.url), args.runs
        )
        inproc = measure_inproc(package_dir, spec, upstream.url, args.operation, args.runs)
        sizes = tuple(int(s) for s in args.scaling_sizes.split(",") if s.strip())
        scaling = measure_scaling(sizes, upstream.url, args.runs) if sizes else []
    machine["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    machine["benchmark wall time"] = f"{(time.monotonic() - started) / 60:.1f} min"

    title = f"typed-mcp vs FastMCP {fastmcp_version} from_openapi on {spec.name} (medians of {args.runs} runs)"
    tables = [
        (
            "Servers (stdio, MCP Python SDK client; in-process rows via Client(server))",
            COMPARISON_HEADER,
            comparison_rows(stdio, inproc),
        ),
        generation_table,
        payments_table,
    ]
    if scaling:
        tables.append(("Scaling on synthetic OpenAPI 3.0 specs", SCALING_HEADER, scaling_rows(scaling)))
    notes = [
        f"machine: {machine['nproc']} cores, {machine['cpu']}, {machine['memory']}, Python {machine['python']}; "
        f"load average {machine['load average at start']} (start) / {machine['load average at end']} (end)"
    ]
    for label in ("typed-mcp", "FastMCP"):
        full = stdio["full"][label]
        if full.exception_samples:
            notes.append(f"{label}: sample exceptions while calling every tool: " + " | ".join(full.exception_samples))
        info = inproc.get(label, {})
        if "error" in info:
            notes.append(f"{label}: in-process measurement failed: {info['error']}")
        elif info:
            notes.append(
                f"{label}: in-process tool {info['tool']!r} ({args.operation}); "
                f"first reply isError={info['first_is_error']}, "
                f"errors in timed calls: {info['errors']}; server build in-process {fmt_s(info['build_s'])}"
            )
    if scaling:
        notes.append(f"scaling, typed-mcp generate: {growth(scaling, 'generate_s')}")
        notes.append(f"scaling, typed-mcp cold start: {growth(scaling, 'typed_cold_s')}")
        notes.append(f"scaling, FastMCP cold start: {growth(scaling, 'fastmcp_cold_s')}")
    notes.append(
        "server time = measured by a bare JSON-RPC client over stdio (protocol 2025-06-18), from writing a request to "
        "the last byte of its response, the client's own JSON parsing not counted; cold start = spawn of the server "
        "process until the last tools/list page has arrived (the scaling table: through the SDK Client, cache off); "
        "first call = in-process, the tool's name taken from the published catalog, nothing imported before; "
        "payload = compact JSON of all Tool objects as the client parsed them; peak RSS = VmHWM of the server process; "
        "overhead = median (p99) in-process tool-call latency minus median (p99) direct GET to the same upstream "
        "(httpx for typed-mcp, httpx2 for FastMCP, i.e. the client each server uses); generate peak RSS = GNU time %M "
        "(largest RSS of the CLI or of a process it waited for, e.g. its verify step)."
    )
    print_tables(title, tables, notes)
    if args.markdown:
        args.markdown.write_text(markdown(title, machine, tables, notes), encoding="utf-8")
        log(f"wrote {args.markdown}")
    if args.json:
        raw = {
            "machine": machine,
            "generation": gen,
            "inproc": inproc,
            "scaling": scaling,
            "stdio": {
                k: {label: ([vars(s) for s in v] if isinstance(v, list) else vars(v)) for label, v in val.items()}
                for k, val in stdio.items()
            },
        }
        args.json.write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    _reexec_with_repo_venv()
    sys.exit(main())
