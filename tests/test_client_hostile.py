"""``SiteClient`` against hostile and unlucky servers: real HTTP servers on 127.0.0.1.

Each scenario is a finding of the security review, with the server that showed it: a site
echoing the request (and with it the signature, which authorises any write of that method)
through every path an answer can take; words in a message taken for a rate limit; malformed
answers to writes; a server that drips, bombs, floods or never ends a list. The client uses
its real network transport; nothing here is mocked.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import time
import traceback
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any
from xml.sax.saxutils import escape

import pytest
import structlog

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import (
    InvalidRequest,
    OutcomeUnknown,
    ProtocolError,
    SiteError,
    TransportError,
)
from reconciler.logs import configure_logging
from tests.support.hostile_server import (
    HostileServer,
    Reply,
    Request,
    hostile_server,
    json_reply,
    text_reply,
)

pytestmark = pytest.mark.anyio
KEY, SECRET = "sandbox-admin-key", "sandbox-admin-secret"


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


async def _no_wait(seconds: float) -> None:
    return None


def client_of(server: HostileServer, **options: Any) -> SiteClient:
    """A client of ``server`` over its real network transport; retry waits are skipped."""
    config = ClientConfig(server.url, KEY, Secret(SECRET), **{"backoff_base": 0.01, **options})
    return SiteClient(config, sleep=_no_wait)


TWO = WorkspaceSettings()


# --- leaked signatures --------------------------------------------------------------------


def _key_of(request: Request) -> str:
    return "userGroupDeleted" if request.method == "user_group_delete" else _camel(request.method)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


ECHOES: dict[str, Callable[[Request], Reply]] = {
    "json error, 200": lambda r: json_reply({"error": {"title": r.raw, "message": r.raw}}),
    "json error, 400": lambda r: json_reply({"error": {"title": "Failed", "message": r.raw}}, 400),
    "xml error": lambda r: text_reply(
        f"<error><title>{escape(r.raw)}</title><message>{escape(r.raw)}</message></error>",
        403,
        "application/xml",
    ),
    "5xx page": lambda r: text_reply(f"<html><body>Oops: {escape(r.raw)}</body></html>", 503),
    "non-API json": lambda r: json_reply({r.raw: r.raw, "z": 1}),
    "bad field value": lambda r: json_reply({_key_of(r): {"id": r.raw, "workspaceId": r.raw}}),
    "html page": lambda r: text_reply(f"<!DOCTYPE html><p>{escape(r.raw)}</p>", 404),
    "protocol error": lambda r: Reply(raw=f"XTTP/1.1 200 {r.raw}\r\n\r\n".encode()),
    "redirect": lambda r: Reply(302, headers={"Location": f"https://x.example/{r.raw[-80:]}"}),
    "in a record": lambda r: json_reply(
        {"userInfo": {"id": 1, "username": r.raw}, "workspaceAdd": {"workspaceId": 9}}
    ),
}


def _forbidden(server: HostileServer) -> list[str]:
    signatures = [request.params["signature"] for request in server.requests]
    assert len(signatures) == len(server.requests) >= 2
    return [SECRET, hashlib.sha1(SECRET.encode()).hexdigest(), KEY, *signatures]


@pytest.mark.parametrize("log_format", ["json", "console"])
@pytest.mark.parametrize("echo", ECHOES, ids=str)
async def test_an_echoed_request_never_shows_its_signature_or_credentials(
    echo: str, log_format: str
) -> None:
    logs = io.StringIO()
    configure_logging(log_format, verbosity=2, stream=logs)  # type: ignore[arg-type]
    texts: list[str] = []
    with hostile_server(ECHOES[echo]) as server:
        async with client_of(server, read_attempts=1) as client:
            for call in (client.user_info(1001), client.workspace_add(["Alpha"], TWO)):
                try:
                    texts.append(repr(await call))  # an echo in a record, as a plan shows it
                except SiteError as error:
                    texts += [str(error), repr(error), error.title or ""]
                    texts.append("".join(traceback.format_exception(error)))
    texts.append(logs.getvalue())
    assert "api_call" in texts[-1]  # the events were logged, and searched
    everything = "\n".join(texts)
    assert [value for value in _forbidden(server) if value in everything] == []


# --- retries on words ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        json_reply({"error": {"title": "Workspace Add Failed", "message": "'Too many Alpha'"}}),
        json_reply({"error": {"title": "Workspace Add Failed", "message": "Too many requests"}}),
        json_reply({"error": {"title": "Rate Limit Exceeded", "message": "Slow down"}}),
        json_reply({"error": {"title": "Failed", "message": "rate limit"}}, 400),
    ],
    ids=["a name", "words in the message", "words in the title, status 200", "status 400"],
)
async def test_a_write_is_never_retried_because_of_words(reply: Reply) -> None:
    with hostile_server(lambda request: reply) as server:
        async with client_of(server) as client:
            with pytest.raises(SiteError) as caught:
                await client.workspace_add(["Alpha"], TWO)
    assert server.calls("workspace_add") == 1
    assert client.stats.retries == 0
    if "Alpha" in caught.value.message:
        assert type(caught.value) is InvalidRequest  # not taken for a rate limit at all


async def test_a_write_answered_429_is_waited_out_and_sent_again() -> None:
    replies = iter(
        [
            json_reply(
                {"error": {"title": "Slow", "message": "down"}}, 429, **{"Retry-After": "1"}
            ),
            json_reply({"workspaceAdd": {"workspaceId": 41}}),
        ]
    )
    with hostile_server(lambda request: next(replies)) as server:
        async with client_of(server) as client:
            assert await client.workspace_add(["Alpha"], TWO) == [41]
    assert server.calls("workspace_add") == 2


# --- malformed answers to writes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "reply"),
    [
        (
            lambda c: c.workspace_add(["Alpha", "Beta"], TWO),
            json_reply({"workspaceAdd": {"workspaceId": 12}}),
        ),
        (
            lambda c: c.workspace_add(["Alpha", "Beta"], TWO),
            json_reply({"workspaceAdd": {"workspaceId": [12, 12]}}),
        ),
        (lambda c: c.workspace_add(["Alpha"], TWO), text_reply("<html>Created!</html>")),
        (lambda c: c.user_group_add("g", [1]), json_reply({"userGroupAdd": {}})),
        (lambda c: c.workspace_delete(3), json_reply({"workspaceDelete": {"workspaceId": "x"}})),
        (lambda c: c.add_to_workspace(1, [3]), json_reply({"addToWorkspace": []})),
        (lambda c: c.user_group_delete(3), text_reply('{"userGroupDeleted": {"userGr', 200)),
    ],
    ids=["one id, two names", "one id twice", "html", "no id", "bad id", "list", "truncated"],
)
async def test_a_malformed_answer_to_a_write_is_outcome_unknown(
    call: Callable[[SiteClient], Any], reply: Reply
) -> None:
    with hostile_server(lambda request: reply) as server:
        async with client_of(server) as client:
            with pytest.raises(OutcomeUnknown) as caught:
                await call(client)
    assert "may or may not have applied" in caught.value.message
    assert len(server.requests) == 1  # never sent again


# --- bounded time and memory --------------------------------------------------------------


def _drip(request: Request) -> Reply:
    return Reply(200, (b" " for _ in range(1000)), pause=0.2, length=1000)


@pytest.mark.parametrize("write", [False, True])
async def test_a_dripping_server_is_cut_off_at_the_deadline(write: bool) -> None:
    with hostile_server(_drip) as server:
        async with client_of(server, timeout=1.0) as client:
            started = time.monotonic()
            with pytest.raises(TransportError) as caught:
                await (client.workspace_delete(1) if write else client.user_info(1))
            elapsed = time.monotonic() - started
    assert type(caught.value) is (OutcomeUnknown if write else TransportError)
    assert "within the --timeout of 1 s" in caught.value.message
    assert elapsed < 5  # bounded: without the deadline, 200 s of dripping
    assert len(server.requests) == 1  # the whole call's time was spent: no second try


@cache
def _gzip_bomb() -> bytes:
    """256 MiB of zeros in about 260 KB of gzip."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    block = bytes(2**20)
    return b"".join([*(packer.compress(block) for _ in range(256)), packer.flush()])


