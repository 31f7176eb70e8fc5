"""One client process of `bench/load.py` (and `tests/e2e/test_replicas.py`): CLIENTS concurrent MCP Python
SDK clients, each its own streamable-HTTP session on its own connection (its own HTTP client), each
listing the tools (`tools/list`) and then making its share of CALLS calls one after another: a
fraction WRITES of them `create_report` (a write, its `station` unique to the call, so that the
upstream can tell a write applied twice), the others `get_weather`; every answer checked against
what the upstream answers. Prints one JSON object: the latencies of the answered calls, and counts:

- `errors`: answered, but not the expected result (an isError result, a JSON-RPC error, a wrong
  `structuredContent`);
- `lost`: never answered (a call past the timeout, a broken connection or session: the client's
  remaining calls count as lost too, nothing is retried).

With `--record`, also every call as `[start, end, outcome, station]` (wall-clock seconds; outcome
`ok`, `error` or `lost`; the station of a write, else null), for a test that asks which calls were in
flight at a moment.

    python bench/load_clients.py --url http://127.0.0.1:8000/mcp --clients 50 --calls 10000 [--writes 0.5]

`--raw`: each client is not the SDK's but the least an MCP client can be: one aiohttp connection
posting the 2026-07-28 revision's stateless requests (`tools/list`, then `tools/call`, each with its
version, capabilities and routing headers, as the SDK's client sends them), reading the one event of
each answer; the same checks. `--raw 2025-06-18`: the same as a 2025 revision's client sends a
stateless request (no initialize, no `_meta`, no routing headers), which the SDK serves on its legacy
path. It costs a fraction of the SDK client's CPU, so that on a small machine the load generator is
less of what limits the calls a second (the server's own cost is what is compared).

`--ramp SECONDS`: the sessions open one after another over that time rather than all at once (a
burst of connections lands on whichever server worker wakes first: asyncio accepts every pending
connection in one go). `--flat-body`: the report's fields are the write's arguments themselves (FastMCP `from_openapi`'s
form), not one `body` argument (typed-mcp's).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import aiohttp
import anyio
from load_upstream import CITIES, report_answer  # a sibling script (this script's folder is on sys.path)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

NAMES = sorted(CITIES)
HOLD_SECONDS = 0.6  # more than two of the harness's socket polls (bench/load.py POLL_SECONDS)
SAMPLES = 5  # error messages kept, to say what went wrong
EXPECTED_TOOLS = {"get_weather", "create_report"}


class Tally:
    def __init__(self, clients: int, record: bool) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.lost = 0
        self.samples: list[str] = []
        self.calls: list[list] | None = [] if record else None
        self.start = self.end = 0.0
        self.clients = clients
        self.paced = 0.0  # with --rate: the perf_counter the calls' schedule counts from
        self.until = 0.0  # with --duration: no call starts after this time
        self.waiting = clients  # sessions not yet open (or failed to open)
        self.opened = anyio.Event()  # every session is open: the calls start together
        self.go = anyio.Event()
        self.busy = clients  # sessions still making calls
        self.finished = anyio.Event()  # every session has made its calls: the row's time ends here

    def note(self, message: str) -> None:
        if len(self.samples) < SAMPLES:
            self.samples.append(message[:300])

    def settled(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.opened.set()

    def ended(self) -> None:
        self.busy -= 1
        if self.busy == 0:
            self.end = time.time()
            self.finished.set()

    def record(self, start: float, outcome: str, station: str | None) -> None:
        if self.calls is not None:
            self.calls.append([start, time.time(), outcome, station])


class RawSession:
    """A stateless MCP client in a few lines: JSON-RPC posted on one kept-alive connection, the answer's
    event (or JSON body) read; `list_tools` and `call_tool` answer as the SDK client's do, in part."""

    MODERN = "2026-07-28"  # the stateless core: every request says its version and capabilities

    def __init__(self, url: str, http: aiohttp.ClientSession, version: str = MODERN) -> None:
        self.url, self.http, self.id, self.version = url, http, 0, version
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": version,
        }

    async def _request(self, method: str, params: dict) -> dict:
        self.id += 1
        headers = dict(self.headers)
        if self.version == self.MODERN:
            meta = {"io.modelcontextprotocol/protocolVersion": self.version}
            params = {**params, "_meta": {**meta, "io.modelcontextprotocol/clientCapabilities": {}}}
            headers["mcp-method"] = method
            if "name" in params:
                headers["mcp-name"] = params["name"]
        # (a 2025 revision's stateless request: no initialize, nothing more; the SDK's legacy path)
        message = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}
        async with self.http.post(self.url, json=message, headers=headers) as response:
            text = await response.text()
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}: {text[:200]}")
        if response.content_type == "text/event-stream":
            text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
        answer = json.loads(text)
        if "error" in answer:
            error = answer["error"]
            raise MCPError(error.get("code", 0), error.get("message", ""), error.get("data"))
        return answer["result"]

    async def list_tools(self) -> Any:
        result = await self._request("tools/list", {})
        return SimpleNamespace(tools=[SimpleNamespace(name=tool["name"]) for tool in result["tools"]])

    async def call_tool(self, name: str, arguments: dict) -> Any:
        result = await self._request("tools/call", {"name": name, "arguments": arguments})
        return SimpleNamespace(
            is_error=bool(result.get("isError")),
            structured_content=result.get("structuredContent"),
            model_dump_json=lambda: json.dumps(result)[:300],
        )


