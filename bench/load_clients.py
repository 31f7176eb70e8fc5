"""One client process of `bench/load.py`: CLIENTS concurrent MCP Python SDK clients, each its own
streamable-HTTP session on its own connection (its own HTTP client), each making its share of CALLS
`get_weather` calls one after another, every answer checked against the upstream's table.
Prints one JSON object: the latencies of the answered calls, and counts:

- `errors`: answered, but not the expected result (an isError result, a JSON-RPC error, a wrong
  `structuredContent`);
- `lost`: never answered (a call past the timeout, a broken connection or session: the client's
  remaining calls count as lost too, nothing is retried).

    python bench/load_clients.py --url http://127.0.0.1:8000/mcp --clients 50 --calls 10000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import anyio
from load_upstream import CITIES  # a sibling script (this script's folder is on sys.path)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

NAMES = sorted(CITIES)
SAMPLES = 5  # error messages kept, to say what went wrong


class Tally:
    def __init__(self, clients: int) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.lost = 0
        self.samples: list[str] = []
        self.start = self.end = 0.0
        self.waiting = clients  # sessions not yet open (or failed to open)
        self.opened = anyio.Event()  # every session is open: the calls start together
        self.go = anyio.Event()

    def note(self, message: str) -> None:
        if len(self.samples) < SAMPLES:
            self.samples.append(message[:300])

    def settled(self) -> None:
        self.waiting -= 1
        if self.waiting == 0:
            self.opened.set()


async def client(url: str, index: int, calls: int, timeout: float, tally: Tally) -> None:
    done, settled = 0, False
    try:
        async with Client(streamable_http_client(url)) as session:
            tally.settled()
            settled = True
            await tally.go.wait()
            for call in range(calls):
                city = NAMES[(index + call) % len(NAMES)]
                began = time.perf_counter()
                try:
                    with anyio.fail_after(timeout):
                        result = await session.call_tool("get_weather", {"city": city})
                except MCPError as exc:  # a JSON-RPC error: answered, wrongly
                    tally.errors += 1
                    tally.note(f"JSON-RPC error: {exc}")
                    done += 1
                    continue
                tally.latencies.append(time.perf_counter() - began)
                done += 1
                if result.is_error or result.structured_content != CITIES[city]:
                    tally.errors += 1
                    tally.note(f"unexpected result: {result.model_dump_json()}")
    except Exception as exc:  # a timeout, a broken connection or session: the rest is lost
        tally.note(f"{type(exc).__name__}: {exc}")
    if not settled:
        tally.settled()
    tally.lost += calls - done


async def run(url: str, clients: int, calls: int, timeout: float) -> Tally:
    tally = Tally(clients)
    shares = [calls // clients + (1 if index < calls % clients else 0) for index in range(clients)]
    async with anyio.create_task_group() as group:
        for index, share in enumerate(shares):
            group.start_soon(client, url, index, share, timeout, tally)
        await tally.opened.wait()
        tally.start = time.time()
        tally.go.set()
    tally.end = time.time()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--clients", type=int, required=True)
    parser.add_argument("--calls", type=int, required=True, help="calls of this process, shared by its clients")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a call counts as lost")
    args = parser.parse_args()
    tally = anyio.run(run, args.url, args.clients, args.calls, args.timeout)
    times = os.times()
    fields = ("latencies", "errors", "lost", "samples", "start", "end")
    out = {**{name: getattr(tally, name) for name in fields}, "cpu_seconds": times.user + times.system}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
