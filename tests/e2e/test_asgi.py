"""The generated package behind a process manager: the committed demo package's ASGI factory
(`weather_mcp.asgi:create_app`) run by uvicorn, and by gunicorn with uvicorn's worker class, each with
several worker processes on 127.0.0.1, called by concurrent MCP Python SDK clients; its stateless
transport; the non-loopback rule kept per connection (the process manager, not the package, binds the
socket); and a bad configuration stopping every worker instead of a restart loop."""

from __future__ import annotations

import socket
import subprocess
import sys

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import environment
from harness.demo.process import free_port, running, stop
from harness.demo.weather_api import CITIES
from harness.slow import trickle
from support import REPO

pytestmark = pytest.mark.anyio

PACKAGE = REPO / "generated" / "weather-mcp"
HEADER_SECONDS = 10  # DeadlineProtocol's default (runtime/options.HEADER_SECONDS)
GRACE = 5.0  # seconds past the deadline a connection may still be open (timers on a loaded machine)
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def uvicorn(port: int, *flags: str) -> list[str]:
    app = ["-m", "uvicorn", "--factory", "weather_mcp.asgi:create_app", "--port", str(port)]
    return [sys.executable, *app, "--no-access-log", *flags]


DEADLINE_WORKER = "weather_mcp._runtime.gunicorn_worker.DeadlineWorker"


def gunicorn(port: int, workers: int, worker: str = DEADLINE_WORKER) -> list[str]:
    """The hosting docs' gunicorn line (`gunicorn -k <worker class> -w N -b HOST:PORT
    'weather_mcp.asgi:create_app()'`), on 127.0.0.1."""
    app = ["-m", "gunicorn", "-k", worker, "-w", str(workers), "-b", f"127.0.0.1:{port}"]
    app.append("--no-control-socket")  # gunicorn's default is one path in $HOME for every instance
    return [sys.executable, *app, "weather_mcp.asgi:create_app()"]


def two_workers(manager: str, port: int) -> list[str]:
    return uvicorn(port, "--workers", "2") if manager == "uvicorn" else gunicorn(port, 2)


MANAGERS = ["uvicorn", "gunicorn"]


def package_env(demo_url: str, **variables: str) -> dict[str, str]:
    return {**environment(PACKAGE / "src"), "WEATHER_MCP_BASE_URL": demo_url, **variables}


