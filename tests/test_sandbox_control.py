"""The ``/_sandbox/`` control surface: call counts, state dump, runtime settings, health."""

from __future__ import annotations

import pytest

from reconciler.sandbox.settings import FIELD_NAMES
from tests.support.sandbox_site import VIEWER, sandbox_site

pytestmark = pytest.mark.anyio


async def test_calls_are_counted_per_method_until_reset() -> None:
    async with sandbox_site() as site:
        await site.call("workspace_list")
        await site.call("workspace_list", xml=True)
        await site.call("user_info", {"user_id": 1}, who=VIEWER)  # refused calls count too
        counts = (await site.client.get("/_sandbox/calls")).json()
        reset = (await site.client.post("/_sandbox/calls/reset")).json()
        after = (await site.client.get("/_sandbox/calls")).json()
    no_waits = {"waits": 0, "mean_ms": None, "max_ms": None}
    assert counts == {
        "total": 3,
        "methods": {"user_info": 1, "workspace_list": 2},
        "latency": no_waits,
    }
    assert reset == after == {"total": 0, "methods": {}, "latency": no_waits}


async def test_the_latency_really_waited_is_reported_beside_the_counts() -> None:
    """``latency_ms`` is a sleep; what it really held each call is said, not assumed."""
    async with sandbox_site(latency_ms=30) as site:
        for _ in range(3):
            await site.call("workspace_list")
        latency = (await site.client.get("/_sandbox/calls")).json()["latency"]
        reset = (await site.client.post("/_sandbox/calls/reset")).json()["latency"]
    assert latency["waits"] == 3
    assert 29 <= latency["mean_ms"] <= latency["max_ms"] < 1000  # uvloop: ms timers
    assert reset == {"waits": 0, "mean_ms": None, "max_ms": None}


async def test_control_calls_are_not_counted_nor_faulted() -> None:
    async with sandbox_site(fail_rate=1.0, rate_limit=1) as site:
        for _ in range(3):
            assert (await site.client.get("/_sandbox/health")).status_code == 200
        assert (await site.client.get("/_sandbox/calls")).json()["total"] == 0


async def test_state_dump_has_users_without_secrets_workspaces_and_groups() -> None:
    async with sandbox_site() as site:
        await site.ok("workspace_add", {
            "name": "Audit", "workspace_users": "1001", "workspace_override_permissions": 1,
            "workspace_override_batch_upload_files": 1, "root_access": 0,
        })  # fmt: skip
        state = await site.state()
        raw = (await site.client.get("/_sandbox/state")).text
    assert set(state) == {"users", "workspaces", "groups"}
    assert state["users"][0] == {
        "id": 1, "username": "admin", "email": "admin@acme.example", "first_name": "Site",
        "last_name": "Admin", "admin": True, "active": True,
        "permissions": ["download_files", "upload_files"], "notifications": [],
    }  # fmt: skip
    assert "secret" not in raw and "sandbox-admin-key" not in raw
    assert state["workspaces"][1] == {
        "id": 2, "name": "Audit", "path": "/Audit_workspace/", "root_access": False,
        "override_permissions": True, "override_notifications": False,
        "permissions": ["batch_upload_files", "upload_files"], "notifications": [],
        "members": [1001],
    }  # fmt: skip
    assert state["groups"] == [{"id": 1, "name": "old-contractors", "members": [1011]}]


async def test_settings_read_and_partial_update_take_effect() -> None:
    async with sandbox_site() as site:
        before = (await site.client.get("/_sandbox/settings")).json()
        updated = (
            await site.client.post(
                "/_sandbox/settings", json={"legacy_workspace_list": True, "fail_rate": 0}
            )
        ).json()
        answer = await site.ok("workspace_list")
    assert list(before) == list(FIELD_NAMES) and before["timestamp_window"] == 300
    assert updated == {**before, "legacy_workspace_list": True, "fail_rate": 0.0}
    assert isinstance(answer, list)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"fail_rate": 2}, "fail_rate must be a number from 0 to 1"),
        ({"errors_as_200": "yes"}, "errors_as_200 must be true or false"),
        ({"rate_limit": -1}, "rate_limit must be a whole number of at least 0"),
        ({"latency": 5}, "unknown setting 'latency'"),
        ([1, 2], "settings must be a mapping"),
    ],
)
async def test_invalid_settings_are_refused_and_change_nothing(body, fragment) -> None:
    async with sandbox_site() as site:
        response = await site.client.post("/_sandbox/settings", json=body)
        after = (await site.client.get("/_sandbox/settings")).json()
    assert response.status_code == 400
    assert fragment in response.json()["error"]
    assert after["fail_rate"] == 0.0 and after["errors_as_200"] is False


async def test_settings_body_must_be_json() -> None:
    async with sandbox_site() as site:
        response = await site.client.post("/_sandbox/settings", content=b"fail_rate=1")
    assert response.status_code == 400 and "settings not changed" in response.json()["error"]


async def test_a_runtime_random_seed_restarts_the_fault_sequence() -> None:
    async def statuses(site) -> list[int]:
        await site.client.post("/_sandbox/settings", json={"fail_rate": 0.5, "random_seed": 11})
        return [(await site.call("workspace_list")).status_code for _ in range(30)]

    async with sandbox_site() as site:
        assert await statuses(site) == await statuses(site)


async def test_health() -> None:
    async with sandbox_site() as site:
        health = (await site.client.get("/_sandbox/health")).json()
    assert health == {"status": "ok", "users": 22, "workspaces": 1, "groups": 1}
