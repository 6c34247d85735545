"""``SiteClient`` against the sandbox, in-process: every method, every error, retries, limits.

The sandbox is mounted through ``SandboxTransport``; faults are switched through its control
surface. Where the sandbox cannot produce a case (junk bodies, a proxy's 502, a refused
connection), an ``httpx.MockTransport`` plays the network -- never the client itself.
``test_client_loopback.py`` runs the same scenarios over a real socket.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, MutableMapping
from typing import Any

import httpx
import pytest

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.boundary import UNKNOWN_OUTCOME_HINT, WRITE_FAILED_HINT
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import (
    AuthenticationError,
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    PermissionDenied,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteError,
    TransportError,
)
from reconciler.sandbox.app import create_app
from reconciler.sandbox.settings import SandboxSettings
from tests.support.client_site import (
    FORMATS,
    IN_PROCESS_URL,
    VIEWER_KEY,
    VIEWER_SECRET,
    Site,
    exercise_every_method,
    seed_with_users,
)
from tests.support.virtual_time import VirtualTime

pytestmark = pytest.mark.anyio


@pytest.fixture
def site() -> Site:
    return Site(IN_PROCESS_URL, create_app(seed=seed_with_users()))


def sandbox_with(settings: SandboxSettings, total_users: int | None = None) -> Site:
    return Site(IN_PROCESS_URL, create_app(settings, seed=seed_with_users(total_users)))


# --- every method -------------------------------------------------------------------------


@pytest.mark.parametrize("response_format", FORMATS)
async def test_every_method_in_each_format(site: Site, response_format: str) -> None:
    await exercise_every_method(site, response_format)
    calls = await site.calls()
    assert set(calls) >= {"user_info", "workspace_add", "remove_from_workspace", "user_list"}


@pytest.mark.parametrize("response_format", FORMATS)
async def test_legacy_workspace_list_and_open_listing(response_format: str) -> None:
    site = sandbox_with(SandboxSettings(legacy_workspace_list=True, open_workspace_list=True))
    async with site.client(response_format=response_format) as client:
        assert [w.name for w in await client.workspace_list()] == ["Legacy Scans"]
    async with site.client(key=VIEWER_KEY, secret=VIEWER_SECRET) as viewer:
        assert await viewer.workspace_list() == []


# --- user_list pagination -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "hint", "requests"),
    [
        (120, None, 3),  # 50 + 50 + 20
        (120, 120, 3),  # the three pages at once
        (120, 10, 3),  # hint too low: one page, then read on while pages are full
        (120, 500, 11),  # hint too high: empty pages cost calls, not users
        (100, None, 3),  # two full pages: the empty third one says it is the end
        (100, 100, 3),
    ],
)
async def test_user_list_reads_every_page(total: int, hint: int | None, requests: int) -> None:
    site = sandbox_with(SandboxSettings(), total_users=total)
    async with site.client() as client:
        users = await client.user_list(expected_total=hint)
    assert len(users) == total == len({u.id for u in users})
    assert (await site.calls())["user_list"] == requests == client.stats.calls["user_list"]


class _InFlight(httpx.AsyncBaseTransport):
    """Counts the requests in flight at once (no clock: a loaded machine cannot fail it)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner, self.now, self.most = inner, 0, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await self.inner.handle_async_request(request)
        finally:
            self.now -= 1


async def test_user_list_with_a_hint_fetches_pages_concurrently() -> None:
    site = sandbox_with(SandboxSettings(latency_ms=50), total_users=120)
    counting = _InFlight(site.transport())
    async with site.client(transport=counting) as client:
        users = await client.user_list(expected_total=120)
    assert len(users) >= 120
    assert counting.most == 3  # the three pages asked for at once, not one after another


async def test_a_site_that_ignores_current_page_is_a_protocol_error() -> None:
    page = {"userList": {"users": [{"id": n, "username": f"u{n}"} for n in range(50)]}}
    mock = httpx.MockTransport(lambda request: httpx.Response(200, json=page))
    async with Site(IN_PROCESS_URL).client(transport=mock) as client:
        with pytest.raises(ProtocolError, match="current_page"):
            await client.user_list()


# --- every error class, with real statuses and with errors answered as 200 ----------------

