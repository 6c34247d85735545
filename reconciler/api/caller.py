"""The one path every call takes: slot, rate limit, signing, deadline, capped read, the
boundary, the retry policy, and one log event per request.

``SiteClient`` says what each API method sends; ``Caller.call`` does the rest the same way
for all of them: take a concurrency slot and a rate-limit token, sign with a fresh
timestamp, send, read the answer within the call's deadline and size cap, hand what came
back to the boundary (``boundary.Boundary``: a typed answer or one ``SiteError``), log one event,
and ask the retry policy (``retry.RetryPolicy``) whether to try again.

Limits, so no site can hold a run or fill memory: a call ends within ``timeout`` seconds in
all (every attempt, its whole answer and the waits between them; not its wait for the first
slot); an answer is cut off past ``max_answer_bytes``, counted after decompression.

The seam: a call is sent through a ``Transport`` (a signed request in, the ``boundary.Answer``
out, or a ``wire.WireError``). The network's is ``transport.AiohttpTransport``, which makes no
httpx object on the way; any httpx transport given -- the sandbox mounted in-process, a test's
wrapper around one -- is sent through as before with ``mounted.MountedTransport``. Each is
imported only when used: a plan on the network never imports httpx.

Secrets: the secret is revealed only to the signer; signatures exist only in the request sent.
Nothing logged or raised here contains a URL's query string or a request body, and what the
site says is scrubbed by the boundary before anyone sees it.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import structlog
from structlog.typing import FilteringBoundLogger

from reconciler import __version__
from reconciler.api.body import ACCEPT_ENCODING
from reconciler.api.boundary import Answer, Attempt, Boundary
from reconciler.api.config import ClientConfig, check_ca_file
from reconciler.api.methods import ApiMethod
from reconciler.api.ratelimit import TokenBucket
from reconciler.api.retry import RetryPolicy
from reconciler.api.signing import Signer, method_url
from reconciler.api.wire import WireError

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")
log = structlog.get_logger("reconciler.api")

_FORM = {"Content-Type": "application/x-www-form-urlencoded"}

SendGuard = Callable[[], Awaitable[None]]
"""Called for a write once it may leave -- after its slot and rate-token waits, each attempt --
and raises to keep it from leaving. The waits can be long (``--rate-limit``, a process frozen
while it waited): whatever allowed the write when it was queued (its sender's lock on the
site, say) is checked again here, where nothing stands between the check and the send."""


@dataclass
class ClientStats:
    """Requests sent, by method (retries included, as the site counts them), and outcomes."""

    calls: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    writes: int = 0
    failures: int = 0

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def snapshot(self) -> ClientStats:
        return ClientStats(dict(self.calls), self.retries, self.writes, self.failures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": dict(sorted(self.calls.items())),
            "retries": self.retries,
            "writes": self.writes,
            "failures": self.failures,
            "total": self.total,
        }


class Transport(Protocol):
    async def send(
        self, verb: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """Send the signed request; the answer, or a ``wire.WireError`` (or the deadline's
        ``TimeoutError``, which the caller holds around it)."""
        ...

    async def aclose(self) -> None: ...


class Caller:
    """Sends the calls of one client; owns its HTTP connections, limits and counters."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None,
        clock: Callable[[], float],
        sleep: Callable[[float], Awaitable[None]],
        jitter: Callable[[], float],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.stats = ClientStats()
        self._clock, self._sleep = clock, sleep
        # Bound once: the module's lazy proxy would rebuild a logger from the configuration
        # at every event, two events a call (logging is configured before a client is made).
        self._log: FilteringBoundLogger = log.bind()
        # The level is fixed before a client is made: an event nobody sees is not built.
        self._debug = self._log.is_enabled_for(logging.DEBUG)
        self._info = self._log.is_enabled_for(logging.INFO)
        self._signer = Signer(config.site_url, config.api_key, config.api_secret.reveal())
        self._boundary = Boundary(config)
        self._retry = RetryPolicy(config, jitter)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._bucket = (
            TokenBucket(config.rate_limit, clock=monotonic, sleep=sleep)
            if config.rate_limit
            else None
        )
        self._suffix = ".xml" if config.response_format == "xml" else ""
        accept = "application/xml" if self._suffix else "application/json"
        # A given httpx transport is called directly, without an httpx.AsyncClient around it:
        # its URL merging, auth and redirect steps and cookie jar cost about 0.13 ms of CPU a
        # call and do nothing here (absolute signed URLs, no redirects followed, no cookies).
        self._transport: Transport = (
            _network_transport(config) if transport is None else _mounted(transport, config)
        )
        self._headers = {
            "Accept": accept,
            "Accept-Encoding": ACCEPT_ENCODING,
            "Connection": "keep-alive",
            "User-Agent": f"site-reconciler/{__version__}",
        }
        self._post_headers = {**self._headers, **_FORM}

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def call(
        self, method: ApiMethod[T], params: Mapping[str, str], before_send: SendGuard | None = None
    ) -> T:
        """``method`` called with ``params``: its typed answer, or the one error it ended in (or
        what ``before_send`` raised, the write unsent)."""
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        attempt = 0
        while True:
            attempt += 1
            async with self._slots:
                if self._bucket is not None:
                    await self._bucket.acquire()
                if deadline is None:  # the deadline starts once the call may send
                    deadline = loop.time() + self.config.timeout
                if before_send is not None and method.is_write:
                    # after the deadline began: the guard's own time (the journal's write)
                    # comes out of the call's, so the landing time it records still holds
                    await before_send()
                started = time.perf_counter()
                sent = await self._attempt(method, params, deadline)
            if isinstance(sent, Answer):
                # The slot is another call's while this answer is read: it goes out now,
                # not after the decoding (some 0.4 ms a call; a read holds every slot busy).
                await asyncio.sleep(0)
                outcome = self._boundary.answer(method, params, sent)
            else:
                outcome = sent
            duration_ms = _ms_since(started)
            delay = self._retry.delay(method, outcome, attempt, deadline - loop.time())
            if self._info:
                _log_attempt(self._log, method, attempt, outcome, duration_ms, delay)
            if outcome.error is None:
                return cast(T, outcome.value)
            if delay is None:
                self.stats.failures += 1
                raise outcome.error
            self.stats.retries += 1
            await self._sleep(delay)

    async def _attempt(
        self, method: ApiMethod[T], params: Mapping[str, str], deadline: float
    ) -> Answer | Attempt:
        """The site's answer, still to be read (``Boundary.answer``), or the failed attempt."""
        if asyncio.get_running_loop().time() >= deadline:  # spent waiting for a slot
            return self._boundary.exception(method, TimeoutError(), sent=False)
        verb, url, headers, content = self._signed_request(method, params)
        self._count(method)
        try:
            async with asyncio.timeout_at(deadline):
                answer = await self._transport.send(verb, url, headers, content)
        except (WireError, TimeoutError) as exc:
            # Whether a write may have left is read from the error: only a failure to
            # connect says it did not (``WireError.sent``).
            return self._boundary.exception(method, exc, sent=True)
        return answer

    def _signed_request(
        self, method: ApiMethod[Any], params: Mapping[str, str]
    ) -> tuple[str, str, dict[str, str], bytes | None]:
        """Sign as late as possible: a call that queued for a slot still has a fresh timestamp.
        The verb, the URL, the headers and the body to send."""
        timestamp = int(self._clock())
        path = method.name + self._suffix
        if self._debug:
            where = method_url(self.config.site_url, path)
            self._log.debug(
                "api_request", method=method.name, url=where, api_key=self.config.masked_key
            )
        if method.verb == "GET":
            return "GET", self._signer.get_url(path, params, timestamp), self._headers, None
        url, body = self._signer.post(path, params, timestamp)
        return "POST", url, self._post_headers, body.encode("ascii")

    def _count(self, method: ApiMethod[Any]) -> None:
        self.stats.calls[method.name] = self.stats.calls.get(method.name, 0) + 1
        self.stats.writes += method.is_write


