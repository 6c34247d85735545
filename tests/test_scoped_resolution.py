"""Scoped plans (``--changed``) resolve users and see hand edits exactly as full plans do.

Each test applies a manifest with a full plan, lets someone change the site by hand, edits
the manifest a little, and then compares the scoped plan with the full plan of the same
moment: the same actions, or the same refusal -- never access for the wrong person.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from reconciler.api.answers import NewUser
from reconciler.core.planning import PlanOptions
from reconciler.engine.planning.plan import Plan
from reconciler.engine.read.identities import UnknownUsers
from tests.support.engine_site import EngineSite, engine_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired

BASE: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Finance", "users": ["alice@acme.example", "bob"]},
        {"name": "Legal", "users": ["carol"]},
        {"name": "Unrelated", "users": ["dave"]},
    ],
    "groups": [{"name": "crew", "members": ["erin"]}],
    "policy": {"prune": True},
}


def actions(plan: Plan) -> list[tuple[str, Any]]:
    """Each action and its parameters, without the display label of a user (a scoped plan
    that did not read a hand-added member's name calls them "#ID")."""
    return sorted(
        (a.id, {k: v for k, v in a.params().items() if k != "user"}) for a in plan.actions
    )


async def scoped_and_full(
    site: EngineSite, document: dict[str, Any], path: Path
) -> tuple[Plan, Plan]:
    desired = load_desired(document, path)
    scoped = await site.plan(desired, PlanOptions(changed=True))
    full = await site.plan(desired)
    assert scoped.context.scope is not None  # really scoped
    return scoped, full


def run(tmp_path: Path, by_hand: Any, edit: Any) -> tuple[Plan, Plan, EngineSite]:
    document = copy.deepcopy(BASE)

    async def go() -> tuple[Plan, Plan, EngineSite]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            first = await site.apply(load_desired(document, tmp_path / "site.yaml"))
            assert first.complete
            await by_hand(site)
            edit(document)
            scoped, full = await scoped_and_full(site, document, tmp_path / "site.yaml")
            return scoped, full, site

    return asyncio.run(go())


def test_an_email_that_moved_to_a_new_account_resolves_as_in_a_full_plan(tmp_path: Path) -> None:
    """alice@acme.example now belongs to a new account: the touched workspace gets the new
    account, as in a full plan -- never alice's old account the records remember."""

    async def by_hand(site: EngineSite) -> None:
        site.app.sandbox.store.edit_user(1001, {"email": "alice.old@acme.example"}, 0)
        await site.client.user_add(NewUser("alice2", "alice@acme.example", "Alice", "Two"))

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"].append({"name": "Audit", "users": ["alice@acme.example"]})

    scoped, full = run(tmp_path, by_hand, edit)[:2]
    assert actions(scoped) == actions(full)
    add = next(a for a in scoped.actions if a.id == "workspace_add:Audit")
    assert 1001 not in add.params()["user_ids"]  # the new account, never alice's old one
    assert "remove_from_workspace:1001" in {a.id for a in scoped.actions}  # Finance too


def test_a_workspace_recreated_by_hand_is_read_and_compared_like_a_full_plan(
    tmp_path: Path,
) -> None:
    async def by_hand(site: EngineSite) -> None:
        finance = next(w for w in site.dump()["workspaces"] if w["name"] == "Finance")
        await site.client.workspace_delete(finance["id"])
        store = site.app.sandbox.store
        (new_id,) = [i for i in [await _recreate(site, "Finance")]]
        await site.client.add_to_workspace(1005, [new_id])  # erin, by hand
        assert store.workspace(new_id) is not None

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][1]["users"].append("dave")  # Legal: touched

    scoped, full = run(tmp_path, by_hand, edit)[:2]
    assert actions(scoped) == actions(full)
    assert any(a.id.startswith("remove_from_workspace") for a in full.actions)


async def _recreate(site: EngineSite, name: str) -> int:
    from reconciler.api.answers import WorkspaceSettings

    created = await site.client.workspace_add([name], WorkspaceSettings())
    return created[0]


def test_a_group_deleted_by_hand_is_created_again_by_a_scoped_plan(tmp_path: Path) -> None:
    async def by_hand(site: EngineSite) -> None:
        crew = next(g for g in site.dump()["groups"] if g["name"] == "crew")
        await site.client.user_group_delete(crew["id"])

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][1]["users"].append("dave")

    scoped, full = run(tmp_path, by_hand, edit)[:2]
    assert actions(scoped) == actions(full)
    assert any(a.id.startswith("user_group_add") for a in scoped.actions)


@pytest.mark.parametrize("changed", [False, True], ids=["full", "scoped"])
def test_a_reference_that_is_an_id_and_a_declared_new_username_is_refused(
    tmp_path: Path, changed: bool
) -> None:
    """ "1002" is bob's ID and the username of a user the manifest declares, not yet created:
    both plans refuse before anyone is given access."""
    document = copy.deepcopy(BASE)

    async def go() -> None:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            await site.apply(load_desired(document, tmp_path / "site.yaml"))
            document["users"] = [
                {"username": "1002", "email": "n@acme.example", "first_name": "N", "last_name": "N"}
            ]
            document["workspaces"][1]["users"].append("1002")
            desired = load_desired(document, tmp_path / "site.yaml")
            with pytest.raises(UnknownUsers) as refused:
                await site.plan(desired, PlanOptions(changed=changed))
            assert "the new user '1002' the manifest declares" in refused.value.message
            assert "user 1002 (username 'bob'" in refused.value.message

    asyncio.run(go())
