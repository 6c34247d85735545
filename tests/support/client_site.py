"""A sandbox as the client's tests see it (in-process or on a real server), and the scenario
that calls each of the 14 API methods once and checks every answer against the sandbox's state.

Shared by the client's in-process, loopback and secret tests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from reconciler.api.answers import WorkspaceSettings
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.sandbox.app import SandboxApp
from reconciler.sandbox.seed import load_seed_file
from reconciler.sandbox.transport import SandboxTransport
from tests.support.virtual_time import VirtualTime

EXAMPLE_SEED = Path(__file__).parents[2] / "reconciler" / "sandbox" / "seeds" / "example.yaml"
ADMIN_KEY, ADMIN_SECRET = "sandbox-admin-key", "sandbox-admin-secret"
VIEWER_KEY, VIEWER_SECRET = "sandbox-viewer-key", "sandbox-viewer-secret"
IN_PROCESS_URL = "https://sandbox.example"
FORMATS = ["json", "xml"]


def seed_with_users(total: int | None = None) -> dict[str, Any]:
    """The example seed, padded with generated users up to ``total`` users in all."""
    seed = dict(load_seed_file(EXAMPLE_SEED))
    users = list(seed["users"])
    extra = 0 if total is None else total - len(users)
    users += [
        {
            "id": 5000 + n,
            "username": f"user{n:04d}",
            "email": f"user{n:04d}@acme.example",
            "first_name": "Generated",
            "last_name": f"User{n:04d}",
        }
        for n in range(extra)
    ]
    return {**seed, "users": users}


@dataclass
class Site:
    """A sandbox as the tests see it: where it is, and its control surface."""

    url: str
    app: SandboxApp | None = None  # None: a real server at ``url``
    sleeps: list[float] = field(default_factory=list)

    def transport(self) -> httpx.AsyncBaseTransport | None:
        return SandboxTransport(self.app) if self.app is not None else None

    async def control(self, path: str, body: dict[str, Any] | None = None) -> Any:
        async with httpx.AsyncClient(transport=self.transport(), base_url=self.url) as http:
            if body is None:
                response = await http.get(f"/_sandbox/{path}")
            else:
                response = await http.post(f"/_sandbox/{path}", json=body)
            response.raise_for_status()
            return response.json()

    async def state(self) -> dict[str, Any]:
        return await self.control("state")  # type: ignore[no-any-return]

    async def calls(self) -> dict[str, int]:
        return (await self.control("calls"))["methods"]  # type: ignore[no-any-return]

    async def set(self, **settings: Any) -> None:
        await self.control("settings", settings)

    def client(
        self,
        *,
        key: str = ADMIN_KEY,
        secret: str = ADMIN_SECRET,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        waits_on: VirtualTime | None = None,
        **options: Any,
    ) -> SiteClient:
        """A client of this site; its waits are recorded in ``sleeps`` and cost no time.

        ``waits_on``: the waits move that clock (which the site's rate limiter then shares, and
        which ``--rate-limit`` spaces calls by) instead of being skipped.
        """

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            await (waits_on.sleep(seconds) if waits_on else asyncio.sleep(0))

        config = ClientConfig(self.url, key, Secret(secret), **{"backoff_base": 0.01, **options})
        return SiteClient(
            config,
            transport=transport or self.transport(),
            clock=clock,
            sleep=sleep,
            monotonic=waits_on.monotonic if waits_on else time.monotonic,
        )


async def exercise_every_method(site: Site, response_format: str) -> None:
    """Call each of the 14 methods once and check the answer against the sandbox's state."""
    async with site.client(response_format=response_format) as client:
        alice = await client.user_info(1001)
        assert (alice.username, alice.email, alice.admin) == ("alice", "alice@acme.example", False)
        users = await client.user_list()
        assert {u.id for u in users} == {u["id"] for u in (await site.state())["users"]}
        everyone = await client.users_location_access("/")
        assert any(e.is_group and e.name == "old-contractors" for e in everyone)
        assert any(not e.is_group and e.name == "alice" for e in everyone)
        non_admins = await client.users_location_access("/", non_admins_only=True)
        assert non_admins and not any(e.admin for e in non_admins)
        permissions = await client.user_permissions_location("/")
        assert (permissions.user_id, permissions.admin) == (1, None)
        assert set(permissions.flags.values()) == {None}
        legacy = next(w for w in await client.workspace_list() if w.name == "Legacy Scans")
        assert legacy.path == "/Legacy_Scans_workspace/"
        assert {m.id for m in (await client.workspace_info(legacy.id)).users} == {1019, 1042}
        await _exercise_writes(site, client)


async def _exercise_writes(site: Site, client: SiteClient) -> None:
    settings = WorkspaceSettings(
        root_access=False,
        user_ids=(1001, 1002),
        permissions=frozenset({"upload_files", "download_files"}),
        notifications=frozenset({"upload_notifications"}),
    )
    names = [f"Team A {client.config.response_format}", f"Team B {client.config.response_format}"]
    ids = await client.workspace_add(names, settings)
    workspaces = {w["id"]: w for w in (await site.state())["workspaces"]}
    team_a = workspaces[ids[0]]
    assert [team_a["name"], workspaces[ids[1]]["name"]] == names
    assert (team_a["root_access"], team_a["override_permissions"]) == (False, True)
    assert team_a["permissions"] == ["download_files", "upload_files"]
    assert team_a["notifications"] == ["upload_notifications"]
    assert sorted(team_a["members"]) == [1001, 1002]
    info = await client.workspace_info(ids[0])
    assert info.permissions == {"upload_files", "download_files"}
    assert info.notifications == {"upload_notifications"}

    group = await client.user_group_add(f"designers {client.config.response_format}", [1001, 1002])
    assert group.member_ids == (1001, 1002)
    assert (await client.add_to_user_group(1003, [group.id])).target_ids == (group.id,)
    assert 1003 in _group(await site.state(), group.id)["members"]
    await client.remove_from_user_group(1003, [group.id])
    assert 1003 not in _group(await site.state(), group.id)["members"]
    assert (await client.add_to_workspace(1003, ids)).target_ids == tuple(ids)
    change = await client.remove_from_workspace(1003, [ids[1]])
    assert (change.user_id, change.target_ids) == (1003, (ids[1],))
    workspaces = {w["id"]: w for w in (await site.state())["workspaces"]}
    assert 1003 in workspaces[ids[0]]["members"] and 1003 not in workspaces[ids[1]]["members"]
    assert await client.user_group_delete(group.id) == group.id
    assert await client.workspace_delete(ids[1]) == ids[1]
    state = await site.state()
    assert group.id not in {g["id"] for g in state["groups"]}
    assert ids[1] not in {w["id"] for w in state["workspaces"]}
    assert client.stats.writes == 8 and client.stats.retries == 0


def _group(state: dict[str, Any], group_id: int) -> dict[str, Any]:
    return next(g for g in state["groups"] if g["id"] == group_id)
