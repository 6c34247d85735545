"""``SiteClient``: the one way the reconciler talks to a site.

Every method goes through one path, :meth:`SiteClient._call`: take a concurrency slot and a
rate-limit token, sign with a fresh timestamp, send, decode by the body's shape (never by the
status alone), log one event, and decide whether to try again. Per-method code is only its
parameters and its pure decoder from ``reconciler.api.decode``.

Retry policy (why: a read can be repeated at will; a write repeated blindly can be applied
twice, and ``workspace_add`` is not idempotent):

* reads: up to ``read_attempts`` tries on transport errors, 5xx and 429, waiting with
  exponential backoff and full jitter, or ``Retry-After`` when the site sends one (429, 503);
* writes: tried again only when the site provably did not act -- a 429, or a connection that
  was never established. A write that got no answer after it was sent raises
  ``OutcomeUnknown`` (so does a 502/504 from a gateway, which may have forwarded it); a 500/503
  raises ``ServerError`` that says the change was most likely not made, and is not retried.

Secrets: the secret is revealed only to the signer; signatures exist only in the request sent.
Nothing logged or raised here contains a URL's query string or a request body.
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
from reconciler.api import answers, decode, methods, records, spec
from reconciler.api.config import ClientConfig
from reconciler.api.errors import (
    OutcomeUnknown,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteError,
    TransportError,
)
from reconciler.api.methods import UNKNOWN_OUTCOME_HINT, ApiMethod, id_list, workspace_add_params
from reconciler.api.ratelimit import TokenBucket
from reconciler.api.signing import method_url, sign_get_url, sign_post
from reconciler.api.xmlcodec import PROTOCOL_HINT

T = TypeVar("T")
log = structlog.get_logger("reconciler.api")


_FORM = {"Content-Type": "application/x-www-form-urlencoded"}
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)
"""Transport failures that happen before a byte of the request left: safe to retry a write."""

UNREACHABLE_HINT = (
    "Check the site URL and the network (DNS, proxy, firewall); if the site is slow, "
    "raise the timeout or lower --concurrency."
)


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


@dataclass(slots=True)
class _Attempt:
    """The outcome of one request: a decoded value or an error, and what the log needs."""

    duration_ms: float
    status: int | None = None
    value: Any = None
    error: SiteError | None = None
    retry_after: float | None = None


class SiteClient:
    """Async client of one site; use as ``async with SiteClient(config) as client:``.

    ``transport`` is the seam for tests (the sandbox in-process, or an ``httpx.MockTransport``);
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
        self._clock, self._sleep, self._jitter = clock, sleep, jitter
        self._slots = asyncio.Semaphore(config.concurrency)
        self._bucket = TokenBucket(config.rate_limit) if config.rate_limit else None
        self._suffix = ".xml" if config.response_format == "xml" else ""
        accept = "application/xml" if self._suffix else "application/json"
        self._http = httpx.AsyncClient(
            transport=transport or _network_transport(config.concurrency),
            timeout=httpx.Timeout(config.timeout),
            follow_redirects=False,
            headers={"User-Agent": f"site-reconciler/{__version__}", "Accept": accept},
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
        return await self._call(
            methods.USER_INFO, {"user_id": str(user_id)}, decode.decode_user_info
        )

    async def user_list(self, *, expected_total: int | None = None) -> list[records.UserSummary]:
        """Every user, all pages. ``expected_total`` (a hint) lets the pages load concurrently.

        The hint only decides how many pages are fetched at once; reading goes on while the
        last page is full, so a wrong hint costs time, never users.
        """
        size = spec.USER_LIST_PAGE_SIZE
        first = expected_total // size + 1 if expected_total else 1
        loaded = await asyncio.gather(
            *(self._user_page(n) for n in range(1, first + 1)), return_exceptions=True
        )
        pages = [_raise_if_error(page) for page in loaded]
        seen = {user.id for page in pages for user in page}
        while len(pages[-1]) >= size:
            page = await self._user_page(len(pages) + 1)
            if page and {user.id for user in page} <= seen:
                raise _repeated_page(len(pages) + 1)
            seen.update(user.id for user in page)
            pages.append(page)
        unique = {user.id: user for page in pages for user in page}
        return list(unique.values())

    async def _user_page(self, number: int) -> tuple[records.UserSummary, ...]:
        return await self._call(
            methods.USER_LIST, {"current_page": str(number)}, decode.decode_user_list
        )

    async def users_location_access(
        self, path: str = "/", *, non_admins_only: bool = False
    ) -> list[records.LocationEntry]:
        params = {"path": path, **({"type": "nonAdminsOnly"} if non_admins_only else {})}
        entries = await self._call(
            methods.USERS_LOCATION_ACCESS, params, decode.decode_users_location_access
        )
        return list(entries)

    async def user_permissions_location(self, path: str) -> records.LocationPermissions:
        return await self._call(
            methods.USER_PERMISSIONS_LOCATION,
            {"path": path},
            decode.decode_user_permissions_location,
        )

    async def workspace_list(self) -> list[records.WorkspaceEntry]:
        return list(await self._call(methods.WORKSPACE_LIST, {}, decode.decode_workspace_list))

    async def workspace_info(self, workspace_id: int) -> records.WorkspaceInfo:
        params = {"workspace_id": str(workspace_id)}
        return await self._call(methods.WORKSPACE_INFO, params, decode.decode_workspace_info)

    # --- writes ---------------------------------------------------------------------------

    async def workspace_add(
        self, names: Sequence[str], settings: records.WorkspaceSettings
    ) -> list[int]:
        """Create workspaces sharing ``settings``; their IDs in the order of ``names``."""
        params = workspace_add_params(names, settings)
        return list(await self._call(methods.WORKSPACE_ADD, params, decode.decode_workspace_add))

    async def workspace_delete(self, workspace_id: int) -> int:
        """Delete a workspace **and every file in it**; the engine guards the decision."""
        params = {"workspace_id": str(workspace_id)}
        return await self._call(methods.WORKSPACE_DELETE, params, decode.decode_workspace_delete)

    async def user_group_add(self, name: str, member_ids: Sequence[int]) -> records.GroupCreated:
        params = {"name": name, **({"group_users": id_list(member_ids)} if member_ids else {})}
        return await self._call(methods.USER_GROUP_ADD, params, decode.decode_user_group_add)

    async def user_group_delete(self, group_id: int) -> int:
        params = {"user_group_id": str(group_id)}
        return await self._call(methods.USER_GROUP_DELETE, params, decode.decode_user_group_delete)

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
        self, method: ApiMethod, ids_param: str, user_id: int, target_ids: Sequence[int]
    ) -> records.MembershipChange:
        params = {"user_id": str(user_id), ids_param: id_list(target_ids)}
        decoder = decode.membership_decoder(method.name, method.keys[0])
        return await self._call(method, params, decoder)

    # --- the one path every call takes ----------------------------------------------------

    async def _call(
        self, method: ApiMethod, params: Mapping[str, str], decoder: Callable[[Any], T]
    ) -> T:
        attempt = 0
        while True:
            attempt += 1
            result = await self._attempt(method, params, decoder)
            delay = None if result.error is None else self._retry_delay(method, result, attempt)
            _log_attempt(method, attempt, result, delay)
            if result.error is None:
                return cast(T, result.value)
            if delay is None:
                self.stats.failures += 1
                raise result.error
            self.stats.retries += 1
            await self._sleep(delay)

    async def _attempt(
        self, method: ApiMethod, params: Mapping[str, str], decoder: Callable[[Any], T]
    ) -> _Attempt:
        async with self._slots:
            if self._bucket is not None:
                await self._bucket.acquire()
            request = self._signed_request(method, params)
            self._count(method)
            started = time.perf_counter()
            try:
                response = await self._http.send(request)
            except httpx.HTTPError as exc:
                return _Attempt(_ms_since(started), error=self._transport_error(method, exc))
        result = _Attempt(_ms_since(started), status=response.status_code)
        result.retry_after = _retry_after(response)
        answer = answers.Answer(
            method.name, response.status_code, response.content, result.retry_after
        )
        try:
            _refuse_redirect(method, response)
            result.value = decoder(answers.success_payload(answer, method.keys))
        except SiteError as error:
            result.error = method.reinterpret(error)
        return result

    def _signed_request(self, method: ApiMethod, params: Mapping[str, str]) -> httpx.Request:
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

    def _count(self, method: ApiMethod) -> None:
        self.stats.calls[method.name] = self.stats.calls.get(method.name, 0) + 1
        self.stats.writes += method.is_write

    def _transport_error(self, method: ApiMethod, exc: httpx.HTTPError) -> TransportError:
        what = f"{type(exc).__name__}: {_scrub(str(exc)) or 'no detail'}"
        if method.is_write and not isinstance(exc, _NOT_SENT):
            error: TransportError = OutcomeUnknown(
                f"{method.name}: the connection failed after the request was sent ({what}); "
                "the site may or may not have applied the change.",
                method=method.name,
                hint=UNKNOWN_OUTCOME_HINT,
            )
        else:
            error = TransportError(
                f"{method.name}: no answer from {self.config.site_url} ({what}).",
                method=method.name,
                hint=UNREACHABLE_HINT,
            )
        error.__cause__ = exc
        return error

    def _retry_delay(self, method: ApiMethod, result: _Attempt, attempt: int) -> float | None:
        """Seconds to wait before trying again, or ``None`` when this error is final."""
        error = result.error
        if attempt >= self.config.read_attempts or error is None or not method.may_retry(error):
            return None
        if result.retry_after is not None and isinstance(error, RateLimited | ServerError):
            return result.retry_after if result.retry_after <= self.config.max_retry_after else None
        cap = min(self.config.backoff_max, self.config.backoff_base * 2.0 ** (attempt - 1))
        return self._jitter() * cap


