"""Load: the committed demo package served statelessly by uvicorn (`weather_mcp.asgi:create_app`)
with 1 and then 4 worker processes, in one run, against a minimal fast upstream on 127.0.0.1
(`load_upstream.py`); CLIENTS concurrent MCP Python SDK clients (`load_clients.py`, each its own
session and connection, spread over client processes) make CALLS `get_weather` calls in all.
Prints one table: errors, lost calls, the upstream's request count, p50/p99 latency, throughput,
and per worker its peak RSS and CPU seconds; `--markdown FILE` writes it too.

    make load                      # = .venv/bin/python bench/load.py --markdown bench/LOAD.md
    .venv/bin/python bench/load.py --workers 1,4 --clients 100 --calls 20000 --client-processes 2

Linux only (worker RSS and CPU come from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from inproc_calls import quantile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness.demo.process import free_port, stop, wait_http  # noqa: E402 - the test harness, as bench.py uses it

BENCH = Path(__file__).resolve().parent
PACKAGE = BENCH.parent / "generated" / "weather-mcp"
COLUMNS = (
    "workers",
    "clients",
    "calls",
    "errors",
    "lost",
    "upstream requests",
    "p50 ms",
    "p99 ms",
    "calls/s",
    "peak RSS per worker MiB",
    "CPU s per worker",
    "client CPU s",
)


@contextmanager
def process(args: list[str], ready_url: str, env: dict[str, str] | None = None):
    # stderr is inherited, not a pipe: a pipe nobody reads during the run could block a chatty server.
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL)
    try:
        wait_http(ready_url, proc, timeout=120)
        yield proc
    finally:
        stop(proc, grace=30)  # SIGTERM: uvicorn's supervisor stops its workers


def workers_of(pid: int) -> list[int]:
    """The worker processes of a uvicorn started with --workers N (the process itself for one worker)."""
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
        if ppid == pid and b"spawn_main" in cmdline:
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
class Row:
    workers: int
    clients: int
    calls: int
    errors: int
    lost: int
    upstream: int
    p50: float
    p99: float
    rate: float
    rss: list[float]
    cpu: list[float]
    client_cpu: float
    samples: list[str]

    def cells(self) -> list[str]:
        rss = " / ".join(f"{value:.0f}" for value in self.rss)
        cpu = " / ".join(f"{value:.1f}" for value in self.cpu)
        return [
            str(self.workers),
            str(self.clients),
            f"{self.calls:,}",
            str(self.errors),
            str(self.lost),
            f"{self.upstream:,}",
            f"{self.p50 * 1000:.0f}",
            f"{self.p99 * 1000:.0f}",
            f"{self.rate:.0f}",
            rss,
            cpu,
            f"{self.client_cpu:.0f}",
        ]


def upstream_count(url: str) -> int:
    return httpx.get(f"{url}/_count").json()["count"]


def measure(workers: int, clients: int, calls: int, client_processes: int, upstream: str) -> Row:
    port = free_port()
    args = [sys.executable, "-m", "uvicorn", "--factory", "weather_mcp.asgi:create_app", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--workers", str(workers), "--no-access-log", "--log-level", "warning"]
    env = {"PYTHONPATH": str(PACKAGE / "src"), "WEATHER_MCP_BASE_URL": upstream}
    with process(args, f"http://127.0.0.1:{port}/health", env) as server:
        pids = workers_of(server.pid)
        if len(pids) != workers:
            raise SystemExit(f"expected {workers} worker processes, found {len(pids)}")
        cpu_before = [cpu_seconds(pid) for pid in pids]
        count_before = upstream_count(upstream)
        results = run_clients(f"http://127.0.0.1:{port}/mcp", clients, calls, client_processes)
        count = upstream_count(upstream) - count_before
        cpu = [cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True)]
        rss = [peak_rss_mib(pid) for pid in pids]
    latencies = [value for result in results for value in result["latencies"]]
    wall = max(result["end"] for result in results) - min(result["start"] for result in results)
    return Row(
        workers=workers,
        clients=clients,
        calls=calls,
        errors=sum(result["errors"] for result in results),
        lost=sum(result["lost"] for result in results),
        upstream=count,
        p50=quantile(latencies, 0.50) if latencies else float("nan"),
        p99=quantile(latencies, 0.99) if latencies else float("nan"),
        rate=len(latencies) / wall if wall > 0 else 0.0,
        rss=rss,
        cpu=cpu,
        client_cpu=sum(result["cpu_seconds"] for result in results),
        samples=[sample for result in results for sample in result["samples"]][:5],
    )


def run_clients(url: str, clients: int, calls: int, processes: int) -> list[dict]:
    """`clients` sessions and `calls` calls, shared as evenly as possible by `processes` processes."""
    procs = []
    for index in range(processes):
        share_clients = clients // processes + (1 if index < clients % processes else 0)
        share_calls = calls // processes + (1 if index < calls % processes else 0)
        args = [sys.executable, str(BENCH / "load_clients.py"), "--url", url]
        args += ["--clients", str(share_clients), "--calls", str(share_calls)]
        procs.append(subprocess.Popen(args, stdout=subprocess.PIPE, text=True))
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


def machine() -> str:
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    return f"{platform.platform()}, {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min) at the end"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,4", help="worker counts to measure, in order (comma-separated)")
    parser.add_argument("--clients", type=int, default=100, help="concurrent MCP client sessions")
    parser.add_argument("--calls", type=int, default=20_000, help="tool calls in all, per worker count")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients are spread over")
    parser.add_argument("--markdown", type=Path, help="also write the table (and the machine) to this file")
    args = parser.parse_args()
    counts = [int(value) for value in args.workers.split(",")]
    port = free_port()
    upstream = f"http://127.0.0.1:{port}"
    rows = []
    with process([sys.executable, str(BENCH / "load_upstream.py"), "--port", str(port)], f"{upstream}/_count"):
        for workers in counts:
            print(f"{workers} worker(s): {args.clients} clients, {args.calls:,} calls ...", file=sys.stderr, flush=True)
            row = measure(workers, args.clients, args.calls, args.client_processes, upstream)
            rows.append(row)
            for sample in row.samples:
                print(f"  {sample}", file=sys.stderr)
    text = f"{table(rows)}\n\nMachine: {machine()}.\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if any(row.errors or row.lost or row.upstream != row.calls for row in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
