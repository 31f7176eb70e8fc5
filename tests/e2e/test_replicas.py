"""Three replicas of the committed demo package behind a real nginx (Debian's), configured by the
package's own `deploy/nginx.conf`, under load from concurrent MCP Python SDK clients (half of the
calls writes, each with a station of its own, counted at the upstream): a rolling restart of every
replica loses no call and applies no write twice; a replica killed with SIGKILL fails only the calls
it held, every other call (before, during and after) succeeds, and no write is applied twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness.demo.process import free_port, running
from harness.replicas import Balancer, Replica, nginx_missing, rolling_restart
from support import REPO

pytestmark = pytest.mark.needs("nginx")

PACKAGE = REPO / "generated" / "weather-mcp"
BENCH = REPO / "bench"
ENV = {"WEATHER_MCP_HTTP_BEARER_TOKEN": "station-token"}


@dataclass
class Cluster:
    upstream: str
    balancer: Balancer
    replicas: list[Replica]

    def writes(self) -> dict[str, int]:
        return httpx.get(f"{self.upstream}/_writes").json()


@contextmanager
def cluster(tmp_path: Path, delay_ms: float) -> Iterator[Cluster]:
    missing = nginx_missing()
    assert missing is None, missing  # make test installs it (Debian: nginx-light); never skipped
    port = free_port()
    upstream = f"http://127.0.0.1:{port}"
    args = [sys.executable, str(BENCH / "load_upstream.py"), "--port", str(port), "--delay-ms", str(delay_ms)]
    with running(args, f"{upstream}/_count"):
        replicas = [Replica(PACKAGE, "weather_mcp", {**ENV, "WEATHER_MCP_BASE_URL": upstream}) for _ in range(3)]
        balancer = Balancer((PACKAGE / "deploy" / "nginx.conf").read_text(), [r.port for r in replicas], tmp_path)
        try:
            for replica in replicas:  # started together, then each waited for
                replica.launch()
            for replica in replicas:
                replica.ready()
                anyio.run(warm, replica.port)
            balancer.start()
            yield Cluster(upstream, balancer, replicas)
        finally:
            balancer.stop()
            for replica in replicas:
                replica.stop()


async def warm(port: int) -> None:
    """A replica's first call of a tool imports it and builds its models: done once before the load,
    so that the load measures calls and not imports."""
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp")) as session:
        assert not (await session.call_tool("get_weather", {"city": "paris"})).is_error
        report = {"city": "Paris", "temperature": 1, "humidity": 1, "conditions": "fog"}
        report |= {"observed_at": "2026-12-01T00:00:00Z", "station": f"warm-{port}"}
        assert not (await session.call_tool("create_report", {"body": report})).is_error


@dataclass
class Call:
    start: float
    end: float
    outcome: str  # ok, error, lost
    station: str | None  # a write's


class Load:
    """`bench/load_clients.py` in a process of its own: `clients` SDK sessions through the balancer,
    calling until `stop()` (at most `limit` seconds), every call recorded."""

    def __init__(self, url: str, clients: int, writes: float = 0.5, limit: float = 90.0) -> None:
        args = [sys.executable, str(BENCH / "load_clients.py"), "--url", url, "--clients", str(clients)]
        args += ["--calls", "1000000", "--writes", str(writes), "--duration", str(limit), "--record"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr: list[str] = []
        for line in self.proc.stderr:  # the sessions are open (and have listed the tools) once it says so
            self.stderr.append(line)
            if line.strip() == "started":
                break
        else:
            raise AssertionError(f"the clients did not start: {''.join(self.stderr)[-2000:]}")
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def stop(self) -> tuple[dict, list[Call]]:
        self.proc.send_signal(signal.SIGUSR1)  # no call starts after this
        out, _ = self.proc.communicate(timeout=120)
        assert self.proc.returncode == 0, "".join(self.stderr)[-2000:]
        result = json.loads(out)
        return result, [Call(*call) for call in result["calls"]]


def test_rolling_restart_of_every_replica_under_load_loses_no_call(tmp_path):
    with cluster(tmp_path, delay_ms=10) as replicas:
        load = Load(f"{replicas.balancer.url}/mcp", clients=12)
        time.sleep(1.0)
        back = rolling_restart(replicas.balancer, replicas.replicas)
        time.sleep(1.0)  # calls through the last restarted replica too
        result, calls = load.stop()
        writes = replicas.writes()
        log = replicas.balancer.log()
    assert result["lost"] == 0 and result["errors"] == 0, result["samples"]
    assert all(call.outcome == "ok" for call in calls)
    assert sum(1 for call in calls if call.start > back[-1]) > 10, "the load ended before the restart did"
    # Every write applied exactly once; none applied twice (a resent POST would show here).
    stations = [call.station for call in calls if call.station]
    assert len(stations) > 50 and all(writes.get(station) == 1 for station in stations)
    assert {station for station in writes if not station.startswith("warm-")} == set(stations)
    # nginx answered every request from a replica, and each new replica process served calls.
    assert [entry for entry in log if entry[1] >= 500] == []
    for replica, ready in zip(replicas.replicas, back, strict=True):
        assert any(f"127.0.0.1:{replica.port}" in entry[2] and entry[0] > ready for entry in log)


def test_a_killed_replica_fails_only_the_calls_it_held_and_no_write_is_applied_twice(tmp_path):
    # Each call held a second at the upstream: the replica that is killed holds calls when it is.
    with cluster(tmp_path, delay_ms=1000) as replicas:
        load = Load(f"{replicas.balancer.url}/mcp", clients=12)
        time.sleep(3.0)
        victim = replicas.replicas[1]
        deadline = time.monotonic() + 30
        while victim.held() < 2:  # killed while it holds calls, however slow the machine is
            assert time.monotonic() < deadline, "the replica to kill never held two calls"
            time.sleep(0.01)
        killing = time.time()
        victim.kill()
        killed = time.time()
        time.sleep(4.0)
        result, calls = load.stop()
        writes = replicas.writes()
        log = replicas.balancer.log()
    failed = [call for call in calls if call.outcome != "ok"]
    assert result["lost"] == 0, result["samples"]
    # No write applied twice; every write that succeeded applied once, a failed one at most once.
    assert all(count == 1 for count in writes.values()), {s: n for s, n in writes.items() if n != 1}
    assert len([call for call in calls if call.station]) > 10
    assert all(writes.get(call.station) == 1 for call in calls if call.station and call.outcome == "ok")
    # Only calls in flight at the kill failed: each began before it and ended after it...
    assert failed, "no call was in flight at the replica that was killed: the test did not test"
    assert all(call.start < killed and call.end > killing for call in failed), failed
    # ... each one a request nginx had sent to the killed replica (and did not send again), and
    # every call that began after the kill succeeded, through the other replicas.
    victim_address = f"127.0.0.1:{victim.port}"
    errors = [entry for entry in log if entry[1] >= 500]
    assert len(errors) == len(failed) and all(entry[2] == victim_address for entry in errors), errors
    after = [call for call in calls if call.start > killed]
    assert len(after) > 10 and all(call.outcome == "ok" for call in after)
