"""A minimal fast upstream for `bench/load.py` and `tests/e2e/test_replicas.py`: the demo Weather API's
`GET /v1/weather/{city}` and `POST /v1/reports`, on 127.0.0.1, answered by a bare asyncio HTTP/1.1
server (keep-alive, no framework), so that a load measures the MCP server and not the upstream.

Writes are counted by their `station`, which a load client makes unique per call: `GET /_count` says
how many weather reads and report writes it answered and how many stations it saw more than once (a
write applied twice); `GET /_writes` gives the count of every station, and `GET /_peers` the requests
answered per client port (each a connection of an MCP server worker's pool: `load.py` maps the ports
to worker processes, to count the calls each worker made). `--delay-ms` holds every
answer that long, so that calls stay in flight (what a test that kills a replica needs).

    python bench/load_upstream.py --port 8011 [--delay-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness.demo.weather_api import CITIES as DEMO_CITIES  # noqa: E402 - the test harness, as bench.py uses it

# The demo API's cities, what get_weather must return for each.
CITIES = {city: data.model_dump() for city, data in DEMO_CITIES.items()}
BODIES = {f"/v1/weather/{city}": json.dumps(data).encode() for city, data in CITIES.items()}
REPORTS = "/v1/reports"
RECEIVED_AT = "2026-12-01T00:00:00Z"  # fixed, so that a report's answer is a function of its request
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024


def response(status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def report_answer(report: dict, report_id: int) -> dict:
    """What `POST /v1/reports` answers for `report`: the demo API's `Report`."""
    return {**report, "id": report_id, "received_at": RECEIVED_AT}


class Upstream:
    def __init__(self, delay: float) -> None:
        self.count = 0
        self.writes: Counter[str] = Counter()
        self.peers: Counter[int] = Counter()
        self.delay = delay

    def counts(self) -> dict:
        twice = sum(1 for seen in self.writes.values() if seen > 1)
        return {"count": self.count, "writes": sum(self.writes.values()), "duplicates": twice}

    async def answer(self, method: str, path: str, headers: dict[str, str], reader: asyncio.StreamReader) -> bytes:
        if method == "GET" and path in BODIES:
            self.count += 1
            await self.hold()
            return response("200 OK", BODIES[path])
        if method == "POST" and path == REPORTS:
            length = int(headers.get("content-length", "0"))
            if not 0 < length <= MAX_BODY:
                return response("411 Length Required", b'{"detail": "a body with content-length"}')
            report = json.loads(await reader.readexactly(length))
            self.writes[str(report.get("station"))] += 1  # applied: counted before the answer is held
            await self.hold()
            return response("201 Created", json.dumps(report_answer(report, len(self.writes))).encode())
        if path == "/_count":
            return response("200 OK", json.dumps(self.counts()).encode())
        if path == "/_peers":
            return response("200 OK", json.dumps(self.peers).encode())
        if path == "/_writes":
            return response("200 OK", json.dumps(dict(self.writes)).encode())
        return response("404 Not Found", b'{"detail": "not found"}')

    async def hold(self) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        port = writer.get_extra_info("peername")[1]
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if len(head) > MAX_HEAD:
                    break
                first, *lines = head.decode("latin-1").split("\r\n")
                method, target, _ = first.split(" ", 2)
                headers = {}
                for line in lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                path = target.split("?", 1)[0]
                if not path.startswith("/_"):
                    self.peers[port] += 1
                writer.write(await self.answer(method, path, headers, reader))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


async def serve(port: int, delay: float) -> None:
    upstream = Upstream(delay)
    server = await asyncio.start_server(upstream.connection, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0, help="hold every answer this long")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.delay_ms / 1000))


if __name__ == "__main__":
    main()