def _bomb(request: Request) -> Reply:
    return Reply(200, [_gzip_bomb()], {"Content-Encoding": "gzip"})


def _flood(request: Request) -> Reply:
    block = b"x" * 2**20
    return Reply(200, (block for _ in range(800)), length=800 * 2**20)  # 800 MiB, lazily


@pytest.mark.slow
@pytest.mark.parametrize("respond", [_bomb, _flood], ids=["gzip bomb", "800 MiB body"])
async def test_an_answer_is_cut_off_at_the_size_cap_in_bounded_memory(
    respond: Callable[[Request], Reply],
) -> None:
    _gzip_bomb()  # built before measuring
    with hostile_server(respond) as server:
        async with client_of(server) as client:
            tracemalloc.start()
            try:
                with pytest.raises(ProtocolError, match=r"more than 32 MiB \(decompressed\)"):
                    await client.user_info(1)
                with pytest.raises(OutcomeUnknown, match="more than 32 MiB"):
                    await client.workspace_delete(1)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert peak < 48 * 2**20, f"peak {peak / 2**20:.0f} MiB"  # the cap, and a little


def _pages_without_end(request: Request) -> Reply:
    """Full pages of new users, for ever -- or up to 3,000 pages, so old code ends too."""
    page = int(request.params["current_page"])
    count = 50 if page < 3000 else 0
    users = [{"id": page * 100 + n, "username": f"u{page}-{n}"} for n in range(count)]
    return json_reply({"userList": {"users": users}})


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hint", "options", "pages"),
    [(120, {}, 2 * 3 + 20), (None, {}, 1000), (None, {"max_user_pages": 40}, 40), (0, {}, 22)],
    ids=["hint of 120 users", "no hint", "no hint, own cap", "hint of none"],
)
async def test_a_user_list_that_never_ends_is_stopped(
    hint: int | None, options: dict[str, Any], pages: int
) -> None:
    with hostile_server(_pages_without_end) as server:
        async with client_of(server, **options) as client:
            with pytest.raises(ProtocolError, match=f"reading stopped after {pages} pages"):
                await client.user_list(expected_total=hint)
    assert server.calls("user_list") == pages


