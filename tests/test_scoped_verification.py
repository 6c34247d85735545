"""Scoped plans (``--changed``) look up every reference of what they touch, and resolve it
exactly as a full plan of the same moment does.

No partial read proves that a reference names one person: a user the read did not name may
have it, in another case, as username or e-mail (``core/users.py``). So each reference of
the touched set is searched -- the calls grow with the change, never with the site.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from reconciler.api.answers import NewUser
from reconciler.core.planning import PlanOptions
from reconciler.engine.planning.plan import Plan
from tests.support.engine_site import EngineSite, engine_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired

BASE: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Finance", "users": ["alice", "bob"]},
        {"name": "Legal", "users": ["carol"]},
        {"name": "Unrelated", "users": ["dave"]},
    ],
}

Edit = Callable[[dict[str, Any]], None]
ByHand = Callable[[EngineSite], Awaitable[None]]


async def _nothing(site: EngineSite) -> None:
    return None


def scoped_and_full(
    tmp_path: Path, edit: Edit, by_hand: ByHand = _nothing
) -> tuple[Plan, dict[str, int], Plan]:
    """The scoped plan after ``edit`` (and the calls it made), and the full plan after it."""
    document = copy.deepcopy(BASE)

    async def go() -> tuple[Plan, dict[str, int], Plan]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            assert (await site.apply(load_desired(document, tmp_path / "site.yaml"))).complete
            await by_hand(site)
            edit(document)
            desired = load_desired(document, tmp_path / "site.yaml")
            before = dict(site.client.stats.calls)
            scoped = await site.plan(desired, PlanOptions(changed=True))
            calls = {m: n - before.get(m, 0) for m, n in site.client.stats.calls.items()}
            full = await site.plan(desired)
            assert scoped.context.scope is not None  # really scoped
            return scoped, {m: n for m, n in calls.items() if n}, full

    return asyncio.run(go())


def ids(plan: Plan) -> list[str]:
    return sorted(action.id for action in plan.actions)


def test_a_reference_a_member_names_is_still_searched(tmp_path: Path) -> None:
    """alice is a member of Finance, but another account could have "alice" as its e-mail:
    the reference is searched, as a full plan's read of every user would see both."""

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][0]["users"].remove("bob")  # Finance: alice stays, named

    scoped, calls, full = scoped_and_full(tmp_path, edit)
    assert calls == {"workspace_list": 1, "workspace_info": 1, "user_list": 1}
    assert ids(scoped) == ids(full) == ["remove_from_workspace:1002"]


def test_the_touched_workspaces_references_are_searched_and_no_more(tmp_path: Path) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][0]["users"].append("erin")  # not a member of anything read

    scoped, calls, full = scoped_and_full(tmp_path, edit)
    # alice, bob and erin: Finance's references; Legal's and Unrelated's are not touched
    assert calls == {"workspace_list": 1, "workspace_info": 1, "user_list": 3}
    assert ids(scoped) == ids(full) == ["add_to_workspace:1005"]


def test_a_reference_matched_only_without_regard_to_case_is_searched(tmp_path: Path) -> None:
    """The reference "Alice" matches the member alice only without regard to case; another
    account with "Alice" as its e-mail would make it name two people, so the site is asked."""

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][0]["users"] = ["Alice", "bob"]

    scoped, calls, full = scoped_and_full(tmp_path, edit)
    assert calls["user_list"] == 2  # "Alice" and "bob"
    assert ids(scoped) == ids(full)


def test_a_member_renamed_by_hand_is_not_taken_for_the_name_it_had(tmp_path: Path) -> None:
    """carol, joined to Legal, was renamed by hand and a new account took her username: the
    member no longer names "carol", so it is searched, and the new carol is meant -- as in a
    full plan, never the account the records remember."""

    async def by_hand(site: EngineSite) -> None:
        site.app.sandbox.store.edit_user(1003, {"username": "carol.old"}, 0)
        await site.client.user_add(NewUser("carol", "carol2@acme.example", "Carol", "Two"))

    def edit(document: dict[str, Any]) -> None:
        document["workspaces"][1]["users"].append("alice")  # Legal: touched

    scoped, calls, full = scoped_and_full(tmp_path, edit, by_hand)
    assert calls["user_list"] == 2  # carol; alice is named by no member of Legal
    assert ids(scoped) == ids(full)
    assert "remove_from_workspace:1003" in ids(scoped)  # the old account leaves Legal