@asynccontextmanager
async def session_of(url: str, raw: str | None):
    """The SDK's client session on its own connection, or (`raw`: a protocol version) a RawSession on one
    connection."""
    if not raw:
        async with Client(streamable_http_client(url)) as session:
            yield session
        return
    connector = aiohttp.TCPConnector(limit=1)
    async with aiohttp.ClientSession(connector=connector) as http:
        yield RawSession(url, http, raw)


def is_write(index: int, call: int, writes: float) -> bool:
    """Whether a client's call is a write: spread evenly, `writes` of all calls."""
    position = index * 7919 + call  # clients out of step with each other
    return int((position + 1) * writes) > int(position * writes)


def request(index: int, call: int, writes: float, flat: bool = False) -> tuple[str, dict, str | None]:
    """The tool, arguments and (for a write) station of a client's call; `flat`: the report's fields
    as the arguments."""
    city = NAMES[(index + call) % len(NAMES)]
    if not is_write(index, call, writes):
        return "get_weather", {"city": city}, None
    station = f"{os.getpid()}-{index}-{call}"  # unique to this call, across client processes too
    report = {"city": city, "temperature": 20.5, "humidity": 50, "conditions": "clear"}
    report |= {"observed_at": "2026-12-01T10:00:00Z", "station": station}
    return "create_report", report if flat else {"body": report}, station


def expected(tool: str, arguments: dict, structured: dict | None) -> bool:
    if tool == "get_weather":
        return structured == CITIES[arguments["city"]]
    report = arguments.get("body", arguments)
    return isinstance(structured, dict) and structured == report_answer(report, structured.get("id"))