# --- quiet by default ---------------------------------------------------------------------


async def test_expected_failures_log_nothing_per_call_by_default() -> None:
    def refuse(request: Request) -> Reply:
        error = {"title": "Authentication Failed", "message": "The signature does not match."}
        return json_reply({"error": error}, 401)

    def unavailable(request: Request) -> Reply:
        return text_reply("<html>down</html>", 503)

    for verbosity, expect_lines in ((0, False), (1, True)):
        logs = io.StringIO()
        configure_logging("console", verbosity=verbosity, stream=logs)
        for respond in (refuse, unavailable):
            with hostile_server(respond) as server:
                async with client_of(server) as client:
                    await asyncio.gather(
                        client.user_info(1), client.workspace_list(), return_exceptions=True
                    )
        lines = [line for line in logs.getvalue().splitlines() if line.strip()]
        assert bool(lines) is expect_lines, lines
        if expect_lines:
            assert all("api_call" in line for line in lines)
            assert any("retry_in_s" in line for line in lines)  # retries are shown with -v


async def test_the_json_log_of_a_call_names_its_outcome() -> None:
    logs = io.StringIO()
    configure_logging("json", verbosity=1, stream=logs)
    with hostile_server(lambda r: json_reply({"userInfo": {"id": 1, "username": "a"}})) as server:
        async with client_of(server) as client:
            await client.user_info(1)
    (event,) = [json.loads(line) for line in logs.getvalue().splitlines()]
    assert (event["event"], event["outcome"], event["status"]) == ("api_call", "ok", 200)


async def test_a_rate_limited_read_is_retried_quietly() -> None:
    replies = iter([json_reply({}, 429), json_reply({"userInfo": {"id": 1, "username": "a"}})])
    logs = io.StringIO()
    configure_logging("console", verbosity=0, stream=logs)
    with hostile_server(lambda request: next(replies)) as server:
        async with client_of(server) as client:
            assert (await client.user_info(1)).id == 1
    assert logs.getvalue() == "" and client.stats.retries == 1
