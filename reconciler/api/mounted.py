"""An httpx transport as the client's ``Transport``: the embedded sandbox mounted in-process,
or a test's wrapper around one (a server that drips, truncates or lies).

Kept apart from ``caller`` so that only a client given such a transport imports httpx: the
network's transport is aiohttp's (``api.transport``), and a plan's start-up is shorter by
httpx's import (issue 47). httpx's failures leave as a ``wire.WireError`` of the same name.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from reconciler.api.body import read_body
from reconciler.api.boundary import REDIRECT_STATUSES, Answer, retry_after
from reconciler.api.wire import wire_error


class MountedTransport:
    """Each call an ``httpx.Request`` with the call's timeout, its answer read as it streams
    in, up to ``limit`` bytes decoded (``body.read_body``: httpx's own decompression is
    bypassed, it is not bounded)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, timeout: float, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._extensions = {"timeout": httpx.Timeout(timeout).as_dict()}

    async def send(
        self, verb: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        try:
            return await self._send(verb, url, headers, content)
        except httpx.HTTPError as exc:
            raise wire_error(type(exc).__name__, str(exc)) from exc  # httpx's names

    async def _send(
        self, verb: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        request = httpx.Request(
            verb, url, headers=headers, content=content, extensions=self._extensions
        )
        response = await self._inner.handle_async_request(request)
        try:
            status = response.status_code
            if status in REDIRECT_STATUSES:
                return Answer(status, b"", location=response.headers.get("Location", ""))
            content, defect = await read_body(response, self._limit)
            wait = retry_after(response.headers.get("Retry-After"))
            return Answer(status, content, wait, defect=defect)
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self._inner.aclose()
