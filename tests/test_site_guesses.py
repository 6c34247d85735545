"""Every sandbox decision that no public page states has a switch, and the tool survives each
alternative (the sandbox README lists them under "Guesses").

For each switch: what the sandbox then does (a signed call), and what the reconciler does on
such a site -- the real engine applying the example manifest and a much changed one in turn,
with a share of writes committed and then cut off, until it converges with no duplicate and no
stray change; or, where the alternative refuses something the tool asked for, one clear
failure that loses nothing.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.planning import PlanOptions
from reconciler.sandbox.settings import SandboxSettings
from tests.support.engine_site import engine_site
from tests.support.fault_runs import converge_under_faults
from tests.support.sandbox_site import error_of, example_seed, sandbox_site
from tests.support.site_strategies import load_desired

CONVERGING_SWITCHES = {
    "unknown_ids_as_400": {"unknown_ids_as_400": True},
    "keep_name_spaces": {"keep_name_spaces": True},
    "name_length_in_bytes": {"name_length_in_bytes": True},
    "strict_memberships": {"strict_memberships": True},
    "refuse_user_delete_of_members": {"refuse_user_delete_of_members": True},
    "exact_workspace_paths": {"exact_workspace_paths": True},
    "timestamp_window": {"timestamp_window": 5},
}


@pytest.mark.parametrize("switch", sorted(CONVERGING_SWITCHES))
def test_the_engine_converges_on_a_site_that_decides_otherwise(switch: str, tmp_path: Path) -> None:
    faults = {**CONVERGING_SWITCHES[switch], "drop_after_commit_rate": 0.2}
    runs = asyncio.run(converge_under_faults(faults, 5, tmp_path))
    assert runs["manifests converged"] == 2
    assert runs["dropped connections"] > 0  # the settling after a cut-off write was exercised


# ---- what the sandbox does under each switch ------------------------------------------------


@pytest.mark.anyio
async def test_unknown_ids_as_400() -> None:
    async with sandbox_site(unknown_ids_as_400=True) as site:
        response = await site.call("workspace_info", {"workspace_id": 999})
    assert response.status_code == 400
    assert error_of(response) == ("Workspace Info Failed", "There is no workspace with ID 999.")


@pytest.mark.anyio
async def test_keep_name_spaces() -> None:
    async with sandbox_site(keep_name_spaces=True) as site:
        group = await site.ok("user_group_add", {"name": " crew "})
        workspace = await site.ok("workspace_add", {"name": " Spaced"})
        state = await site.state()
    names = {g["id"]: g["name"] for g in state["groups"]}
    assert names[int(group["userGroupId"])] == " crew "
    assert {ws["name"] for ws in state["workspaces"]} >= {" Spaced"}
    assert int(workspace["workspaceId"]) > 0


@pytest.mark.anyio
async def test_name_length_in_bytes() -> None:
    name = "Équipe " + "é" * 30  # 37 characters, 68 bytes
    async with sandbox_site() as site:
        assert (await site.call("workspace_add", {"name": name})).status_code == 200
    async with sandbox_site(name_length_in_bytes=True) as site:
        response = await site.call("workspace_add", {"name": name})
    assert response.status_code == 400
    assert error_of(response)[1].endswith("has 68 bytes (UTF-8); at most 40 are allowed.")


@pytest.mark.anyio
async def test_strict_memberships() -> None:
    async with sandbox_site(strict_memberships=True) as site:
        again = await site.call("add_to_workspace", {"user_id": 1042, "user_workspace_ids": "1"})
        absent = await site.call("remove_from_user_group", {"user_id": 1001, "user_group_ids": "1"})
        state = await site.state()
    assert again.status_code == absent.status_code == 400
    assert error_of(again)[1] == "User 1042 is already a member of the workspace 1."
    assert error_of(absent)[1] == "User 1001 is not a member of the user group 1."
    assert state["workspaces"][0]["members"] == [1019, 1042]


@pytest.mark.anyio
async def test_refuse_user_delete_of_members() -> None:
    async with sandbox_site(refuse_user_delete_of_members=True) as site:
        refused = await site.call("user_delete", {"user_id": 1042})
        await site.ok("remove_from_workspace", {"user_id": 1042, "user_workspace_ids": "1"})
        deleted = await site.call("user_delete", {"user_id": 1042})
    assert refused.status_code == 400
    assert "still belongs to workspaces [1]" in error_of(refused)[1]
    assert deleted.status_code == 200


@pytest.mark.anyio
async def test_exact_workspace_paths() -> None:
    below = {"path": "/Legacy_Scans_workspace/reports/"}
    async with sandbox_site() as site:
        assert (await site.call("users_location_access", below)).status_code == 200
    async with sandbox_site(exact_workspace_paths=True) as site:
        refused = await site.call("users_location_access", below)
        exact = await site.call("users_location_access", {"path": "/Legacy_Scans_workspace/"})
    assert refused.status_code == 403 and exact.status_code == 200


@pytest.mark.anyio
async def test_timestamp_window() -> None:
    async with sandbox_site(timestamp_window=5) as site:
        late = await site.call("user_info", {"user_id": 1}, timestamp=int(time.time()) - 30)
    assert late.status_code == 401
    assert "at most 5 are accepted" in error_of(late)[1]


# ---- alternatives that refuse what the tool asks: one clear failure, nothing lost -----------


def _apply_twice(document: dict[str, Any], settings: SandboxSettings, tmp_path: Path) -> Any:
    desired = load_desired(document, tmp_path / "site.yaml")

    async def run() -> Any:
        async with engine_site(example_seed(), tmp_path / "state", settings) as site:
            first = await site.apply(desired, PlanOptions())
            second = await site.apply(desired, PlanOptions())
            return first, second, site.dump()

    return asyncio.run(run())


def test_a_name_the_site_counts_too_long_in_bytes_fails_alone_and_stays_planned(
    tmp_path: Path,
) -> None:
    """The manifest's rule counts characters (as published); a site counting bytes refuses the
    name. That one creation fails with the site's reason, the rest is done, and the next apply
    asks again instead of forgetting it or creating anything twice."""
    long_name = "Équipe " + "é" * 30
    document = {
        "version": 1,
        "workspaces": [{"name": long_name, "users": ["alice"]}, {"name": "Plain", "users": []}],
    }
    first, second, dump = _apply_twice(
        document, SandboxSettings(name_length_in_bytes=True), tmp_path
    )
    failed = [o for o in first.report.outcomes if o.status == "failed"]
    assert len(failed) == 1
    assert failed[0].action.summary().startswith(f'create workspace "{long_name}"')
    assert "68 bytes (UTF-8)" in failed[0].detail
    assert [ws["name"] for ws in dump["workspaces"]].count("Plain") == 1
    assert long_name not in [ws["name"] for ws in dump["workspaces"]]
    assert [a.summary() for a in second.plan.actions] == [failed[0].action.summary()]


def _retire_pia(tmp_path: Path, *, also_in_an_unmanaged_workspace: bool) -> Any:
    """Onboard pia into a managed workspace, then retire her (``prune_users``), on a site
    that refuses to delete a user who still belongs somewhere."""
    pia = {"username": "pia", "email": "pia@acme.example", "first_name": "P", "last_name": "P"}
    onboard = {
        "version": 1,
        "users": [pia],
        "workspaces": [{"name": "Onboarding", "users": ["pia"]}],
    }
    retire = {
        "version": 1,
        "users": [],
        "workspaces": [{"name": "Onboarding", "users": []}],
        "policy": {"prune_users": True},
    }
    settings = SandboxSettings(refuse_user_delete_of_members=True)

    async def run() -> Any:
        async with engine_site(example_seed(), tmp_path / "state", settings) as site:
            await site.apply(load_desired(onboard, tmp_path / "a.yaml"), PlanOptions())
            if also_in_an_unmanaged_workspace:  # someone else joins her to "Legacy Scans"
                user_id = next(u["id"] for u in site.dump()["users"] if u["username"] == "pia")
                await site.client.add_to_workspace(user_id, [1])
            retired = await site.apply(load_desired(retire, tmp_path / "b.yaml"), PlanOptions())
            return retired, {u["username"] for u in site.dump()["users"]}

    return asyncio.run(run())


def test_the_tool_empties_what_it_manages_before_deleting_a_user(tmp_path: Path) -> None:
    retired, usernames = _retire_pia(tmp_path, also_in_an_unmanaged_workspace=False)
    assert retired.complete and "pia" not in usernames


def test_a_site_refusing_to_delete_a_member_keeps_the_user_and_says_why(tmp_path: Path) -> None:
    retired, usernames = _retire_pia(tmp_path, also_in_an_unmanaged_workspace=True)
    failed = [o for o in retired.report.outcomes if o.status == "failed"]
    assert [o.action.summary() for o in failed] == ['delete user "pia" (deletes the user account)']
    assert "still belongs to workspaces [1]" in failed[0].detail
    assert "pia" in usernames
