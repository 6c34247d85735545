"""``SiteClient`` over a real loopback socket: the sandbox's uvicorn server, in a thread.

The same scenarios as in-process, where the network matters: a real TCP connection dropped
after a committed write, a port nobody listens on, a read timeout, ``Retry-After`` over HTTP.
One server serves the module; each test starts from the default settings.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.errors import (
    AuthenticationError,
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    PermissionDenied,
    ServerError,
    TransportError,
)
from reconciler.sandbox.settings import DEFAULTS
from tests.support.client_site import (
    FORMATS,
    VIEWER_KEY,
    VIEWER_SECRET,
    Site,
    exercise_every_method,
    seed_with_users,
)
from tests.support.loopback import serving_in_thread
from tests.support.virtual_time import VirtualTime

pytestmark = pytest.mark.anyio


SITE_TIME = VirtualTime()
"""The clock of the module's site's rate limiter, which the client's waits move forward."""


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("loopback-client") / "sandbox-server.log"
    with serving_in_thread(
        seed_with_users(120), None, log_path=log, clock=SITE_TIME.monotonic
    ) as url:
        yield url


@pytest.fixture
def site(server_url: str) -> Site:
    """The module's server, back at default settings with its call counts reset."""
    httpx.post(f"{server_url}/_sandbox/settings", json=DEFAULTS).raise_for_status()
    httpx.post(f"{server_url}/_sandbox/calls/reset").raise_for_status()
    return Site(server_url)


@pytest.mark.parametrize("response_format", FORMATS)
async def test_every_method_over_loopback(site: Site, response_format: str) -> None:
    await exercise_every_method(site, response_format)


async def test_user_list_pages_over_loopback(site: Site) -> None:
    async with site.client() as client:
        assert len(await client.user_list(expected_total=120)) == 120
    assert (await site.calls())["user_list"] == 3


@pytest.mark.parametrize("errors_as_200", [False, True])
async def test_refusals_over_loopback(site: Site, errors_as_200: bool) -> None:
    await site.set(errors_as_200=errors_as_200)
    async with site.client(secret="wrong-secret") as client:
        with pytest.raises(AuthenticationError, match="signature"):
            await client.user_info(1001)
    async with site.client(clock=lambda: time.time() + 3600) as client:
        with pytest.raises(AuthenticationError) as stale:
            await client.user_info(1001)
        assert stale.value.hint is not None and "clock" in stale.value.hint
    async with site.client(key=VIEWER_KEY, secret=VIEWER_SECRET) as client:
        with pytest.raises(PermissionDenied):
            await client.workspace_add(["Nope"], WorkspaceSettings())
    async with site.client() as client:
        with pytest.raises(NotFound):
            await client.workspace_info(987654)
        with pytest.raises(InvalidRequest):
            await client.user_permissions_location("relative/path")


async def test_a_dropped_connection_after_a_committed_write(site: Site) -> None:
    await site.set(drop_after_commit_rate=1.0)
    async with site.client() as client:
        with pytest.raises(OutcomeUnknown) as caught:
            await client.user_group_add("dropped-group", [1001])
    assert "may or may not have applied" in caught.value.message
    assert (await site.calls())["user_group_add"] == 1  # never retried
    assert "dropped-group" in {g["name"] for g in (await site.state())["groups"]}


async def test_rate_limit_with_retry_after_over_loopback(site: Site) -> None:
    await site.set(rate_limit=2)
    async with site.client(concurrency=1, waits_on=SITE_TIME) as client:
        for user_id in (1001, 1002, 1003):
            await client.user_info(user_id)
    assert site.sleeps == [1.0] and (await site.calls())["user_info"] == 4


async def test_server_errors_over_loopback_are_retried_for_reads_only(site: Site) -> None:
    await site.set(fail_rate=0.5, random_seed=3)
    async with site.client(read_attempts=10) as client:
        for user_id in range(1001, 1011):
            assert (await client.user_info(user_id)).id == user_id
        assert client.stats.retries > 0
    await site.set(fail_rate=1.0)
    async with site.client() as client:
        with pytest.raises(ServerError):
            await client.workspace_delete(1)
    assert (await site.calls())["workspace_delete"] == 1


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("write", [False, True])
async def test_nobody_listening_is_a_transport_error_even_for_writes(write: bool) -> None:
    site = Site(f"http://127.0.0.1:{_closed_port()}")
    async with site.client(read_attempts=2) as client:
        with pytest.raises(TransportError) as caught:
            if write:
                await client.workspace_delete(1)
            else:
                await client.user_info(1)
    assert type(caught.value) is TransportError  # nothing was sent: not OutcomeUnknown
    assert caught.value.hint is not None and "URL" in caught.value.hint


async def test_the_deadline_ends_a_read_and_leaves_a_write_unknown(site: Site) -> None:
    await site.set(latency_ms=400)
    async with site.client(timeout=0.1, read_attempts=2) as client:
        with pytest.raises(TransportError, match=r"within the --timeout of 0\.1 s") as read:
            await client.user_info(1001)
        with pytest.raises(OutcomeUnknown):
            await client.workspace_delete(1)
    assert type(read.value) is TransportError
    assert read.value.hint is not None and "--timeout" in read.value.hint
    # the deadline covers the call, retries included: no time was left for a second try
    assert client.stats.calls == {"user_info": 1, "workspace_delete": 1}
