"""The runtime's wire (`runtime/wire.py`): aiohttp sends what httpx2 built, byte for byte where it
matters, and reads what httpx2 read; a proxy the environment names still gets the request. Against
raw servers on 127.0.0.1 that record what arrives."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from typed_mcp.runtime import http
from typed_mcp.runtime.wire import AiohttpTransport

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aiohttp runs on asyncio only, as the generated servers do


class Recorder:
    """A raw HTTP/1.1 server: records each request (head lines and body) and counts the connections
    it accepts; answers `answer`."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.requests: list[tuple[list[str], bytes]] = []
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")[:-2]
                length = next(
                    (int(v) for n, _, v in (x.partition(": ") for x in lines) if n.lower() == "content-length"), 0
                )
                body = await reader.readexactly(length) if length else b""
                self.requests.append((lines, body))
                writer.write(self.answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def recording(
    answer: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
) -> AsyncIterator[tuple[Recorder, str]]:
    recorder = Recorder(answer)
    server = await asyncio.start_server(recorder.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield recorder, f"http://127.0.0.1:{port}"
    finally:
        server.close()


def requests(base: str) -> list[httpx2.Request]:
    """Requests as the runtime builds them: a query, a path segment holding an encoded slash, each body
    encoding (JSON, form, text, bytes without a type, multipart), a header parameter."""
    url = httpx2.URL(base)
    return [
        httpx2.Request("GET", url.copy_with(path="/v1/a%2Fb/c", params=[("q", "x y"), ("q", "ü")])),
        httpx2.Request(
            "POST", url.copy_with(path="/v1/reports"), content=b'{"a":1}', headers={"content-type": "application/json"}
        ),
        httpx2.Request(
            "PUT",
            url.copy_with(path="/v1/form"),
            content=b"a=1&b=2",
            headers={"content-type": "application/x-www-form-urlencoded"},
        ),
        httpx2.Request("POST", url.copy_with(path="/v1/raw"), content=b"\x00\x01"),
        httpx2.Request("POST", url.copy_with(path="/v1/files"), files=[("f", ("a.txt", b"hello", "text/plain"))]),
        httpx2.Request(
            "DELETE", url.copy_with(path="/v1/x"), headers={"x-request-id": "abc", "user-agent": "weather-mcp/1"}
        ),
        httpx2.Request("POST", url.copy_with(path="/v1/empty")),
    ]


def as_sent(lines: list[str], body: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
    """A recorded request: its request line, its headers (names in lower case, in order; the multipart
    boundary, random per request, left out) and its body."""
    headers = [(name.lower(), value) for name, _, value in (line.partition(": ") for line in lines[1:])]
    return (
        lines[0],
        [h for h in headers if h[0] != "content-type" or "boundary" not in h[1]],
        body if b"--" not in body[:2] else b"",
    )


async def sent_by(transport: httpx2.AsyncBaseTransport, base: str, recorder: Recorder) -> list[tuple]:
    recorder.requests.clear()
    async with httpx2.AsyncClient(transport=transport) as client:
        for request in requests(base):
            response = await client.send(request)
            assert (response.status_code, response.text) == (200, "ok")
    return [as_sent(lines, body) for lines, body in recorder.requests]


async def test_the_wire_sends_each_request_as_httpx2_sends_it():
    """Same request line (the path as encoded, never re-quoted), the same headers and no other (no
    Content-Type, Accept or User-Agent of aiohttp's own; a DELETE without a body says Content-Length: 0,
    as aiohttp and requests send it), the same body."""
    async with recording() as (recorder, base):
        theirs = await sent_by(httpx2.AsyncHTTPTransport(), base, recorder)
        ours = await sent_by(AiohttpTransport(), base, recorder)
    assert len(ours) == len(theirs) == len(requests(base))
    for mine, reference in zip(ours, theirs, strict=True):
        line, headers, body = mine
        assert line == reference[0]
        assert body == reference[2]
        extra = [("content-length", "0")] if line.startswith("DELETE") and not body else []  # aiohttp's, as requests'
        assert sorted(headers) == sorted(reference[1] + extra), line


async def test_an_answer_is_read_raw_with_long_headers_and_its_connection_reused():
    """The body as it came (gzip stays gzip: `http.py` decodes it within its cap), a 20 KB header line
    (a long Link) read as httpx2 read it, and one connection for two calls."""
    body = gzip.compress(b'{"ok": true}')
    link = "<https://api.example/next?page=" + "9" * 20_000 + ">"
    answer = (
        f"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nLink: {link}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    async with recording(answer) as (recorder, base):
        async with httpx2.AsyncClient(transport=AiohttpTransport()) as client:
            for _ in range(2):
                response = await client.send(httpx2.Request("GET", f"{base}/v1/x"), stream=True)
                raw = b"".join([chunk async for chunk in response.aiter_raw()])
                await response.aclose()
                assert raw == body
                assert response.headers["link"] == link
    assert (len(recorder.requests), recorder.connections) == (2, 1)


async def test_a_proxy_the_environment_names_gets_the_request(monkeypatch):
    """HTTP_PROXY still routes the upstream's requests (through httpx2's transport): the proxy sees the
    absolute URL. Without it, the request goes straight to the upstream."""
    async with recording() as (proxy, proxy_url), recording() as (upstream, upstream_url):
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        async with httpx2.AsyncClient(transport=http._SecretQueryTransport()) as client:
            assert (await client.get(f"{upstream_url}/v1/x")).text == "ok"
        assert [lines[0] for lines, _ in proxy.requests] == [f"GET {upstream_url}/v1/x HTTP/1.1"]
        assert upstream.requests == []
        monkeypatch.delenv("HTTP_PROXY")
        async with httpx2.AsyncClient(transport=http._SecretQueryTransport()) as client:
            assert (await client.get(f"{upstream_url}/v1/x")).text == "ok"
        assert [lines[0] for lines, _ in upstream.requests] == ["GET /v1/x HTTP/1.1"]


async def cut_short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers 5 of the 100 bytes it announces, then closes the connection."""
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
    await writer.drain()
    writer.close()


@pytest.mark.parametrize("transport", [httpx2.AsyncHTTPTransport, AiohttpTransport])
async def test_failures_are_the_same_httpx2_failures_naming_no_url(transport):
    """An answer cut short is httpx2's RemoteProtocolError and a refused connection its ConnectError,
    whichever transport; neither message holds the URL (its query may hold a credential)."""
    server = await asyncio.start_server(cut_short, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/x?api_key=SECRET"
    async with httpx2.AsyncClient(transport=transport()) as client:
        with pytest.raises(httpx2.RemoteProtocolError) as cut:
            await client.get(url)
        server.close()
        await server.wait_closed()
        with pytest.raises(httpx2.ConnectError) as refused:
            await client.get(url)
    for error in (cut.value, refused.value):
        assert "SECRET" not in str(error) and str(port) not in str(error), error


async def test_the_servers_client_keeps_no_cookie_an_upstream_sets():
    """An upstream that sets a new cookie with every answer: the runtime's shared client keeps none (it
    would grow with each answer, and hand one caller's session to the next caller's requests), so even
    a request the client itself builds (the OAuth token request is one) carries no Cookie header."""
    seen: list[list[str]] = []

    async def setting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                seen.append(head.decode("latin-1").split("\r\n"))
                cookie = f"session{len(seen)}=secret{len(seen)}; Path=/"
                writer.write(f"HTTP/1.1 200 OK\r\nSet-Cookie: {cookie}\r\nContent-Length: 2\r\n\r\nok".encode())
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(setting, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    api = http.Api(env_prefix="WIRE_TEST", default_base_url=base)
    client = api.client()
    for _ in range(50):
        assert (await client.send(httpx2.Request("GET", f"{base}/v1/x"))).text == "ok"
    assert len(client.cookies.jar) == 0
    assert (await client.post(f"{base}/token", data={"grant_type": "client_credentials"})).text == "ok"
    assert [line for line in seen[-1] if line.lower().startswith("cookie")] == []
    await client.aclose()
    server.close()
