"""The upstream's wire: httpx2 requests sent and answered by aiohttp's HTTP/1.1 client.

The runtime builds, checks and reads every exchange through httpx2's API (`http.py`); only the bytes
on a direct connection go through aiohttp, whose parser is compiled (llhttp): under load, httpx2's
own pool and pure-Python parser were most of the CPU a tool call cost (`bench/LOAD.md`). The
transport keeps httpx2's contract, so nothing above it changes:

- the request goes as built: its URL as encoded (never re-quoted), its headers and body as they are
  (aiohttp adds only `Content-Length: 0` to a DELETE without a body), no redirect followed, no cookie
  kept, no proxy read from the environment (a proxied request takes httpx2's transport: `http.py`);
- the answer's body is raw (undecoded) and streamed, so `http.py` decodes it within its cap;
- TLS trusts what httpx2 trusts (its default context: the system's store and SSL_CERT_FILE);
- a failure is the httpx2 exception of the same kind (connect, timeout, read, protocol), the
  certificate error kept as its cause, no URL or header in any message.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Iterator

import aiohttp
import httpx2
from multidict import CIMultiDict
from yarl import URL

# Response header limits: aiohttp's defaults (8,190 bytes a line, 128 headers) refuse answers that
# httpx2 read (real APIs send long Link and Set-Cookie headers); these stay bounded in memory.
MAX_LINE_BYTES = 32 * 1024
MAX_HEADERS = 256
CHUNK_BYTES = 64 * 1024
MAX_CONNECTIONS = 100  # httpx2's own pool's default
# Headers aiohttp adds to a request that lacks them: the request already says what it means to.
NOT_ADDED = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session (its connection pool) for the event loop that first sends through it."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._tls: ssl.SSLContext | None = None

    def _context(self) -> ssl.SSLContext:
        """httpx2's default TLS context, made for the first HTTPS request (loading the CA store takes
        tens of milliseconds, which an API served over plain HTTP never pays)."""
        if self._tls is None:
            self._tls = httpx2.create_ssl_context()
        return self._tls

    async def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS)
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=NOT_ADDED,
                auto_decompress=False,
                trust_env=False,
                timeout=aiohttp.ClientTimeout(total=None),
                max_line_size=MAX_LINE_BYTES,
                max_field_size=MAX_LINE_BYTES,
                max_headers=MAX_HEADERS,
            )
            self._closer = _closed_with_the_loop(self._session)
            await anext(self._closer)
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeouts = request.extensions.get("timeout", {})
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeouts.get("connect"), sock_read=timeouts.get("read")
        )
        headers = CIMultiDict((name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw)
        body = await request.aread()
        with _as_httpx2(request):
            session = await self._client()
            answer = await session.request(
                request.method,
                URL(str(request.url), encoded=True),
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
                ssl=self._context() if request.url.scheme == "https" else True,
            )
        return httpx2.Response(
            answer.status,
            headers=list(answer.raw_headers),
            stream=_Body(answer, request),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (answer.reason or "").encode("latin-1")},
            request=request,
        )

    async def aclose(self) -> None:
        if self._closer is not None:
            await self._closer.aclose()  # closes the session


async def _closed_with_the_loop(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Closes `session` when the event loop ends (`asyncio.run` and anyio close the async generators
    still open), or when closed itself: a server that exits without closing its client would
    otherwise log aiohttp's "Unclosed client session" errors."""
    try:
        yield
    finally:
        await session.close()


class _Body(httpx2.AsyncByteStream):
    """The answer's raw bytes as they arrive; closing it before the end closes the connection."""

    def __init__(self, answer: aiohttp.ClientResponse, request: httpx2.Request) -> None:
        self._answer = answer
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx2(self._request, reading=True):
            async for chunk in self._answer.content.iter_chunked(CHUNK_BYTES):
                yield chunk

    async def aclose(self) -> None:
        if self._answer.content.at_eof():
            self._answer.release()  # read to the end: the connection goes back to the pool
        else:
            self._answer.close()


@contextlib.contextmanager
def _as_httpx2(request: httpx2.Request, reading: bool = False) -> Iterator[None]:
    """aiohttp's exceptions as httpx2's of the same kind (the runtime reads only httpx2's); anything
    else (cancellation, the runtime's own) as it is."""
    try:
        yield
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        # A refused certificate's cause is the ssl module's error itself, which `http._refused_certificate`
        # reads (aiohttp's exception is also an ssl.CertificateError, without its verify_message).
        cause = exc.certificate_error if isinstance(exc, aiohttp.ClientConnectorCertificateError) else exc
        raise _translated(exc, request, reading) from cause


def _translated(exc: BaseException, request: httpx2.Request, reading: bool) -> httpx2.HTTPError:
    """The httpx2 exception for an aiohttp failure; the message names the kind only."""
    name = type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return httpx2.ConnectError(f"certificate refused ({name})", request=request)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx2.ConnectTimeout(name, request=request)
    if isinstance(exc, asyncio.TimeoutError):  # aiohttp's socket read timeout included
        return httpx2.ReadTimeout(name, request=request)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx2.ConnectError(name, request=request)
    if isinstance(exc, (aiohttp.ClientPayloadError, aiohttp.ClientResponseError)):  # an answer cut or refused
        return httpx2.RemoteProtocolError(name, request=request)
    if isinstance(exc, aiohttp.ServerDisconnectedError) and not reading:
        return httpx2.RemoteProtocolError(name, request=request)
    if isinstance(exc, aiohttp.ClientConnectionError):  # ClientOSError among them
        return httpx2.ReadError(name, request=request) if reading else httpx2.WriteError(name, request=request)
    return httpx2.TransportError(name, request=request)
