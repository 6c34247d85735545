"""The network transport: the client's requests sent by aiohttp's HTTP/1.1 engine.

Why: on this project's two cores the plan's read is bound by the client's CPU, and httpx's own
stack (httpcore, h11, anyio) spends about 1.9 ms of it a call where aiohttp's C parser spends a
fifth of that. The client sends through a ``caller.Transport`` -- a signed request in, the
``boundary.Answer`` out -- and only this class speaks to aiohttp; a test or the embedded
sandbox mounts an httpx transport instead (``mounted.MountedTransport``).

Why not ``httpx_aiohttp.AiohttpTransport``: it hands aiohttp the URL as a string, which yarl
re-quotes (``%2F`` becomes ``/``), so a signed GET of ``path=/`` no longer matches its
signature; and it maps every ``ClientConnectionError`` -- a server that hangs up after the
request left among them -- to ``ConnectTimeout``, which the boundary reads as "never sent": a
write would then be retried blindly. Here the URL goes in as ``yarl.URL(url, encoded=True)``,
byte for byte as signed, and only failures to connect are called connect errors (a
``wire.WireError`` named as httpx names the failure of the same meaning; the boundary reads it).

What it keeps: TLS verified (httpx's default authorities, or the ``--ca-file`` context), one
connection per concurrency slot, kept alive; no redirects followed; no decompression
(``api.body`` inflates within the size cap); no proxy or ``.netrc`` from the environment; no
cookies kept. aiohttp retries a GET once on a kept-alive connection the server had closed, as
RFC 9112 allows for idempotent requests; a POST is never re-sent.
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import yarl

from reconciler.api.body import read_chunks, too_large
from reconciler.api.boundary import REDIRECT_STATUSES, Answer, retry_after
from reconciler.api.wire import WireError, wire_error


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

_EXCEPTIONS: tuple[tuple[type[BaseException], str], ...] = (
    (aiohttp.ConnectionTimeoutError, "ConnectTimeout"),
    (aiohttp.ServerTimeoutError, "ReadTimeout"),
    (aiohttp.ClientConnectorError, "ConnectError"),  # TLS and DNS failures included
    (aiohttp.InvalidURL, "UnsupportedProtocol"),
    (aiohttp.NonHttpUrlClientError, "UnsupportedProtocol"),
    (aiohttp.ServerDisconnectedError, "RemoteProtocolError"),
    (aiohttp.ClientPayloadError, "RemoteProtocolError"),
    (aiohttp.ClientResponseError, "RemoteProtocolError"),  # an unparseable answer
    (aiohttp.ClientOSError, "ReadError"),
    (aiohttp.ClientError, "TransportError"),
)
"""aiohttp's failures by the names httpx gives the same failures, most specific first. Only a
failure to connect may say "not sent" (``wire.NOT_SENT_KINDS``): the boundary retries writes
on those."""

_CODING, _LOCATION, _RETRY_AFTER = "Content-Encoding", "Location", "Retry-After"


def _as_wire(exc: aiohttp.ClientError) -> WireError:
    """The wire error for an aiohttp one; its text without the URL (queries carry signatures)."""
    detail = exc.message if isinstance(exc, aiohttp.ClientResponseError) else str(exc)
    kind = next(name for source, name in _EXCEPTIONS if isinstance(exc, source))
    return wire_error(kind, detail or type(exc).__name__)


SMALL_BODY = 64 * 2**10
"""An answer that announces at most this many bytes, not compressed, is read in one go:
nearly every answer (a workspace's details are some 2 KB), without a stream's machinery per
chunk. Longer, compressed or unannounced ones stream, for ``api.body`` to stop at the cap."""


class AiohttpTransport:
    """Sends the client's requests through one aiohttp session, made in the event loop that
    uses it, and hands back each answer as the boundary reads it (``boundary.Answer``).

    No httpx object is made on the way: building an ``httpx.Request`` (its URL parsed and
    checked character by character) and an ``httpx.Response`` for every call cost about
    0.25 ms of CPU, half the client's share of a call (issue 47). A failure is still raised
    as a ``wire.WireError`` named as httpx names it (``_EXCEPTIONS``), which the boundary reads.
    """

    def __init__(self, *, verify: ssl.SSLContext, connections: int, limit: int) -> None:
        self._ssl = verify
        self._connections = connections
        self._limit = limit
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

    async def send(
        self, verb: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """``verb`` ``url`` sent as signed (``yarl.URL(url, encoded=True)``: no re-quoting),
        and the answer read within the size cap; a connection whose answer was not read to
        its end is closed, never handed back to the pool."""
        session = self._session or self._open()
        try:
            response = await session.request(
                verb,
                yarl.URL(url, encoded=True),
                headers=headers,
                data=content,
                allow_redirects=False,
            )
            try:
                return await self._answer(response)
            finally:
                if response.content.at_eof():
                    response.release()
                else:
                    response.close()
        except aiohttp.ClientError as exc:
            raise _as_wire(exc) from exc

    async def _answer(self, response: aiohttp.ClientResponse) -> Answer:
        status, fields = response.status, response.headers
        if status in REDIRECT_STATUSES:
            return Answer(status, b"", location=fields.get(_LOCATION, ""))
        wait = retry_after(fields.get(_RETRY_AFTER))
        encoding = fields.get(_CODING, "")
        length = response.content_length
        if length is not None and length <= SMALL_BODY and not encoding:
            content = await response.read()  # the connection goes back to the pool
            if len(content) <= self._limit:
                return Answer(status, content, wait)
            return Answer(status, b"", wait, defect=too_large(self._limit))
        body, defect = await read_chunks(response.content.iter_any(), encoding, self._limit)
        return Answer(status, body, wait, defect=defect)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
