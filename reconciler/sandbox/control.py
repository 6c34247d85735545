"""The control surface under ``/_sandbox/``: a loopback test tool, not part of the site API.

Tests and benchmarks use it to see what the client really sent (call counts), to look at the
whole state (including group memberships, which the site API cannot read back) and to switch
profiles and faults at runtime. It needs no authentication: never expose a sandbox beyond
loopback.
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reconciler.sandbox.dispatch import LatencyTally, Sandbox
from reconciler.sandbox.settings import SettingsError


def control_routes(sandbox: Sandbox) -> list[Route]:
    """The ``/_sandbox/*`` routes bound to ``sandbox``."""

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", **sandbox.store.counts()})

    async def calls(request: Request) -> JSONResponse:
        return JSONResponse(_calls(sandbox))

    async def reset_calls(request: Request) -> JSONResponse:
        sandbox.calls.clear()
        sandbox.latency = LatencyTally()
        return JSONResponse(_calls(sandbox))

    async def state(request: Request) -> JSONResponse:
        return JSONResponse(dump_state(sandbox))

    async def settings(request: Request) -> JSONResponse:
        if request.method == "POST":
            try:
                changes = json.loads(await request.body() or b"{}")
                sandbox.update_settings(changes)
            except (ValueError, SettingsError) as exc:  # JSONDecodeError is a ValueError
                return JSONResponse({"error": f"settings not changed: {exc}"}, status_code=400)
        return JSONResponse(sandbox.settings.to_dict())

    async def edit_user(request: Request) -> JSONResponse:
        """A hand edit in the web app: ``{"username": ..., "admin": ..., "active": ...}``."""
        try:
            user_id = int(request.path_params["user_id"])
            changes = json.loads(await request.body() or b"{}")
            found = sandbox.store.edit_user(user_id, dict(changes), int(time.time()))
        except (ValueError, TypeError) as exc:
            return JSONResponse({"error": f"user not changed: {exc}"}, status_code=400)
        if not found:
            return JSONResponse({"error": f"no user {user_id}"}, status_code=404)
        return JSONResponse(dump_state(sandbox))

    return [
        Route("/_sandbox/health", health, methods=["GET"]),
        Route("/_sandbox/users/{user_id}", edit_user, methods=["POST"]),
        Route("/_sandbox/calls", calls, methods=["GET"]),
        Route("/_sandbox/calls/reset", reset_calls, methods=["POST"]),
        Route("/_sandbox/state", state, methods=["GET"]),
        Route("/_sandbox/settings", settings, methods=["GET", "POST"]),
    ]


def _calls(sandbox: Sandbox) -> dict[str, Any]:
    return {
        "total": sum(sandbox.calls.values()),
        "methods": dict(sorted(sandbox.calls.items())),
        "latency": sandbox.latency.as_data(),
    }


def dump_state(sandbox: Sandbox) -> dict[str, Any]:
    """Users (never their keys or secrets), workspaces with every setting, groups with members."""
    store = sandbox.store
    ws_members = store.workspace_member_ids()
    group_members = store.group_member_ids()
    return {
        "users": [
            {
                "id": user.id,
                "username": user.username,
                "email": user.email,
                "first_name": user.first_name,
                "last_name": user.last_name,
                "admin": user.admin,
                "active": user.active,
                "permissions": sorted(user.permissions),
                "notifications": sorted(user.notifications),
            }
            for user in store.users()
        ],
        "workspaces": [
            {
                "id": ws.id,
                "name": ws.name,
                "path": ws.path,
                "root_access": ws.root_access,
                "override_permissions": ws.override_permissions,
                "override_notifications": ws.override_notifications,
                "permissions": sorted(ws.permissions),
                "notifications": sorted(ws.notifications),
                "members": ws_members.get(ws.id, []),
            }
            for ws in store.workspaces()
        ],
        "groups": [
            {"id": group.id, "name": group.name, "members": group_members.get(group.id, [])}
            for group in store.groups()
        ],
    }
