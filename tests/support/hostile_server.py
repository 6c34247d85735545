"""Small real HTTP servers on 127.0.0.1 that answer as a test scripts them -- badly, on purpose.

Not mocks: the client reaches them over a real socket, through its real network transport
(aiohttp, the client's own decompression and deadline), exactly as it
reaches a site. Each test passes a ``respond(request) -> Reply`` function; a reply can drip
its body a chunk at a time, stream a body far larger than memory lazily, or be raw bytes that
are not HTTP at all. Every request
the server received is kept, so a test can count calls, check signatures, or echo them back.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    verb: str
    target: str  # path and query, as sent
    body: bytes
    headers: dict[str, str]

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def method(self) -> str:
        """The API method called: ``/api/user_info.xml`` → ``user_info``."""
        return self.path.rsplit("/", 1)[-1].removesuffix(".xml")

    @property
    def xml(self) -> bool:
        return self.path.endswith(".xml")

    @property
    def params(self) -> dict[str, str]:
        """Query and form parameters together (a GET has only the one, a POST the other)."""
        query = urlsplit(self.target).query
        return dict(parse_qsl(query) + parse_qsl(self.body.decode("latin-1")))

    @property
    def raw(self) -> str:
        """The request as a careless server would echo it."""
        return f"{self.verb} {self.target} {self.body.decode('latin-1')}"


@dataclass
class Reply:
    """What the server sends back: status, headers and a body sent chunk by chunk.

    ``chunks`` may be a lazy iterable (an 800 MiB body is never held); ``pause`` seconds pass
    before each chunk; ``length`` is the Content-Length announced (default: the sum of the
    chunks when they are a list). ``raw`` bytes, when given, are written instead of any
    HTTP response at all.
    """

    status: int = 200
    chunks: Iterable[bytes] = ()
    headers: dict[str, str] = field(default_factory=dict)
    pause: float = 0.0
    length: int | None = None
    raw: bytes | None = None


def json_reply(document: Any, status: int = 200, **headers: str) -> Reply:
    body = json.dumps(document).encode()
    return Reply(status, [body], {"Content-Type": "application/json", **headers})


def text_reply(text: str, status: int = 200, content_type: str = "text/html") -> Reply:
    return Reply(status, [text.encode()], {"Content-Type": content_type})


Respond = Callable[[Request], Reply]


@dataclass
class HostileServer:
    url: str
    requests: list[Request]

    def calls(self, method: str) -> int:
        return sum(1 for request in self.requests if request.method == method)


class _Handler(BaseHTTPRequestHandler):
    respond: Respond
    received: list[Request]

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        return None

    def _answer(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        request = Request(self.command, self.path, self.rfile.read(size), dict(self.headers))
        self.received.append(request)
        reply = self.respond(request)
        with contextlib.suppress(OSError):  # the client gave up and hung up: as intended
            self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.raw is not None:
            self.wfile.write(reply.raw)
            return
        chunks = reply.chunks
        length = reply.length
        if length is None:
            chunks = list(chunks)
            length = sum(len(chunk) for chunk in chunks)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.flush()
        for chunk in chunks:
            if reply.pause:
                time.sleep(reply.pause)
            self.wfile.write(chunk)
            self.wfile.flush()


@contextmanager
def hostile_server(respond: Respond) -> Iterator[HostileServer]:
    """A server on a free loopback port answering every request with ``respond``."""
    received: list[Request] = []
    handler = type("Handler", (_Handler,), {"respond": staticmethod(respond), "received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.block_on_close = False  # a dripping handler must not hold the test's end
    # serve_forever looks for shutdown() every poll_interval: 0.5 s by default, at every end
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield HostileServer(f"http://127.0.0.1:{server.server_address[1]}", received)
    finally:
        server.shutdown()
        server.server_close()
