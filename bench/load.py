"""Load, side by side: the committed demo package (`weather_mcp.asgi:create_app`) and FastMCP
`from_openapi` on the same spec (`bench/fastmcp_server.py:create_app`, from its own venv), each served
statelessly over streamable HTTP by uvicorn with 1 and then N worker processes, and the package's own
command line with `--workers N` (typed-mcp-cli: a socket per worker), in one run, against
one minimal fast upstream on 127.0.0.1 (`load_upstream.py`). CLIENTS concurrent MCP Python SDK
clients (`load_clients.py`, each its own session and connection, spread over client processes) list
the tools and make CALLS calls in all, in two mixes: `read` (every call `get_weather`, a GET) and
`write` (every call `create_report`, a POST whose station is unique to the call, counted at the
upstream: none lost, none applied twice).

Per row: errors, lost calls, what the upstream counted (reads, writes, writes seen twice), p50/p99
latency, throughput, the servers' CPU per call, and per worker its peak RSS, CPU seconds, the calls
it made (the upstream counts requests per connection; the harness maps each connection to the worker
that holds it, through /proc) and the client connections it accepted. Then the ratios of the two.

And the floor (`floor_server.py`): the SDK's low-level server with the two tools written by hand, no
checks, the least any server on this stack does for these calls. Each product's CPU per call above
the floor's is what it adds itself; the rest is the stack all three share.

    make load                      # = .venv/bin/python bench/load.py (LOAD_ARGS=... adds options)
    .venv/bin/python bench/load.py --workers 1,4 --clients 100 --calls 3000 --markdown bench/LOAD.md

`--raw-clients [VERSION]`: the clients are `load_clients.py --raw` (stateless JSON-RPC posted with
aiohttp, about a fifth of the SDK client's CPU a call), so that on a small machine what the load
generator takes limits the calls a second less; with `--pin` the calls a second are then what one
core of each server serves. `--raw-clients 2025-06-18`: requests as a 2025 revision's client sends
them (the TypeScript SDK 1.x and most hosts), which the SDK serves on its legacy path.

The sessions open over `--ramp` seconds: opened in one burst, they land on whichever worker wakes
first (asyncio accepts every pending connection at once), which measures the burst, not the server.

Linux only (workers, sockets, RSS and CPU come from /proc).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from bench_env import ensure_venv
from common import FASTMCP_VENV, FASTMCP_VERSION  # the peer as every benchmark pins it (and tests/ on sys.path)
from inproc_calls import quantile
from load_clients import RawSession  # the protocol revision its raw clients speak by default

from harness.demo.process import free_port, socket_inodes, stop, tcp_sockets, wait_http

BENCH = Path(__file__).resolve().parent
PACKAGE = BENCH.parent / "generated" / "weather-mcp"
SPEC = BENCH.parent / "specs" / "weather-api.json"
FASTMCP_PYTHON = FASTMCP_VENV / "bin" / "python"
# typed-mcp-cli: the package's own command line with `--workers N` (a socket per worker, SO_REUSEPORT);
# typed-mcp: its ASGI app under uvicorn's `--workers N` (one shared socket), as docs/hosting.md runs both.
# floor: the least a server on the same SDK does for these calls (`floor_server.py`), what both build on.
SERVERS = ("typed-mcp", "typed-mcp-cli", "FastMCP", "floor")
MIXES = {"read": 0.0, "write": 1.0}  # the fraction of calls that are writes
# `--pin`: the CPUs of the servers' workers and of the load (clients and upstream), when set.
PIN: dict[str, str] = {}
POLL_SECONDS = 0.25  # how often the worker sockets are read during a row
COLUMNS = (
    "server",
    "mix",
    "workers",
    "calls",
    "errors",
    "lost",
    "upstream reads / writes",
    "writes twice",
    "p50 ms",
    "p99 ms",
    "calls/s",
    "server CPU ms per call",
    "peak RSS per worker MiB",
    "CPU s per worker",
    "calls per worker",
    "connections per worker",
)


def server_command(name: str, port: int, workers: int, upstream: str, json_response: bool) -> tuple[list, dict]:
    """The documented command of each server, and its environment."""
    common = ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), "--no-access-log"]
    # info: each worker says when its application has started (`Ready` waits for every one).
    common += ["--log-level", "info"]
    if name in ("typed-mcp", "typed-mcp-cli"):  # the demo package, configured by its environment
        env = {"PYTHONPATH": str(PACKAGE / "src"), "WEATHER_MCP_BASE_URL": upstream}
        if json_response:
            env["WEATHER_MCP_JSON_RESPONSE"] = "1"
        if name == "typed-mcp-cli":  # uvicorn's access log stays on: the command line has no switch for it
            args = [sys.executable, "-m", "weather_mcp", "--transport", "streamable-http", "--stateless"]
            return [*args, "--port", str(port), "--workers", str(workers)], env
        args = [sys.executable, "-m", "uvicorn", "--factory", "weather_mcp.asgi:create_app"]
        args += ["--http", "weather_mcp._runtime.deadlines:DeadlineProtocol"]  # as docs/hosting.md runs it
        return args + common, env
    if name == "floor":
        args = [sys.executable, "-m", "uvicorn", "--app-dir", str(BENCH), "--factory", "floor_server:create_app"]
        env = {"LOAD_FLOOR_BASE_URL": upstream, "LOAD_FLOOR_JSON_RESPONSE": "1" if json_response else "0"}
        return args + common, env
    args = [str(FASTMCP_PYTHON), "-m", "uvicorn", "--app-dir", str(BENCH), "--factory", "fastmcp_server:create_app"]
    env = {"FASTMCP_LOAD_SPEC": str(SPEC), "FASTMCP_LOAD_BASE_URL": upstream}
    env |= {"FASTMCP_LOAD_JSON_RESPONSE": "1" if json_response else "0", "FASTMCP_SHOW_CLI_BANNER": "false"}
    return args + common, env


class Ready:
    """Reads a uvicorn's stderr: counts its workers' "Application startup complete" lines and passes
    on the warnings and errors (FastMCP logs every stateless request's transport at INFO)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.started = 0
        self.lock = threading.Condition()
        self.thread = threading.Thread(target=self.read, args=(proc,), daemon=True)
        self.thread.start()

    def read(self, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            if "Application startup complete" in line:
                with self.lock:
                    self.started += 1
                    self.lock.notify_all()
            elif any(word in line for word in ("WARNING", "ERROR", "CRITICAL", "Traceback")):
                sys.stderr.write(line)

    def wait(self, workers: int, timeout: float) -> None:
        with self.lock:
            if not self.lock.wait_for(lambda: self.started >= workers, timeout):
                raise SystemExit(f"{self.started} of {workers} workers started within {timeout:g} s")


@contextmanager
def server_process(args: list[str], port: int, workers: int, env: dict[str, str], wait_all: bool):
    """A uvicorn with `workers` workers; ready when /health answers and, with `wait_all`, when every
    worker has started its application (before that, the first workers up accept every connection)."""
    proc = subprocess.Popen(
        args, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    ready = Ready(proc)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", proc, timeout=180)
        if wait_all:
            ready.wait(workers, timeout=180)
        yield proc
    finally:
        stop(proc, grace=30)  # SIGTERM: uvicorn's supervisor stops its workers


def pinned(command: list, role: str) -> list:
    """`command` on the CPUs `--pin` gives `role` ("server", or "load": the clients and the upstream)."""
    cpus = PIN.get(role)
    return ["taskset", "--cpu-list", cpus, *command] if cpus else command


@contextmanager
def upstream_process(port: int):
    args = pinned([sys.executable, str(BENCH / "load_upstream.py"), "--port", str(port)], "load")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/_count", proc, timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def workers_of(pid: int, forked: bool = False) -> list[int]:
    """The worker processes of a uvicorn started with --workers N (the process itself for one worker);
    `forked`: of the package's command line, whose workers are forks of it (every child)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and (forked or b"spawn_main" in cmdline):
            children.append(int(entry.name))
    return sorted(children) or [pid]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for {pid}")


@dataclass
class Watch:
    """Polls, while a row runs, which worker holds which connection: the client connections each
    worker accepted, the upstream client ports each one used, and the machine's load average."""

    pids: list[int]
    server_port: int
    upstream_port: int
    clients: dict[int, set[int]] = field(default_factory=dict)  # worker -> client ports
    pools: dict[int, int] = field(default_factory=dict)  # upstream client port -> worker
    loads: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.clients = {pid: set() for pid in self.pids}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while True:
            self.poll()
            if self.done.wait(POLL_SECONDS):
                self.poll()
                return

    def poll(self) -> None:
        sockets = tcp_sockets()
        for pid in self.pids:
            for inode in socket_inodes(pid):
                found = sockets.get(inode)
                if found is None:
                    continue
                if found.local == self.server_port and found.remote:
                    self.clients[pid].add(found.remote)
                elif found.remote == self.upstream_port:
                    self.pools[found.local] = pid
        self.loads.append(os.getloadavg()[0])

    def __enter__(self) -> Watch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


@dataclass
class Row:
    server: str
    mix: str
    workers: int
    clients: int
    calls: int
    errors: int
    lost: int
    reads: int
    writes: int
    twice: int
    p50: float
    p99: float
    rate: float
    rss: list[float]
    cpu: list[float]
    made: list[int]  # calls per worker, counted at the upstream
    unplaced: int  # upstream requests on a connection no poll saw
    connections: list[int]
    client_cpu: float
    loads: list[float]
    samples: list[str]

    @property
    def answered(self) -> int:
        return self.calls - self.errors - self.lost

    @property
    def cpu_per_call(self) -> float:
        """The workers' CPU milliseconds per answered call."""
        return 1000 * sum(self.cpu) / max(self.answered, 1)

    def cells(self) -> list[str]:
        made = " / ".join(f"{value:,}" for value in self.made)
        if self.unplaced:
            made += f" (+{self.unplaced:,} unplaced)"
        return [
            self.server,
            self.mix,
            str(self.workers),
            f"{self.calls:,}",
            str(self.errors),
            str(self.lost),
            f"{self.reads:,} / {self.writes:,}",
            str(self.twice),
            f"{self.p50 * 1000:.0f}",
            f"{self.p99 * 1000:.0f}",
            f"{self.rate:.0f}",
            f"{self.cpu_per_call:.2f}",
            " / ".join(f"{value:.0f}" for value in self.rss),
            " / ".join(f"{value:.1f}" for value in self.cpu),
            made,
            " / ".join(str(value) for value in self.connections),
        ]


def upstream_get(url: str, what: str) -> dict:
    return httpx.get(f"{url}/{what}", timeout=30).json()


def measure(server: str, mix: str, workers: int, args: argparse.Namespace, upstream: str) -> Row:
    port = free_port()
    command, env = server_command(server, port, workers, upstream, args.json_response)
    command = pinned(command, "server")
    with server_process(command, port, workers, env, wait_all=not args.no_wait_workers) as proc:
        pids = workers_of(proc.pid, forked=server == "typed-mcp-cli")
        if len(pids) != workers:
            raise SystemExit(f"expected {workers} worker processes, found {len(pids)}")
        if args.warm_up:  # not counted: the row measures a server whose tools have been used
            warm = argparse.Namespace(**{**vars(args), "clients": args.warm_up, "calls": args.warm_up, "rate": 0.0})
            run_clients(f"http://127.0.0.1:{port}/mcp", warm, MIXES[mix], server)
        cpu_before = [cpu_seconds(pid) for pid in pids]
        count_before, peers_before = upstream_get(upstream, "_count"), Counter(upstream_get(upstream, "_peers"))
        with Watch(pids, port, int(upstream.rsplit(":", 1)[1])) as watch:
            url = f"http://127.0.0.1:{port}/mcp"
            results = run_clients(url, args, MIXES[mix], server)
        count, peers = upstream_get(upstream, "_count"), Counter(upstream_get(upstream, "_peers"))
        cpu = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
        rss = [peak_rss_mib(pid) for pid in pids]
    made = Counter()
    for peer, requests in (peers - peers_before).items():
        made[watch.pools.get(int(peer))] += requests
    latencies = [value for result in results for value in result["latencies"]]
    wall = max(result["end"] for result in results) - min(result["start"] for result in results)
    return Row(
        server=server,
        mix=mix,
        workers=workers,
        clients=args.clients,
        calls=args.calls,
        errors=sum(result["errors"] for result in results),
        lost=sum(result["lost"] for result in results),
        reads=count["count"] - count_before["count"],
        writes=count["writes"] - count_before["writes"],
        twice=count["duplicates"] - count_before["duplicates"],
        p50=quantile(latencies, 0.50) if latencies else float("nan"),
        p99=quantile(latencies, 0.99) if latencies else float("nan"),
        rate=len(latencies) / wall if wall > 0 else 0.0,
        rss=rss,
        cpu=cpu,
        made=[made[pid] for pid in pids],
        unplaced=made[None],
        connections=[len(watch.clients[pid]) for pid in pids],
        client_cpu=sum(result["cpu_seconds"] for result in results),
        loads=watch.loads,
        samples=[sample for result in results for sample in result["samples"]][:5],
    )


def run_clients(url: str, args: argparse.Namespace, writes: float, server: str) -> list[dict]:
    """`args.clients` sessions and `args.calls` calls, shared as evenly as possible by the client processes."""
    clients, calls, processes = args.clients, args.calls, args.client_processes
    procs = []
    for index in range(processes):
        share_clients = clients // processes + (1 if index < clients % processes else 0)
        share_calls = calls // processes + (1 if index < calls % processes else 0)
        command = [sys.executable, str(BENCH / "load_clients.py"), "--url", url, "--writes", str(writes)]
        command += ["--clients", str(share_clients), "--calls", str(share_calls), "--ramp", str(args.ramp)]
        if args.rate:  # the whole run's rate, shared as the clients are
            command += ["--rate", str(args.rate * share_clients / clients)]
        if server == "FastMCP":
            command.append("--flat-body")  # from_openapi makes the body's fields the arguments
        if args.raw_clients:
            command += ["--raw", args.raw_clients]
        command = pinned(command, "load")
        procs.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a client process exited with {proc.returncode}")
        results.append(json.loads(out))
    return results


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def ratios(rows: list[Row]) -> str:
    """Each typed-mcp server against FastMCP, for each mix and worker count both were measured at;
    with the floor measured too, what each adds to it (CPU per call above the floor's): the part of
    a call's cost that is each product's own, not their shared SDK, Starlette, uvicorn and httpx2."""
    by_key = {(row.server, row.mix, row.workers): row for row in rows}
    floors = any(server == "floor" for server, _, _ in by_key)
    heads = ["calls/s", "p99", "server CPU per call"]
    heads = ["server", "mix", "workers", *(f"{head} / FastMCP's" for head in heads)]
    if floors:
        heads += ["CPU ms per call above the floor's: ours / FastMCP's", "above the floor / FastMCP's"]
    lines = ["| " + " | ".join(heads) + " |", "|" + " --- |" * len(heads)]
    for (server, mix, workers), ours in by_key.items():
        theirs = by_key.get(("FastMCP", mix, workers))
        if server in ("FastMCP", "floor") or theirs is None:
            continue
        cpu, their_cpu = ours.cpu_per_call, theirs.cpu_per_call
        cells = [f"{ours.rate / theirs.rate:.2f}x", f"{ours.p99 / theirs.p99:.2f}x", f"{cpu / their_cpu:.2f}x"]
        floor = by_key.get(("floor", mix, workers))
        if floor is not None:
            own, their_own = cpu - floor.cpu_per_call, their_cpu - floor.cpu_per_call
            share = f"{own / their_own:.2f}x" if their_own > 0 else "n/a"
            cells += [f"{own:.2f} / {their_own:.2f}", share]
        elif floors:
            cells += ["", ""]
        lines.append(f"| {server} | {mix} | {workers} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versions(servers: set[str]) -> str:
    ours = importlib.metadata.version
    text = f"Python {platform.python_version()}; typed-mcp: mcp {ours('mcp')}, uvicorn {ours('uvicorn')}"
    if "FastMCP" not in servers:  # its environment is made only when it is measured
        return text
    probe = "import importlib.metadata as m; print(m.version('fastmcp'), m.version('mcp'), m.version('uvicorn'))"
    fastmcp, fastmcp_sdk, fastmcp_uvicorn = subprocess.run(
        [str(FASTMCP_PYTHON), "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    return f"{text}; FastMCP {fastmcp}: mcp {fastmcp_sdk}, uvicorn {fastmcp_uvicorn}"


def machine() -> str:
    names = [
        line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line
    ]
    cpu = names[0] if names else "unknown CPU"
    pinned = f"; the server's workers on CPU {PIN['server']}, the load on CPU {PIN['load']}" if PIN else ""
    return f"{platform.platform()}, {os.cpu_count()} CPUs ({cpu}){pinned}"


def report(rows: list[Row], argv: list[str], began: str, raw: str | None = None) -> str:
    loads = [value for row in rows for value in row.loads]
    spread = f"{min(loads):.1f} / {statistics.median(loads):.1f} / {max(loads):.1f}" if loads else "n/a"
    measured = versions({row.server for row in rows})
    return "\n".join(
        [
            f"Command: `.venv/bin/python bench/load.py {' '.join(argv)}`",
            "",
            f"Run: {began} to {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {machine()};",
            *(
                [f"clients: `load_clients.py --raw {raw}` (stateless JSON-RPC over aiohttp), not the SDK's;"]
                if raw
                else []
            ),
            f"{measured}. Load average (1 min) during the rows, min / median / max: {spread}.",
            "",
            table(rows),
            "",
            ratios(rows),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS), help="servers to measure (comma-separated)")
    parser.add_argument("--mixes", default=",".join(MIXES), help="client mixes: read, write (comma-separated)")
    parser.add_argument("--workers", default="1,4", help="worker counts to measure, in order (comma-separated)")
    parser.add_argument("--clients", type=int, default=100, help="concurrent MCP client sessions")
    parser.add_argument("--calls", type=int, default=3_000, help="tool calls in all, per row")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients are spread over")
    parser.add_argument(
        "--ramp",
        type=float,
        default=5.0,
        help="seconds over which the sessions open (0: all at once, which lands them on whichever worker wakes first)",
    )
    parser.add_argument("--json-response", action="store_true", help="both servers answer JSON instead of SSE")
    parser.add_argument(
        "--no-wait-workers",
        action="store_true",
        help="start the clients once /health answers, not once every worker has started (shows the uneven spread)",
    )
    parser.add_argument(
        "--warm-up",
        type=int,
        default=0,
        help="calls made before each row, one a session, not counted (the tools' first use, imports included)",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="calls a second in all, on a fixed schedule (0: each client calls as soon as its last call is "
        "answered); below every server's capacity, the latencies compare the servers at the same load",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="the server on CPU 0, the clients and the upstream on the others (taskset): calls/s is then "
        "what one core of server serves, not what the shared machine has left after the clients",
    )
    parser.add_argument(
        "--raw-clients",
        nargs="?",
        const=RawSession.MODERN,
        metavar="VERSION",
        help="minimal stateless JSON-RPC clients (load_clients.py --raw) instead of the MCP SDK's, of this "
        "protocol revision (default 2026-07-28; 2025-06-18: the SDK's legacy path, as 2025 clients take it)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the tables (and the run) to this file")
    args = parser.parse_args()
    servers = args.servers.split(",")
    if args.pin:
        others = sorted(os.sched_getaffinity(0) - {0})
        if 0 not in os.sched_getaffinity(0) or not others:
            raise SystemExit("--pin needs CPU 0 and at least one other")
        PIN.update(server="0", load=",".join(str(cpu) for cpu in others))
    if "FastMCP" in servers:
        ensure_venv(FASTMCP_VENV, "fastmcp", FASTMCP_VERSION)
    began = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}"
    rows = []
    with upstream_process(free_port()) as upstream:
        # Interleaved (each mix and worker count, both servers one after the other), so that the
        # shared machine's changing load falls on both alike.
        for mix in args.mixes.split(","):
            for workers in [int(value) for value in args.workers.split(",")]:
                for server in servers:
                    print(
                        f"{server}, {mix}, {workers} worker(s): {args.clients} clients, {args.calls:,} calls ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    row = measure(server, mix, workers, args, upstream)
                    rows.append(row)
                    print("  " + table([row]).splitlines()[-1], file=sys.stderr, flush=True)
                    for sample in row.samples:
                        print(f"  {sample}", file=sys.stderr)
    text = report(rows, sys.argv[1:], began, args.raw_clients)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if any(row.errors or row.lost or row.twice or row.reads + row.writes != row.calls for row in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
