"""Mount the sandbox in-process for an ``httpx.AsyncClient``, faults included.

``httpx.ASGITransport`` has no connection to drop, so the sandbox's emulated drop arrives as
``DropConnection``; this transport turns it into ``httpx.RemoteProtocolError`` -- what httpx
raises when a real server closes the connection without a response -- so the code under test
sees the same error in-process as over the network.
"""

from __future__ import annotations

import httpx
from starlette.types import ASGIApp

from reconciler.sandbox.errors import DropConnection

DROPPED_MESSAGE = "Server disconnected without sending a response."


class SandboxTransport(httpx.AsyncBaseTransport):
    """An ``httpx.ASGITransport`` for the sandbox app that reports dropped connections."""

    def __init__(self, app: ASGIApp, *, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self._inner = httpx.ASGITransport(app=app, client=client)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self._inner.handle_async_request(request)
        except DropConnection:
            raise httpx.RemoteProtocolError(DROPPED_MESSAGE, request=request) from None

    async def aclose(self) -> None:
        await self._inner.aclose()
