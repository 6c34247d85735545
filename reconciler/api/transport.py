"""The network transport: httpx's transport API over aiohttp's HTTP/1.1 engine.

Why: on this project's two cores the plan's read is bound by the client's CPU, and httpx's own
stack (httpcore, h11, anyio) spends about 1.9 ms of it a call where aiohttp's C parser spends a
fifth of that. The client keeps httpx's API -- requests, responses, the transport seam that
mounts the sandbox in-process -- and only this class speaks to aiohttp.

Why not ``httpx_aiohttp.AiohttpTransport``, which does the same: it hands aiohttp the URL as a
string, which yarl re-quotes (``%2F`` becomes ``/``), so a signed GET of ``path=/`` no longer
matches its signature; and it maps every ``ClientConnectionError`` -- a server that hangs up
after the request left among them -- to ``ConnectTimeout``, which the boundary reads as "never
sent": a write would then be retried blindly. Here the URL goes in as
``yarl.URL(url, encoded=True)``, byte for byte as signed, and only failures to connect are
called connect errors.

What it keeps of the old transport: TLS verified (httpx's default authorities, or the
``--ca-file`` context), one connection per concurrency slot, kept alive; no redirects followed;
no decompression (``api.body`` inflates within the size cap); no proxy or ``.netrc`` from the
environment; no cookies kept. aiohttp retries a GET once on a kept-alive connection the server
had closed, as RFC 9112 allows for idempotent requests; a POST is never re-sent.
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import httpx
import yarl


@contextmanager
def _no_default_authorities() -> Iterator[None]:
    """While aiohttp is imported, a TLS context made with the default authorities gets none.

    ``aiohttp.connector`` makes two default TLS contexts when it is imported, loading the
    system's certificate authorities twice: some 45 ms of CPU, a tenth of a plan's start-up.
    This transport never uses them -- the connector is always given the client's own context
    (``_network_transport``: httpx's authorities, ``--ca-file``, or none for plain http) -- so
    they are made without authorities. Were one ever used, it would verify no certificate and
    connect to nothing: failing closed, never open.
    """
    load = ssl.SSLContext.set_default_verify_paths
    ssl.SSLContext.set_default_verify_paths = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        ssl.SSLContext.set_default_verify_paths = load  # type: ignore[method-assign]


if "aiohttp.connector" in sys.modules:
    import aiohttp
else:
    with _no_default_authorities():
        import aiohttp

_EXCEPTIONS: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),  # TLS and DNS failures included
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    (aiohttp.NonHttpUrlClientError, httpx.UnsupportedProtocol),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),  # an unparseable answer
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.ClientError, httpx.TransportError),
)
"""aiohttp's failures as httpx's, most specific first. Only a failure to connect may say
"not sent" (``ConnectError``, ``ConnectTimeout``): the boundary retries writes on those."""


def _as_httpx(exc: Exception, request: httpx.Request) -> Exception:
    """The httpx error for an aiohttp one; its text without the URL (queries carry signatures)."""
    for source, target in _EXCEPTIONS:
        if isinstance(exc, source):
            detail = exc.message if isinstance(exc, aiohttp.ClientResponseError) else str(exc)
            return target(detail or type(exc).__name__, request=request)
    return exc


SMALL_BODY = 64 * 2**10
"""An answer that announces at most this many bytes, not compressed, is read in one go:
nearly every answer (a workspace's details are some 2 KB), without a stream's machinery per
chunk. Longer, compressed or unannounced ones stream, for ``api.body`` to stop at the cap."""

_CODING = "Content-Encoding"


class _Body(httpx.AsyncByteStream):
    """An answer's raw bytes as they arrive; closing hands the connection back (or drops it,
    when the body was not read to its end)."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except aiohttp.ClientError as exc:
            raise _as_httpx(exc, self._request) from exc

    async def aclose(self) -> None:
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Sends httpx requests through one aiohttp session, made in the event loop that uses it."""

    def __init__(self, *, verify: ssl.SSLContext, connections: int) -> None:
        self._ssl = verify
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._connections, limit_per_host=self._connections, ssl=self._ssl
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            trust_env=False,  # no proxy, no .netrc: the site is reached directly, as before
            auto_decompress=False,  # api.body inflates within the cap; aiohttp would not stop
            cookie_jar=aiohttp.DummyCookieJar(),
            # No timers of aiohttp's own: the caller holds one deadline for the whole call
            # (``asyncio.timeout_at``), connecting and every read included.
            timeout=aiohttp.ClientTimeout(total=None),
        )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._session or self._open()
        try:
            response = await session.request(
                request.method,
                yarl.URL(str(request.url), encoded=True),  # as signed: no re-quoting
                headers=[(name.decode(), value.decode()) for name, value in request.headers.raw],
                data=request.content or None,
                allow_redirects=False,
            )
            length = response.content_length
            if length is not None and length <= SMALL_BODY and not response.headers.get(_CODING):
                content = await response.read()  # the connection goes back to the pool
                return httpx.Response(
                    response.status, headers=response.raw_headers, content=content, request=request
                )
        except aiohttp.ClientError as exc:
            raise _as_httpx(exc, request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response, request),
            request=request,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