def _refuse_redirect(method: ApiMethod, response: httpx.Response) -> None:
    if not response.is_redirect:
        return
    target = response.headers.get("Location", "").split("?", 1)[0]
    raise ProtocolError(
        f"{method.name}: the site redirected the call (HTTP {response.status_code}) to "
        f"{target or 'an unnamed address'}; redirects are not followed.",
        method=method.name,
        status=response.status_code,
        hint="Give the final address as --site/SITE_URL (often https:// instead of http://). "
        + PROTOCOL_HINT,
    )


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


def _log_attempt(method: ApiMethod, attempt: int, result: _Attempt, delay: float | None) -> None:
    outcome = "ok" if result.error is None else type(result.error).__name__
    fields: dict[str, Any] = {
        "method": method.name,
        "attempt": attempt,
        "status": result.status,
        "duration_ms": round(result.duration_ms, 1),
        "outcome": outcome,
    }
    if result.error is None:
        log.info("api_call", **fields)
    elif delay is not None:
        log.warning("api_call", retry_in_s=round(delay, 3), error=result.error.message, **fields)
    else:
        log.warning("api_call", error=result.error.message, **fields)


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from ``Retry-After``; an HTTP date or junk is ignored (backoff applies)."""
    try:
        seconds = float(response.headers.get("Retry-After", "").strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _scrub(text: str) -> str:
    """An httpx message without any query string: URLs there carry the signature."""
    return " ".join(word.split("?", 1)[0] for word in text.split(" "))


def _network_transport(concurrency: int) -> httpx.AsyncHTTPTransport:
    """TLS verified, a connection for every slot, no hidden retries (the client decides)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.AsyncHTTPTransport(verify=True, limits=limits, retries=0)
