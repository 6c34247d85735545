"""The network transport's promises that no answer shows: connections kept alive and never
more than the concurrency, proxies in the environment ignored, a hang-up after a write left
undecided. A real HTTP/1.1 server on 127.0.0.1 counts the connections it accepted.
"""

from __future__ import annotations

import asyncio
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import OutcomeUnknown, ProtocolError, TransportError
from tests.support.hostile_server import Reply, hostile_server

BODY = b'{"userInfo": {"id": 7, "username": "gina"}}'


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection open between requests
    peers: set[tuple[str, int]]
    in_flight: list[int]
    lock: threading.Lock

    def do_GET(self) -> None:
        with self.lock:
            self.peers.add(self.client_address)
            self.in_flight[0] += 1
            self.in_flight[1] = max(self.in_flight)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)
        finally:
            with self.lock:
                self.in_flight[0] -= 1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.close_connection = True  # the request arrived; no answer ever leaves

    def log_message(self, format: str, *args: object) -> None:
        return None


@contextmanager
def keep_alive_server() -> Iterator[tuple[str, type[_KeepAlive]]]:
    handler = type(
        "Handler",
        (_KeepAlive,),
        {"peers": set(), "in_flight": [0, 0], "lock": threading.Lock()},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _reads(url: str, concurrency: int, count: int) -> None:
    async def go() -> None:
        config = ClientConfig(url, "key", Secret("secret"), concurrency=concurrency)
        async with SiteClient(config) as client:
            for _ in range(2):  # twice: the second round finds the connections kept alive
                answers = await asyncio.gather(*(client.user_info(7) for _ in range(count)))
                assert {answer.username for answer in answers} == {"gina"}

    asyncio.run(go())


def test_connections_are_kept_alive_and_never_more_than_the_concurrency() -> None:
    with keep_alive_server() as (url, handler):
        _reads(url, concurrency=3, count=30)
    assert 1 <= len(handler.peers) <= 3
    assert handler.in_flight[1] <= 3


def test_proxies_named_in_the_environment_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # the discard port: nobody answers
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with keep_alive_server() as (url, handler):
        _reads(url, concurrency=2, count=4)
    assert handler.peers


def test_a_write_whose_connection_is_closed_unanswered_is_left_undecided() -> None:
    async def go() -> None:
        config = ClientConfig(url, "key", Secret("secret"))
        async with SiteClient(config) as client:
            await client.workspace_delete(3)

    with keep_alive_server() as (url, _), pytest.raises(OutcomeUnknown) as caught:
        asyncio.run(go())
    assert "may or may not have applied" in caught.value.message


def test_an_answer_cut_short_of_its_announced_length_is_not_read_as_a_record() -> None:
    """A small answer is read in one go (``transport.SMALL_BODY``); one that ends before the
    length it announced is a failed read, never a truncated record."""
    cut = Reply(200, [b'{"userInfo": {"id": 7, "username": "gi'], length=200)

    async def go(url: str) -> None:
        config = ClientConfig(url, "key", Secret("secret"), read_attempts=2)
        async with SiteClient(config) as client:
            await client.user_info(7)

    with hostile_server(lambda request: cut) as server, pytest.raises(TransportError):
        asyncio.run(go(server.url))
    assert server.calls("user_info") == 2  # a read: tried again, then reported


def _user_info_from(reply: Reply, **settings: Any) -> str:
    async def go(url: str) -> str:
        async with SiteClient(ClientConfig(url, "key", Secret("secret"), **settings)) as client:
            return (await client.user_info(7)).username

    with hostile_server(lambda request: reply) as server:
        return asyncio.run(go(server.url))


def test_a_redirect_without_a_location_is_reported_as_a_redirect() -> None:
    """The network transport reads a redirect by its status alone, as the mounted one does:
    the body it came with is never read as the answer."""
    reply = Reply(302, [BODY], {"Content-Type": "application/json"})
    with pytest.raises(ProtocolError, match=r"redirected the call \(HTTP 302\) to an unnamed"):
        _user_info_from(reply)


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compressed_answer_is_inflated_within_the_cap(coding: str) -> None:
    """A compressed answer streams (``transport.SMALL_BODY`` is for plain ones) and is
    inflated by ``api.body``; past the cap it is refused, not read."""
    packer = zlib.compressobj(wbits=31 if coding == "gzip" else 15)
    packed = packer.compress(BODY) + packer.flush()
    reply = Reply(200, [packed[:10], packed[10:]], {"Content-Encoding": coding})
    assert _user_info_from(reply) == "gina"
    with pytest.raises(ProtocolError, match="decompressed"):
        _user_info_from(reply, max_answer_bytes=len(BODY) - 1)