ERRORS_AS_200 = [False, True]


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_unknown_api_key(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client(key="no-such-key") as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.user_info(1001)
    assert caught.value.hint is not None and "RECONCILER_API_KEY" in caught.value.hint
    assert caught.value.message.startswith("user_info: the site refused the call")
    assert "api_key is not known" in caught.value.message


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_bad_signature(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client(secret="wrong-secret") as client:
        with pytest.raises(AuthenticationError, match="signature") as caught:
            await client.workspace_add(["X"], WorkspaceSettings())
    assert caught.value.hint is not None and "RECONCILER_API_SECRET" in caught.value.hint
    assert client.stats.calls == {"workspace_add": 1}


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_stale_timestamp_suggests_checking_the_clock(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client(clock=lambda: time.time() - 3600) as client:
        with pytest.raises(AuthenticationError) as caught:
            await client.user_info(1001)
    assert caught.value.hint is not None and "clock" in caught.value.hint


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_a_non_admin_key_is_permission_denied(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client(key=VIEWER_KEY, secret=VIEWER_SECRET) as client:
        with pytest.raises(PermissionDenied) as caught:
            await client.user_info(1001)
        assert caught.value.hint == "Use the API key of a site administrator."
        assert "You must be an administrator" in caught.value.message
        with pytest.raises(PermissionDenied, match="access privileges") as location:
            await client.users_location_access("/")
        assert location.value.hint is not None and "location" in location.value.hint
        with pytest.raises(PermissionDenied):
            await client.workspace_list()
    assert client.stats.retries == 0


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_unknown_ids_are_not_found(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client() as client:
        with pytest.raises(NotFound, match="999999"):
            await client.user_info(999999)
        with pytest.raises(NotFound):
            await client.workspace_delete(999999)
        with pytest.raises(NotFound):
            await client.add_to_user_group(1001, [424242])


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_invalid_parameters_are_invalid_requests(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(errors_as_200=errors_as_200))
    async with site.client() as client:
        with pytest.raises(InvalidRequest, match="path must begin and end"):
            await client.users_location_access("no-slashes")
        with pytest.raises(InvalidRequest, match="Workspace Add Failed"):
            await client.workspace_add(["Legacy Scans"], WorkspaceSettings())
        with pytest.raises(InvalidRequest):
            await client.workspace_add(["x" * 41], WorkspaceSettings())


async def test_names_with_commas_never_reach_the_site(site: Site) -> None:
    async with site.client() as client:
        with pytest.raises(ValueError, match="comma"):
            await client.workspace_add(["A, B"], WorkspaceSettings())
    assert client.stats.total == 0


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_rate_limited_reads_wait_for_retry_after(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(rate_limit=2, errors_as_200=errors_as_200))
    assert site.app is not None
    now = VirtualTime()
    site.app.sandbox.clock = now.monotonic  # the site's window moves as the client waits
    async with site.client(concurrency=1, waits_on=now) as client:
        for user_id in (1001, 1002, 1003):
            await client.user_info(user_id)
    assert site.sleeps == [1.0]  # the sandbox's Retry-After, not a backoff guess
    assert client.stats.retries == 1 and (await site.calls())["user_info"] == 4


async def test_rate_limited_when_attempts_run_out(site: Site) -> None:
    await site.set(rate_limit=1)
    async with site.client(read_attempts=1) as client:
        await client.user_info(1001)
        with pytest.raises(RateLimited) as caught:
            await client.user_info(1001)
    assert caught.value.retry_after == 1.0
    assert caught.value.hint is not None and "--rate-limit" in caught.value.hint


async def test_a_retry_after_beyond_the_limit_is_reported_not_waited(site: Site) -> None:
    await site.set(rate_limit=1)
    async with site.client(max_retry_after=0.5) as client:
        await client.user_info(1001)
        with pytest.raises(RateLimited):
            await client.user_info(1001)
    assert site.sleeps == []


async def test_server_errors_on_reads_are_retried_until_they_succeed() -> None:
    site = sandbox_with(SandboxSettings(fail_rate=0.4, random_seed=7))
    async with site.client(read_attempts=8) as client:
        users = [await client.user_info(1001 + n) for n in range(10)]
    assert [u.id for u in users] == list(range(1001, 1011))
    assert client.stats.retries > 0
    assert (await site.calls())["user_info"] == 10 + client.stats.retries
    assert 1.0 in site.sleeps  # a 503 carried Retry-After: 1, and it was honoured


@pytest.mark.parametrize("errors_as_200", ERRORS_AS_200)
async def test_server_errors_are_final_after_the_last_attempt(errors_as_200: bool) -> None:
    site = sandbox_with(SandboxSettings(fail_rate=1.0, errors_as_200=errors_as_200))
    async with site.client(read_attempts=3) as client:
        with pytest.raises(ServerError):
            await client.user_info(1001)
    assert (await site.calls())["user_info"] == 3 and len(site.sleeps) == 2


async def test_server_errors_on_writes_are_not_retried(site: Site) -> None:
    await site.set(fail_rate=1.0)
    async with site.client() as client:
        with pytest.raises(ServerError) as caught:
            await client.workspace_add(["Never"], WorkspaceSettings())
    assert caught.value.hint == WRITE_FAILED_HINT
    assert (await site.calls())["workspace_add"] == 1
    await site.set(fail_rate=0.0)
    assert "Never" not in {w["name"] for w in (await site.state())["workspaces"]}


# --- the unknown-outcome write ------------------------------------------------------------


async def test_a_dropped_write_is_outcome_unknown_and_never_retried(site: Site) -> None:
    await site.set(drop_after_commit_rate=1.0)
    async with site.client() as client:
        with pytest.raises(OutcomeUnknown) as caught:
            await client.workspace_add(["Dropped"], WorkspaceSettings())
    error = caught.value
    assert "may or may not have applied" in error.message and error.hint == UNKNOWN_OUTCOME_HINT
    assert isinstance(error, TransportError)
    assert (await site.calls())["workspace_add"] == 1
    assert "Dropped" in {w["name"] for w in (await site.state())["workspaces"]}
    assert client.stats.as_dict()["failures"] == 1


async def test_a_dropped_read_is_retried(site: Site) -> None:
    await site.set(drop_after_commit_rate=1.0)  # applies to writes only
    async with site.client() as client:
        assert (await client.user_info(1001)).id == 1001


# --- what only a mock network can produce -------------------------------------------------


def _mock(
    *responses: httpx.Response | Exception,
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A network answering ``responses`` in turn (the last one repeats)."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = responses[min(len(seen), len(responses)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return httpx.MockTransport(answer), seen


USER = {"userInfo": {"id": 1001, "username": "alice"}}


@pytest.mark.parametrize(
    ("response", "words"),
    [
        (httpx.Response(200, text="<html><body>Welcome to nginx</body></html>"), "neither"),
        (httpx.Response(200, json={"somethingElse": 1}), "neither 'userInfo' nor an error"),
        (httpx.Response(200, text='{"userInfo": {"id": 1'), "neither JSON nor XML"),
        (httpx.Response(404, text="<!DOCTYPE html><html>Not Found</html>"), "unsafe"),
        (httpx.Response(301, headers={"Location": "https://new.example/api/x?q=1"}), "redirected"),
    ],
)
async def test_junk_answers_are_protocol_errors_and_not_retried(
    response: httpx.Response, words: str
) -> None:
    mock, seen = _mock(response)
    async with Site(IN_PROCESS_URL).client(transport=mock) as client:
        with pytest.raises(ProtocolError, match=words) as caught:
            await client.user_info(1001)
    assert len(seen) == 1
    assert caught.value.hint is not None and "URL" in caught.value.hint
    assert "?q=1" not in str(caught.value)


async def test_retry_after_on_503_is_honoured_for_reads() -> None:
    site = Site(IN_PROCESS_URL)
    mock, seen = _mock(
        httpx.Response(503, headers={"Retry-After": "0.25"}), httpx.Response(200, json=USER)
    )
    async with site.client(transport=mock) as client:
        assert (await client.user_info(1001)).username == "alice"
    assert site.sleeps == [0.25] and len(seen) == 2


@pytest.mark.parametrize(
    ("failure", "expected", "attempts"),
    [
        (httpx.ConnectError("Connection refused"), TransportError, 3),  # nothing was sent
        (httpx.ConnectTimeout("timed out"), TransportError, 3),
        (httpx.ReadTimeout("timed out"), OutcomeUnknown, 1),  # sent, no answer
        (httpx.RemoteProtocolError("Server disconnected"), OutcomeUnknown, 1),
        (httpx.WriteError("Broken pipe"), OutcomeUnknown, 1),
    ],
)
async def test_write_transport_failures(
    failure: Exception, expected: type[SiteError], attempts: int
) -> None:
    mock, seen = _mock(failure)
    async with Site(IN_PROCESS_URL).client(transport=mock, read_attempts=3) as client:
        with pytest.raises(expected) as caught:
            await client.workspace_delete(7)
    assert type(caught.value) is expected and len(seen) == attempts


@pytest.mark.parametrize(
    "failure",
    [httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("eof")],
)
async def test_read_transport_failures_are_retried(failure: Exception) -> None:
    mock, seen = _mock(failure, failure, httpx.Response(200, json=USER))
    async with Site(IN_PROCESS_URL).client(transport=mock) as client:
        assert (await client.user_info(1001)).id == 1001
    assert len(seen) == 3 and client.stats.retries == 2


async def test_an_unreachable_site_says_what_to_check() -> None:
    mock, _ = _mock(httpx.ConnectError("[Errno 111] Connection refused"))
    async with Site(IN_PROCESS_URL).client(transport=mock, read_attempts=2) as client:
        with pytest.raises(TransportError) as caught:
            await client.user_info(1001)
    assert type(caught.value) is TransportError
    assert "no answer from https://sandbox.example" in caught.value.message
    assert caught.value.hint is not None and "network" in caught.value.hint


@pytest.mark.parametrize(
    ("status", "expected"),
    [(502, OutcomeUnknown), (504, OutcomeUnknown), (500, ServerError), (503, ServerError)],
)
async def test_5xx_on_a_write_is_never_retried(status: int, expected: type[SiteError]) -> None:
    mock, seen = _mock(httpx.Response(status, text="<html>upstream trouble</html>"))
    async with Site(IN_PROCESS_URL).client(transport=mock) as client:
        with pytest.raises(expected):
            await client.user_group_add("g", [1])
    assert len(seen) == 1


async def test_429_on_a_write_is_waited_out() -> None:
    site = Site(IN_PROCESS_URL)
    added = {"userGroupAdd": {"userGroupId": 9, "userGroupMembers": "1"}}
    mock, seen = _mock(
        httpx.Response(429, headers={"Retry-After": "2"}), httpx.Response(200, json=added)
    )
    async with site.client(transport=mock) as client:
        assert (await client.user_group_add("g", [1])).id == 9
    assert site.sleeps == [2.0] and len(seen) == 2


# --- requests on the wire, limits, stats --------------------------------------------------


async def test_get_sends_query_and_post_sends_a_form_body() -> None:
    mock, seen = _mock(httpx.Response(200, json={"workspaceDelete": {"workspaceId": 7}}))
    async with Site(IN_PROCESS_URL).client(transport=mock, response_format="xml") as client:
        await client.workspace_delete(7)
    (request,) = seen
    assert request.method == "POST" and request.url.query == b""
    assert str(request.url) == "https://sandbox.example/api/workspace_delete.xml"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.content.startswith(b"api_key=sandbox-admin-key&timestamp=")
    assert b"workspace_id=7" in request.content and b"&signature=" in request.content


async def test_concurrency_limit_is_shared_by_all_calls() -> None:
    in_flight, peak = 0, 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, json=USER)

    async with Site(IN_PROCESS_URL).client(
        transport=httpx.MockTransport(handler), concurrency=4
    ) as client:
        await asyncio.gather(*(client.user_info(n) for n in range(30)))
    assert peak == 4 and client.stats.calls == {"user_info": 30}


async def test_rate_limit_spaces_requests() -> None:
    """Eleven calls at one instant: each reserves the slot 20 ms after the one before and
    waits until it comes (the clock stands still, so the waits are exactly the spacing)."""
    mock, seen = _mock(httpx.Response(200, json=USER))
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    config = ClientConfig(IN_PROCESS_URL, "key", Secret("secret"), rate_limit=50.0)
    async with SiteClient(config, transport=mock, sleep=wait, monotonic=lambda: 0.0) as client:
        await asyncio.gather(*(client.user_info(n) for n in range(11)))
    assert len(seen) == 11
    assert sorted(waits) == pytest.approx([0.02 * n for n in range(1, 11)])  # 50 a second


async def test_stats_snapshot_and_dict(site: Site) -> None:
    async with site.client() as client:
        await client.user_info(1001)
        before = client.stats.snapshot()
        await client.workspace_add(["Counted"], WorkspaceSettings())
    assert before.as_dict() == {
        "calls": {"user_info": 1},
        "retries": 0,
        "writes": 0,
        "failures": 0,
        "total": 1,
    }
    assert client.stats.as_dict()["calls"] == {"user_info": 1, "workspace_add": 1}
    assert (client.stats.writes, client.stats.total) == (1, 2)


async def test_repr_shows_the_site_and_a_masked_key(site: Site) -> None:
    async with site.client() as client:
        assert repr(client) == "SiteClient('https://sandbox.example', api_key='sand…-key')"


@pytest.fixture
def captured_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    import structlog

    with structlog.testing.capture_logs() as logs:
        yield logs


async def test_one_log_event_per_request(
    site: Site, captured_logs: list[MutableMapping[str, Any]]
) -> None:
    await site.set(fail_rate=1.0)
    async with site.client(read_attempts=2) as client:
        with pytest.raises(ServerError):
            await client.user_info(1001)
        await site.set(fail_rate=0.0)
        await client.user_info(1001)
    calls = [e for e in captured_logs if e["event"] == "api_call"]
    assert [(e["attempt"], e["outcome"], e["log_level"]) for e in calls] == [
        (1, "ServerError", "info"),  # per-call events, failures too, only with -v
        (2, "ServerError", "info"),
        (1, "ok", "info"),
    ]
    assert "retry_in_s" in calls[0] and "retry_in_s" not in calls[1]
    assert all(e["method"] == "user_info" and e["duration_ms"] >= 0 for e in calls)
    assert {calls[0]["status"], calls[1]["status"]} <= {500, 503} and calls[2]["status"] == 200
    debug = [e for e in captured_logs if e["event"] == "api_request"]
    assert debug and all(e["api_key"] == "sand…-key" for e in debug)