async def client(
    url: str,
    index: int,
    calls: int,
    writes: float,
    flat: bool,
    ramp: float,
    timeout: float,
    tally: Tally,
    interval: float = 0.0,
    raw: str | None = None,
) -> None:
    """One session: its share of the calls, one after another (until `tally.until`, when set). With
    `interval`, the k-th call is due `k * interval` seconds after the start (offset by the session's
    place): it waits until then, and its latency counts from then, so that a server that falls
    behind is charged for the calls it delays (an open-loop rate, not the server's own pace)."""
    done, settled, ended = 0, False, False
    try:
        await anyio.sleep(index * ramp)  # sessions opened one after another (`--ramp`), not in one burst
        async with session_of(url, raw) as session:
            listed = {tool.name for tool in (await session.list_tools()).tools}
            if not EXPECTED_TOOLS <= listed:
                raise RuntimeError(f"tools/list lacks {sorted(EXPECTED_TOOLS - listed)}")
            tally.settled()
            settled = True
            await tally.go.wait()
            for call in range(calls):
                if tally.until and time.time() >= tally.until:
                    calls = done  # the run's time is up: the calls not made are not lost
                    break
                tool, arguments, station = request(index, call, writes, flat)
                began, wall = time.perf_counter(), time.time()
                if interval:
                    due = tally.paced + (call + index / tally.clients) * interval
                    await anyio.sleep(max(0.0, due - time.perf_counter()))
                    began, wall = due, time.time()
                try:
                    with anyio.fail_after(timeout):
                        result = await session.call_tool(tool, arguments)
                except MCPError as exc:  # a JSON-RPC error: answered, wrongly
                    tally.errors += 1
                    tally.note(f"JSON-RPC error: {exc}")
                    tally.record(wall, "error", station)
                    done += 1
                    continue
                except BaseException:
                    tally.record(wall, "lost", station)
                    raise
                tally.latencies.append(time.perf_counter() - began)
                done += 1
                if result.is_error or not expected(tool, arguments, result.structured_content):
                    tally.errors += 1
                    tally.note(f"unexpected result: {result.model_dump_json()}")
                    tally.record(wall, "error", station)
                else:
                    tally.record(wall, "ok", station)
            tally.ended()
            ended = True
            # Every session stays open until all have made their calls, and a little longer, so the
            # harness's polls of the workers' sockets see each session's connection however short the row.
            await tally.finished.wait()
            await anyio.sleep(HOLD_SECONDS)
    except Exception as exc:  # a timeout, a broken connection or session: the rest is lost
        tally.note(f"{type(exc).__name__}: {exc}")
    if not settled:
        tally.settled()
    if not ended:
        tally.ended()
    tally.lost += calls - done


async def run(
    url: str,
    clients: int,
    calls: int,
    writes: float,
    timeout: float,
    record: bool,
    duration: float,
    flat: bool,
    ramp: float,
    rate: float = 0.0,
    raw: str | None = None,
) -> Tally:
    tally = Tally(clients, record)
    shares = [calls // clients + (1 if index < calls % clients else 0) for index in range(clients)]
    interval = clients / rate if rate else 0.0  # each session's time between its calls
    async with anyio.create_task_group() as group:
        for index, share in enumerate(shares):
            group.start_soon(client, url, index, share, writes, flat, ramp / clients, timeout, tally, interval, raw)
        await tally.opened.wait()
        tally.start = time.time()
        tally.paced = time.perf_counter()
        tally.until = tally.start + duration if duration else 0.0
        # SIGUSR1: stop now (no call starts after it), for a driver that decides when enough is done.
        signal.signal(signal.SIGUSR1, lambda *_: setattr(tally, "until", time.time()))
        print("started", file=sys.stderr, flush=True)  # every session open: a driver may act from now on
        tally.go.set()
    if not tally.end:
        tally.end = time.time()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--clients", type=int, required=True)
    parser.add_argument("--calls", type=int, required=True, help="calls of this process, shared by its clients")
    parser.add_argument("--writes", type=float, default=0.0, help="the fraction of calls that are writes")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a call counts as lost")
    parser.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (calls: at most)")
    parser.add_argument("--record", action="store_true", help="also print every call's times and outcome")
    parser.add_argument("--flat-body", action="store_true", help="a write's arguments are the report's fields")
    parser.add_argument("--ramp", type=float, default=0.0, help="seconds over which the sessions are opened")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="calls a second of this process (0: each session's own pace)"
    )
    parser.add_argument(
        "--raw",
        nargs="?",
        const=RawSession.MODERN,
        metavar="VERSION",
        help="minimal stateless JSON-RPC clients, not the SDK's, of this protocol revision (default 2026-07-28)",
    )
    args = parser.parse_args()
    options = (args.writes, args.timeout, args.record, args.duration, args.flat_body, args.ramp, args.rate, args.raw)
    tally = anyio.run(run, args.url, args.clients, args.calls, *options)
    times = os.times()
    fields = ("latencies", "errors", "lost", "samples", "start", "end")
    out = {**{name: getattr(tally, name) for name in fields}, "cpu_seconds": times.user + times.system}
    if tally.calls is not None:
        out["calls"] = tally.calls
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
