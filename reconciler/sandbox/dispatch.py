"""The ``/api/<method>`` pipeline: every call passes the same gates in the same order.

1. count the call (``/_sandbox/calls``), 2. added latency, 3. rate limit (429),
4. injected server failure (500/503, before any effect), 5. known method (404) and verb (405),
6. authentication (401 / 400 for a malformed request), 7. administrator check (403),
8. the method itself, 9. for writes, maybe drop the connection after the commit.

A method name may end in ``.xml`` (XML) or ``.json`` (JSON, the default): both brands' pages
say so. Every ``ApiError`` becomes the documented error body in the requested form (JSON or XML),
with HTTP 200 instead of its status under ``errors_as_200``, and with the method's title as
the published samples print it (stray quote) under ``published_error_titles``.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from reconciler.sandbox.auth import INVALID_REQUEST, Incoming, authenticate
from reconciler.sandbox.codec import encode, error_tree
from reconciler.sandbox.errors import ApiError, DropConnection, published_error
from reconciler.sandbox.faults import Faults
from reconciler.sandbox.methods import method_named, published_title
from reconciler.sandbox.methods.base import Call, Method, require_admin
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.store import Store

XML_SUFFIX = ".xml"
JSON_SUFFIX = ".json"
UNKNOWN_METHOD_TITLE = "Unknown Method"


@dataclass
class LatencyTally:
    """How long the added latency (``latency_ms``) really held the calls since the last reset.

    Why: a sleep ends when the event loop next gets to it, after whatever else it is doing;
    with many calls in flight the site's 20 ms are more, and a benchmark's floor, which counts
    the setting, should be read beside what was waited (``/_sandbox/calls``)."""

    waits: int = 0
    seconds: float = 0.0
    longest: float = 0.0

    def add(self, seconds: float) -> None:
        self.waits += 1
        self.seconds += seconds
        self.longest = max(self.longest, seconds)

    def as_data(self) -> dict[str, Any]:
        mean = round(self.seconds / self.waits * 1000, 2) if self.waits else None
        longest = round(self.longest * 1000, 2) if self.waits else None
        return {"waits": self.waits, "mean_ms": mean, "max_ms": longest}


@dataclass
class Sandbox:
    """The live parts of one sandbox: state, current settings, faults and call counts."""

    store: Store
    settings: SandboxSettings
    faults: Faults
    calls: Counter[str] = field(default_factory=Counter)
    latency: LatencyTally = field(default_factory=LatencyTally)
    # the rate limiter's clock: a test injects one that its client's waits move forward,
    # so a rate-limited run takes no wall-clock time
    clock: Callable[[], float] = time.monotonic

    def update_settings(self, changes: dict[str, Any]) -> SandboxSettings:
        """Apply a partial update (validated); a new ``random_seed`` restarts the fault dice."""
        updated = self.settings.updated(changes)
        if "random_seed" in changes:
            self.faults.reseed(updated.random_seed)
        self.settings = updated
        return updated


async def handle_api(sandbox: Sandbox, request: Request) -> Response:
    """Answer one ``/api/<method>[.xml]`` request as the site would."""
    name: str = request.path_params["method"]
    xml = name.endswith(XML_SUFFIX)
    if xml:
        name = name[: -len(XML_SUFFIX)]
    elif name.endswith(JSON_SUFFIX):  # published: ".json" asks for the default, JSON
        name = name[: -len(JSON_SUFFIX)]
    sandbox.calls[name] += 1
    settings = sandbox.settings  # one snapshot for the whole call
    method = method_named(name, settings)
    try:
        return await _answer(sandbox, settings, method, name, request, xml)
    except ApiError as exc:
        method_title = method.title if method else UNKNOWN_METHOD_TITLE
        title, message = exc.title or method_title, exc.message
        if settings.published_messages:
            title, message = published_error(exc.status, title, message, method_title)
        if settings.published_error_titles:
            title = published_title(title, xml=xml)
        body, media_type = encode(
            "error", error_tree(title, message), xml=xml, php_json=settings.php_json
        )
        status = exc.status
        if exc.unknown_id and settings.unknown_ids_as_400:
            status = 400
        if settings.errors_as_200:
            status = 200
        return Response(body, status, headers=exc.headers, media_type=media_type)


async def _answer(
    sandbox: Sandbox,
    settings: SandboxSettings,
    method: Method | None,
    name: str,
    request: Request,
    xml: bool,
) -> Response:
    if settings.latency_ms:
        started = time.perf_counter()
        await asyncio.sleep(settings.latency_ms / 1000)
        sandbox.latency.add(time.perf_counter() - started)
    sandbox.faults.admit(sandbox.clock(), settings.rate_limit)
    sandbox.faults.maybe_fail(settings.fail_rate)
    if method is None:
        raise ApiError(404, f"There is no API method {name!r} on this site.")
    if request.method not in method.verbs:
        raise ApiError(
            405,
            f"{name} must be called with {' or '.join(method.verbs)}.",
            title=INVALID_REQUEST,
            headers={"Allow": ", ".join(method.verbs)},
        )
    body = b"" if request.method == "GET" else await request.body()
    now = int(time.time())
    caller, params = authenticate(
        _incoming(request, body), sandbox.store, now, settings.timestamp_window,
        strict_signing=settings.strict_signing,
    )  # fmt: skip
    call = Call(sandbox.store, settings, caller, params, now)
    if method.admin_only:
        require_admin(call)
    drop = method.writes and sandbox.faults.drop_after_commit(settings.drop_after_commit_rate)
    try:
        tree = method.handler(call)
    except ApiError:
        if drop:
            raise DropConnection() from None
        raise
    if drop:
        raise DropConnection()
    content, media_type = encode(method.key, tree, xml=xml, php_json=settings.php_json)
    return Response(content, 200, media_type=media_type)


def _incoming(request: Request, body: bytes) -> Incoming:
    """The request's signed parts, as raw as the ASGI server hands them over."""
    scope = request.scope
    host = _header(scope, b"host")
    if host is None:
        server = scope.get("server") or ("localhost", None)
        host = (server[0] if server[1] is None else f"{server[0]}:{server[1]}").encode()
    raw_path = scope.get("raw_path") or scope["path"].encode()
    return Incoming(
        verb=request.method,
        scheme=scope.get("scheme", "http"),
        host=host,
        raw_path=raw_path,
        query=scope.get("query_string", b""),
        body=body,
        content_type=(_header(scope, b"content-type") or b"").decode("latin-1"),
    )


def _header(scope: MutableMapping[str, Any], name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None
