"""The seam the client sends through: a signed request in, the answer the boundary reads out.

``Caller`` signs each call and hands it to a ``Transport``; what comes back is an
``Answer`` (status, the body read within the size cap, ``Retry-After``, a redirect's target)
or an httpx error saying how sending failed. The network is ``transport.AiohttpTransport``,
which makes no httpx object on the way; any httpx transport -- the sandbox mounted in-process
(``httpx.ASGITransport``), a test's wrapper around one -- is sent through with
``MountedTransport``, as the client always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import httpx

from reconciler.api.body import read_body
from reconciler.api.boundary import REDIRECT_STATUSES, Answer, retry_after


class Transport(Protocol):
    async def send(
        self, verb: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> Answer:
        """Send the signed request; the answer, or an ``httpx.HTTPError`` (or the deadline's
        ``TimeoutError``, which the caller holds around it)."""
        ...

    async def aclose(self) -> None: ...


class MountedTransport:
    """An httpx transport as the client's ``Transport``: each call an ``httpx.Request`` with
    the call's timeout, its answer read as it streams in, up to ``limit`` bytes decoded
    (``body.read_body``: httpx's own decompression is bypassed, it is not bounded)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, timeout: float, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._extensions = {"timeout": httpx.Timeout(timeout).as_dict()}

    async def send(
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