def _log_attempt(
    logger: FilteringBoundLogger,
    method: ApiMethod[Any],
    attempt: int,
    outcome: Attempt,
    duration_ms: float,
    delay: float | None,
) -> None:
    """One event per request, at info: per-call events reach the terminal only with ``-v``
    (an expected failure is reported once, as the command's error message)."""
    fields: dict[str, Any] = {
        "method": method.name,
        "attempt": attempt,
        "status": outcome.status,
        "duration_ms": round(duration_ms, 1),
        "outcome": "ok" if outcome.error is None else type(outcome.error).__name__,
    }
    if outcome.error is not None:
        fields["error"] = outcome.error.message
    if delay is not None:
        fields["retry_in_s"] = round(delay, 3)
    logger.info("api_call", **fields)


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _mounted(transport: httpx.AsyncBaseTransport, config: ClientConfig) -> Transport:
    from reconciler.api.mounted import MountedTransport

    return MountedTransport(transport, timeout=config.timeout, limit=config.max_answer_bytes)


def _network_transport(config: ClientConfig) -> Transport:
    """TLS verified, a connection for every slot, no hidden retries (the client decides);
    aiohttp underneath (``api.transport``), imported only when the network is used.

    A plain-http site (loopback only, ``config.check_site_url``) never makes a TLS connection
    -- every URL is the site's own and redirects are not followed -- so it gets a verifying
    context that trusts no authority instead of loading the default ones (30 ms).
    """
    from reconciler.api.transport import AiohttpTransport

    if not config.site_url.startswith("https:"):
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    elif config.ca_file is not None:
        verify = check_ca_file(config.ca_file)
    else:
        import httpx  # its authorities, as before; only an https site imports it

        verify = httpx.create_ssl_context()
    return AiohttpTransport(
        verify=verify, connections=config.concurrency, limit=config.max_answer_bytes
    )