def non_loopback_address() -> str | None:
    """An address of this machine's own that is not loopback (the one its default route leaves from)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # UDP: no packet is sent, the kernel only picks a route
        except OSError:
            return None
        address = sock.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.mark.parametrize("manager", MANAGERS)
async def test_workers_serve_concurrent_sdk_clients_statelessly(demo_url, manager):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    cities = sorted(CITIES)
    results: dict[tuple[int, int], object] = {}

    async def client(index: int) -> None:
        async with Client(streamable_http_client(url)) as session:  # each client its own connection
            for call in range(5):
                city = cities[(index + call) % len(cities)]
                result = await session.call_tool("get_weather", {"city": city})
                assert not result.is_error, result.content
                results[index, call] = (city, result.structured_content)

    with running(two_workers(manager, port), f"http://127.0.0.1:{port}/health", package_env(demo_url)):
        async with anyio.create_task_group() as group:
            for index in range(6):
                group.start_soon(client, index)
        # Stateless: no session id is handed out, and a call with no initialize before it (as a
        # request reaching another worker or replica than the last one) is answered.
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
        call["params"] = {"name": "get_temperature", "arguments": {"city": "paris"}}
        response = httpx.post(url, json=call, headers={**MCP_HEADERS, "mcp-protocol-version": "2025-06-18"})
    assert len(results) == 30
    for city, structured in results.values():
        assert structured == CITIES[city].model_dump()
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers
    assert '"isError":false' in response.text.replace(" ", "") and "19" in response.text


def test_without_auth_only_loopback_connections_are_served(demo_url):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect to")
    port = free_port()
    with running(uvicorn(port, "--host", "0.0.0.0"), f"http://127.0.0.1:{port}/health", package_env(demo_url)):
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200
        refused = httpx.get(f"http://{address}:{port}/health")
        mcp = httpx.post(f"http://{address}:{port}/mcp", json={}, headers=MCP_HEADERS)
    assert refused.status_code == 403 and mcp.status_code == 403
    assert "WEATHER_MCP_AUTH=oauth" in refused.text and "WEATHER_MCP_INSECURE_NO_AUTH=1" in refused.text


def test_an_auth_mode_or_the_insecure_flag_lifts_the_loopback_rule():
    from typed_mcp.runtime import hosting  # the runtime every package carries

    origins = hosting.Origins.build("", [], [], None)

    async def app(scope, receive, send):
        pass

    assert hosting.loopback_only(app, hosting.Hosting("forwarded", origins), "X") is app
    assert hosting.loopback_only(app, hosting.Hosting("none", origins, insecure_no_auth=True), "X") is app
    assert hosting.loopback_only(app, hosting.Hosting("none", origins), "X") is not app


@pytest.mark.parametrize("manager", MANAGERS)
def test_a_bad_configuration_stops_every_worker_with_one_line(demo_url, manager):
    port = free_port()
    env = package_env(demo_url, WEATHER_MCP_AUTH="bogus")
    proc = subprocess.Popen(
        two_workers(manager, port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        _, stderr = proc.communicate(timeout=60)  # the supervisor gives up: no restart loop
    except subprocess.TimeoutExpired:
        stop(proc)
        pytest.fail(f"{manager} kept restarting workers that cannot boot")
    if manager == "gunicorn":  # its arbiter halts on the workers' boot failure (uvicorn's parent exits 0);
        # with 3, or with 1 when the second worker's failure lands while it halts (gunicorn's own race)
        assert proc.returncode in (1, 3) and "Worker failed to boot" in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("weather_mcp.asgi: error:")]
    assert errors == [
        "weather_mcp.asgi: error: WEATHER_MCP_AUTH must be one of none, forwarded, oauth (got 'bogus')"
    ] * len(errors)
    # No traceback through the package (gunicorn's race above prints one of its own arbiter's).
    frames = [line for line in stderr.splitlines() if line.strip().startswith('File "')]
    assert errors and not any("weather_mcp" in frame for frame in frames), stderr
    if manager == "uvicorn":
        assert "Traceback" not in stderr


@pytest.mark.parametrize("worker", [DEADLINE_WORKER, "uvicorn_worker.UvicornWorker"])
async def test_gunicorns_deadline_worker_cuts_off_a_client_trickling_its_headers(demo_url, worker):
    """Under gunicorn the documented worker class answers 408 and closes the connection once the
    headers' 10 s have passed; uvicorn-worker's own class (the line the docs gave before) holds it."""
    port = free_port()
    with running(gunicorn(port, 1, worker), f"http://127.0.0.1:{port}/health", package_env(demo_url)):
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-slow: ".encode() + b"a" * 100
        closed = await trickle(port, b"", head, within=HEADER_SECONDS + GRACE)
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200  # it still serves
    if worker != DEADLINE_WORKER:
        assert closed is None, closed
        return
    assert closed is not None, f"still open {HEADER_SECONDS + GRACE:g} s after its first byte"
    after, answer = closed
    assert HEADER_SECONDS - 0.5 <= after <= HEADER_SECONDS + GRACE, after
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:100]


@pytest.mark.parametrize("manager", MANAGERS)
def test_calls_of_2025_clients_log_nothing_per_call(demo_url, manager):
    """A stateless request of a 2025-revision client (the TypeScript SDK 1.x and most hosts speak
    one) takes the MCP SDK's legacy path, which logs "Terminating session: None" at INFO for each;
    with the logging the SDK sets up (INFO through rich) every call wrote a rendered line to stderr,
    a tenth of its CPU. The app sets warnings and errors, unless the process manager configured
    logging: stderr holds no line per call."""
    port = free_port()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "get_temperature", "arguments": {"city": "paris"}}
    headers = {**MCP_HEADERS, "mcp-protocol-version": "2025-06-18"}
    args = uvicorn(port) if manager == "uvicorn" else gunicorn(port, 1)
    with running(args, f"http://127.0.0.1:{port}/health", package_env(demo_url)) as proc:
        for _ in range(5):
            answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json=call, headers=headers)
            assert answer.status_code == 200 and '"isError":false' in answer.text.replace(" ", ""), answer.text
        stop(proc)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert "Terminating session" not in stderr, stderr[-2000:]
    assert len(stderr.splitlines()) < 15, stderr[-2000:]  # the manager's own start and stop lines
