"""A minimal fast upstream for `bench/load.py`: the demo Weather API's `GET /v1/weather/{city}`, on
127.0.0.1, answered from a fixed table by a bare asyncio HTTP/1.1 server (keep-alive, no framework),
so that the load measures the MCP server and not the upstream. `GET /_count` says how many weather
requests it answered, to check that every call reached it exactly once.

    python bench/load_upstream.py --port 8011
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness.demo.weather_api import CITIES as DEMO_CITIES  # noqa: E402 - the test harness, as bench.py uses it

# The demo API's cities, what get_weather must return for each.
CITIES = {city: data.model_dump() for city, data in DEMO_CITIES.items()}
BODIES = {f"/v1/weather/{city}": json.dumps(data).encode() for city, data in CITIES.items()}
MAX_HEAD = 64 * 1024


def response(status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


class Upstream:
    def __init__(self) -> None:
        self.count = 0

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if len(head) > MAX_HEAD:
                    break
                method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
                path = target.split("?", 1)[0]
                if method == "GET" and path in BODIES:  # GET only: no request body to read
                    self.count += 1
                    writer.write(response("200 OK", BODIES[path]))
                elif path == "/_count":
                    writer.write(response("200 OK", json.dumps({"count": self.count}).encode()))
                else:
                    writer.write(response("404 Not Found", b'{"detail": "not found"}'))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()


async def serve(port: int) -> None:
    upstream = Upstream()
    server = await asyncio.start_server(upstream.connection, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
