"""``SiteClient``: the one way the reconciler talks to a site.

Every method goes through one path, :meth:`SiteClient._call`: take a concurrency slot and a
rate-limit token, sign with a fresh timestamp, send, read the answer within the call's
deadline and size cap, hand what came back to the boundary (``boundary.Boundary``: a record
or one ``SiteError``), log one event, and ask the retry policy (``retry.RetryPolicy``)
whether to try again. Per-method code is only its parameters; its verb, success keys and
decoder are its row in ``reconciler.api.methods``.

Limits, so no site can hold a run or fill memory: a call ends within ``timeout`` seconds in
all (every attempt, its whole answer and the waits between them); an answer is cut off past
``max_answer_bytes``, counted after decompression as it streams in; ``user_list`` stops at a
page cap derived from the user count the site reported.

Secrets: the secret is revealed only to the signer; signatures exist only in the request sent.
Nothing logged or raised here contains a URL's query string or a request body, and what the
site says is scrubbed by the boundary before anyone sees it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx
import structlog

from reconciler import __version__
from reconciler.api import methods, records, spec
from reconciler.api.body import ACCEPT_ENCODING, read_body
from reconciler.api.boundary import Answer, Boundary, Outcome
from reconciler.api.config import ClientConfig
from reconciler.api.errors import PROTOCOL_HINT, NotFound, ProtocolError, SiteError
from reconciler.api.methods import ApiMethod, id_list, workspace_add_params
from reconciler.api.ratelimit import TokenBucket
from reconciler.api.retry import RetryPolicy
from reconciler.api.signing import method_url, sign_get_url, sign_post

T = TypeVar("T")
log = structlog.get_logger("reconciler.api")


_FORM = {"Content-Type": "application/x-www-form-urlencoded"}
PAGE_SLACK = 20
"""Pages read beyond twice the count the site reported before ``user_list`` gives up: users
may be added while the list is read, and the count may leave some users out."""


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


class SiteClient:
    """Async client of one site; use as ``async with SiteClient(config) as client:``.

    ``transport`` is the seam for tests (the sandbox in-process, or a loopback server);
    ``clock``, ``sleep`` and ``jitter`` make timestamps and waits injectable.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.stats = ClientStats()
        self._clock, self._sleep = clock, sleep
        self._boundary = Boundary(config)
        self._retry = RetryPolicy(config, jitter)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._bucket = TokenBucket(config.rate_limit) if config.rate_limit else None
        self._location_method: ApiMethod[tuple[records.LocationEntry, ...]] | None = None
        self._location_probe = asyncio.Lock()
        self._suffix = ".xml" if config.response_format == "xml" else ""
        accept = "application/xml" if self._suffix else "application/json"
        self._http = httpx.AsyncClient(
            transport=transport or _network_transport(config.concurrency),
            timeout=httpx.Timeout(config.timeout),
            follow_redirects=False,
            headers={
                "User-Agent": f"site-reconciler/{__version__}",
                "Accept": accept,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )

    async def __aenter__(self) -> SiteClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    def __repr__(self) -> str:
        return f"SiteClient({self.config.site_url!r}, api_key={self.config.masked_key!r})"

    # --- reads ----------------------------------------------------------------------------

    async def user_info(self, user_id: int) -> records.UserInfo:
        return await self._call(methods.USER_INFO, {"user_id": str(user_id)})

    async def user_list(self, *, expected_total: int | None = None) -> list[records.UserSummary]:
        """Every user, all pages. ``expected_total`` (the site's own count) lets the pages load
        concurrently and bounds how many are read.

        Reading goes on while the last page is full, so a low count costs time, never users --
        up to twice the pages the count implies (plus ``PAGE_SLACK``), or
        ``max_user_pages`` without a count: a site that never answers a short page is
        reported, not read forever.
        """
        size = spec.USER_LIST_PAGE_SIZE
        expected = None if expected_total is None else max(expected_total, 0) // size + 1
        limit = self.config.max_user_pages if expected is None else 2 * expected + PAGE_SLACK
        first = min(expected or 1, limit)
        loaded = await asyncio.gather(
            *(self._user_page(n) for n in range(1, first + 1)), return_exceptions=True
        )
        pages = [_raise_if_error(page) for page in loaded]
        seen = {user.id for page in pages for user in page}
        while len(pages[-1]) >= size:
            if len(pages) >= limit:
                raise _endless_list(limit, expected_total)
            page = await self._user_page(len(pages) + 1)
            if page and {user.id for user in page} <= seen:
                raise _repeated_page(len(pages) + 1)
            seen.update(user.id for user in page)
            pages.append(page)
        unique = {user.id: user for page in pages for user in page}
        return list(unique.values())

    async def _user_page(self, number: int) -> tuple[records.UserSummary, ...]:
        return await self._call(methods.USER_LIST, {"current_page": str(number)})

    async def users_location_access(
        self, path: str = "/", *, non_admins_only: bool = False
    ) -> list[records.LocationEntry]:
        """Users and groups with access to ``path``.

        Older (FileGenius-era) sites call the method ``user_location_access``: when the site
        says it has no method of the documented name, the old name is tried, once per client,
        and whichever name works is used from then on.
        """
        params = {"path": path, **({"type": "nonAdminsOnly"} if non_admins_only else {})}
        if self._location_method is None:
            async with self._location_probe:
                if self._location_method is None:
                    return list(await self._probe_location_method(params, path))
        return list(await self._call(self._location_method, params))

    async def _probe_location_method(
        self, params: Mapping[str, str], path: str
    ) -> tuple[records.LocationEntry, ...]:
        current, legacy = methods.USERS_LOCATION_ACCESS, methods.USER_LOCATION_ACCESS
        try:
            entries = await self._call(current, params)
        except SiteError as error:
            if not _method_missing(error, path):
                raise
            try:
                entries = await self._call(legacy, params)
            except SiteError as legacy_error:
                if _method_missing(legacy_error, path):
                    self._location_method = current  # neither exists: do not probe again
                    raise error from None
                self._location_method = legacy  # it exists; this call was refused
                raise
            self._location_method = legacy
            return entries
        self._location_method = current
        return entries

    async def user_permissions_location(self, path: str) -> records.LocationPermissions:
        """The caller's permissions at ``path``; its ``user_id`` is the caller's own user ID."""
        return await self._call(methods.USER_PERMISSIONS_LOCATION, {"path": path})

    async def workspace_list(self) -> list[records.WorkspaceEntry]:
        return list(await self._call(methods.WORKSPACE_LIST, {}))

    async def workspace_info(self, workspace_id: int) -> records.WorkspaceInfo:
        return await self._call(methods.WORKSPACE_INFO, {"workspace_id": str(workspace_id)})

    # --- writes ---------------------------------------------------------------------------

    async def workspace_add(
        self, names: Sequence[str], settings: records.WorkspaceSettings
    ) -> list[int]:
        """Create workspaces sharing ``settings``; their IDs in the order of ``names``."""
        params = workspace_add_params(names, settings)
        return list(await self._call(methods.WORKSPACE_ADD, params))

    async def workspace_delete(self, workspace_id: int) -> int:
        """Delete a workspace **and every file in it**; the engine guards the decision."""
        return await self._call(methods.WORKSPACE_DELETE, {"workspace_id": str(workspace_id)})

    async def user_add(self, user: records.NewUser) -> int:
        """Create a user; the new user's ID. No password is sent: the site e-mails the login."""
        return await self._call(methods.USER_ADD, methods.user_add_params(user))

    async def user_delete(self, user_id: int) -> int:
        """Delete a user; the deleted user's ID."""
        return await self._call(methods.USER_DELETE, {"user_id": str(user_id)})

    async def user_group_add(self, name: str, member_ids: Sequence[int]) -> records.GroupCreated:
        params = {"name": name, **({"group_users": id_list(member_ids)} if member_ids else {})}
        return await self._call(methods.USER_GROUP_ADD, params)

    async def user_group_delete(self, group_id: int) -> int:
        return await self._call(methods.USER_GROUP_DELETE, {"user_group_id": str(group_id)})

    async def add_to_user_group(
        self, user_id: int, group_ids: Sequence[int]
    ) -> records.MembershipChange:
        return await self._membership(
            methods.ADD_TO_USER_GROUP, "user_group_ids", user_id, group_ids
        )

    async def remove_from_user_group(
        self, user_id: int, group_ids: Sequence[int]
    ) -> records.MembershipChange:
        return await self._membership(
            methods.REMOVE_FROM_USER_GROUP, "user_group_ids", user_id, group_ids
        )

    async def add_to_workspace(
        self, user_id: int, workspace_ids: Sequence[int]
    ) -> records.MembershipChange:
        return await self._membership(
            methods.ADD_TO_WORKSPACE, "user_workspace_ids", user_id, workspace_ids
        )

    async def remove_from_workspace(
        self, user_id: int, workspace_ids: Sequence[int]
    ) -> records.MembershipChange:
        return await self._membership(
            methods.REMOVE_FROM_WORKSPACE, "user_workspace_ids", user_id, workspace_ids
        )

    async def _membership(
        self,
        method: ApiMethod[records.MembershipChange],
        ids_param: str,
        user_id: int,
        target_ids: Sequence[int],
    ) -> records.MembershipChange:
        return await self._call(method, {"user_id": str(user_id), ids_param: id_list(target_ids)})

    # --- the one path every call takes ----------------------------------------------------

    async def _call(self, method: ApiMethod[T], params: Mapping[str, str]) -> T:
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
                started = time.perf_counter()
                outcome = await self._attempt(method, params, deadline)
            duration_ms = _ms_since(started)
            delay = self._retry.delay(method, outcome, attempt, deadline - loop.time())
            _log_attempt(method, attempt, outcome, duration_ms, delay)
            if outcome.error is None:
                return cast(T, outcome.value)
            if delay is None:
                self.stats.failures += 1
                raise outcome.error
            self.stats.retries += 1
            await self._sleep(delay)

    async def _attempt(
        self, method: ApiMethod[T], params: Mapping[str, str], deadline: float
    ) -> Outcome:
        if asyncio.get_running_loop().time() >= deadline:  # spent waiting for a slot
            return self._boundary.exception(method, TimeoutError(), sent=False)
        request = self._signed_request(method, params)
        tracer = _SendTracer()
        request.extensions["trace"] = tracer
        self._count(method)
        try:
            async with asyncio.timeout_at(deadline):
                answer = await self._receive(request)
        except (httpx.HTTPError, TimeoutError) as exc:
            return self._boundary.exception(method, exc, sent=tracer.may_have_sent)
        return self._boundary.answer(method, params, answer)

    async def _receive(self, request: httpx.Request) -> Answer:
        """Send, and read the answer as it streams in, up to ``max_answer_bytes`` decoded
        (``body.read_body``: httpx's own decompression is bypassed, it is not bounded)."""
        response = await self._http.send(request, stream=True)
        try:
            if response.is_redirect:
                location = response.headers.get("Location", "")
                return Answer(response.status_code, b"", location=location)
            content, defect = await read_body(response, self.config.max_answer_bytes)
            return Answer(response.status_code, content, _retry_after(response), defect=defect)
        finally:
            await response.aclose()

    def _signed_request(self, method: ApiMethod[Any], params: Mapping[str, str]) -> httpx.Request:
        """Sign as late as possible: a call that queued for a slot still has a fresh timestamp."""
        cfg = self.config
        timestamp = int(self._clock())
        path = method.name + self._suffix
        key, secret = cfg.api_key, cfg.api_secret.reveal()
        where = method_url(cfg.site_url, path)
        log.debug("api_request", method=method.name, url=where, api_key=cfg.masked_key)
        if method.verb == "GET":
            url = sign_get_url(cfg.site_url, path, params, key, secret, timestamp)
            return self._http.build_request("GET", url)
        url, body = sign_post(cfg.site_url, path, params, key, secret, timestamp)
        return self._http.build_request("POST", url, content=body.encode("ascii"), headers=_FORM)

    def _count(self, method: ApiMethod[Any]) -> None:
        self.stats.calls[method.name] = self.stats.calls.get(method.name, 0) + 1
        self.stats.writes += method.is_write


class _SendTracer:
    """httpcore's ``trace`` hook: did any byte of the request start to leave?

    A transport that reports no events at all (in-process ones) may have sent it.
    """

    def __init__(self) -> None:
        self._events = 0
        self._sending = False

    async def __call__(self, name: str, info: Mapping[str, Any]) -> None:
        self._events += 1
        self._sending = self._sending or name.endswith("send_request_headers.started")

    @property
    def may_have_sent(self) -> bool:
        return self._sending or not self._events


def _method_missing(error: SiteError, path: str) -> bool:
    """Whether ``error`` says the site has no such *method* (not: no such location).

    A 404 page that is not an API body, or a NotFound at ``/`` (which always exists) or one
    whose title names a method (the sandbox's "Unknown Method").
    """
    if isinstance(error, ProtocolError):
        return error.status == 404
    return isinstance(error, NotFound) and (path == "/" or "method" in (error.title or "").lower())


def _raise_if_error(result: T | BaseException) -> T:
    if isinstance(result, BaseException):
        raise result
    return result


def _repeated_page(number: int) -> ProtocolError:
    return ProtocolError(
        f"user_list: page {number} repeated users of earlier pages; the site seems to ignore "
        "current_page, so the list cannot be read to its end.",
        method=methods.USER_LIST.name,
        hint=PROTOCOL_HINT,
    )


def _endless_list(limit: int, expected_total: int | None) -> ProtocolError:
    reported = (
        "without a user count from the site"
        if expected_total is None
        else f"although the site reported {expected_total} users"
    )
    return ProtocolError(
        f"user_list: page {limit} was still full {reported}; reading stopped after {limit} "
        f"pages ({limit * spec.USER_LIST_PAGE_SIZE} users).",
        method=methods.USER_LIST.name,
        hint="The site keeps answering full pages. " + PROTOCOL_HINT,
    )


def _log_attempt(
    method: ApiMethod[Any], attempt: int, outcome: Outcome, duration_ms: float, delay: float | None
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
    log.info("api_call", **fields)


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from ``Retry-After``; an HTTP date or junk is ignored (backoff applies)."""
    try:
        seconds = float(response.headers.get("Retry-After", "").strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _network_transport(concurrency: int) -> httpx.AsyncHTTPTransport:
    """TLS verified, a connection for every slot, no hidden retries (the client decides)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.AsyncHTTPTransport(verify=True, limits=limits, retries=0)
