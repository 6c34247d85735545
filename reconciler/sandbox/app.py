"""Building the sandbox: state, seed, settings and routes, behind one ASGI application.

``SandboxApp`` is the outermost layer, so it is where an emulated dropped connection ends.
Under uvicorn it aborts the TCP connection itself (no response byte is ever written, and
nothing is logged); in-process there is no connection to abort, so ``DropConnection`` goes on
to ``SandboxTransport``, which turns it into the transport error a real client would see.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from reconciler.sandbox.control import control_routes
from reconciler.sandbox.dispatch import Sandbox, handle_api
from reconciler.sandbox.errors import DropConnection
from reconciler.sandbox.faults import Faults
from reconciler.sandbox.seed import apply_seed, parse_seed
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.store import Store

_VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class SandboxApp(Starlette):
    """The Starlette app of the sandbox; ``.sandbox`` holds its live state."""

    sandbox: Sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except DropConnection:
            if not await abort_connection(send):
                raise


async def abort_connection(send: Send) -> bool:
    """Abort the server connection behind ``send``; False when there is none (in-process).

    uvicorn hands the app its request cycle's bound ``send``; the cycle holds the asyncio
    transport. ``abort()`` closes the socket at once, unflushed: nothing was written, so the
    client reads end-of-stream before any response byte. Yielding to the loop lets uvicorn's
    ``connection_lost`` mark the cycle disconnected, so it does not complain (or answer 500)
    about an app that returned without a response.
    """
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    abort = getattr(transport, "abort", None)  # uvloop's transports are not asyncio.Transport
    if not callable(abort):
        return False
    abort()
    for _ in range(100):
        if getattr(cycle, "disconnected", True):
            break
        await asyncio.sleep(0)
    return True


def create_app(
    settings: SandboxSettings | None = None,
    *,
    seed: Mapping[str, Any] | None = None,
    db_path: str | None = None,
) -> SandboxApp:
    """The sandbox site as an ASGI app.

    ``seed`` is applied only if the database is new (always, in memory); its ``settings:`` are
    the starting point, and every field of ``settings`` that is not at its default overrides
    them. ``db_path`` None keeps the state in memory.
    """
    seed_settings = SandboxSettings()
    if seed is not None:
        seed_settings = SandboxSettings.from_mapping(seed.get("settings") or {})
    effective = seed_settings.overridden_by(settings)
    store = Store(db_path)
    if seed is not None:
        parsed = parse_seed(
            seed, allow_duplicate_workspace_names=effective.allow_duplicate_workspace_names
        )
        apply_seed(store, parsed, int(time.time()))
    sandbox = Sandbox(store, effective, Faults(effective.random_seed))

    async def api(request: Request) -> Response:
        return await handle_api(sandbox, request)

    # Every verb reaches the dispatcher, so a wrong one gets the API's error shape (405).
    routes = [Route("/api/{method}", api, methods=_VERBS), *control_routes(sandbox)]
    app = SandboxApp(routes=routes)
    app.sandbox = sandbox
    app.state.sandbox = sandbox
    return app
