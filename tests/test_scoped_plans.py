"""Change-scoped plans (``--changed``), property-based and by example.

Two sandboxes start from the same generated site. One follows a sequence of manifests with
full plans; the other with scoped plans, and a full plan at the end. Between steps someone
edits both sites behind the tool's back (a member added or removed by hand, a managed
workspace deleted by hand). Then:

* every scoped plan acts only on objects in its touched set (``plan.context.scope``);
* after the final full apply, both sites are the same, name by name (IDs may differ).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.core.planning import PlanOptions
from reconciler.engine.planning.plan import Plan
from reconciler.errors import RefusedForSafety
from tests.support.engine_site import EngineSite, engine_site
from tests.support.figures import tally
from tests.support.site_strategies import load_desired, manifests, starting_seeds

TALLY: dict[str, int] = {}

HandEdit = tuple[str, int, int]  # (kind of edit, workspace or group pick, user pick)

hand_edits = st.lists(
    st.tuples(
        st.sampled_from(["join", "leave", "delete", "delete group"]),
        st.integers(0, 20),
        st.integers(0, 20),
    ),
    max_size=3,
)


@dataclass(frozen=True)
class Scenario:
    seed: dict[str, Any]
    documents: list[dict[str, Any]]
    edits: list[list[HandEdit]]


scenarios = st.builds(
    Scenario,
    seed=starting_seeds(),
    documents=st.lists(manifests(), min_size=2, max_size=3),
    edits=st.lists(hand_edits, min_size=3, max_size=3),
)


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    base = tmp_path_factory.mktemp("scoped")
    counter = itertools.count()
    yield lambda: Path(base / f"example-{next(counter)}")
    tally("scoped plans (hypothesis)", TALLY)
    TALLY.clear()


def _count(name: str, amount: int = 1) -> None:
    TALLY[name] = TALLY.get(name, 0) + amount


async def _apply(site: EngineSite, path: Path, document: dict[str, Any], changed: bool) -> Plan:
    desired = load_desired(document, path)
    options = PlanOptions(assume_no_groups=True, changed=changed)
    try:
        outcome = await site.apply(desired, options)
    except RefusedForSafety:
        forced = PlanOptions(force=True, assume_no_groups=True, changed=changed)
        outcome = await site.apply(desired, forced)
    assert outcome.complete
    return outcome.plan


def _assert_within_scope(plan: Plan) -> None:
    scope = plan.context.scope
    if scope is None:
        _count("scoped plans that fell back to full")
        return
    _count("scoped plans")
    allowed = {(kind[:-1], name) for kind, names in scope.items() for name in names}
    outside = [a.summary() for a in plan.actions if not set(a.touches()) <= allowed]
    assert outside == [], outside
    _count("scoped actions", len(plan.actions))


async def _edit_by_hand(site: EngineSite, edits: list[HandEdit]) -> None:
    """What another administrator does in the web app, the same on both sites."""
    dump = site.dump()
    workspaces = sorted(dump["workspaces"], key=lambda ws: ws["name"])
    users = sorted(u["id"] for u in dump["users"] if not u.get("admin"))
    groups = sorted(dump["groups"], key=lambda group: group["name"])
    for kind, ws_pick, user_pick in edits:
        if kind == "delete group":
            if groups:
                group = groups.pop(ws_pick % len(groups))
                await site.client.user_group_delete(group["id"])
                _count("hand edits (delete group)")
            continue
        if not workspaces or not users:
            return
        workspace = workspaces[ws_pick % len(workspaces)]
        user = users[user_pick % len(users)]
        if kind == "join":
            await site.client.add_to_workspace(user, [workspace["id"]])
        elif kind == "leave" and workspace["members"]:
            member = sorted(workspace["members"])[user_pick % len(workspace["members"])]
            await site.client.remove_from_workspace(member, [workspace["id"]])
        elif kind == "delete":
            await site.client.workspace_delete(workspace["id"])
            workspaces.remove(workspace)
        _count(f"hand edits ({kind})")


def _effects(plan: Plan) -> set[tuple[Any, ...]]:
    """What a plan's actions do, one effect per object: batching differs between plans of
    different sizes (one workspace_add for two names), and so do the display labels."""
    found: set[tuple[Any, ...]] = set()
    for action in plan.actions:
        params = {k: v for k, v in action.params().items() if k != "user"}
        names = params.pop("names", None)
        params = {k: v for k, v in params.items() if not k.endswith(("_ids", "workspace_ids"))
                  or k in ("user_ids", "member_ids")}  # fmt: skip
        if names is None:
            found.add((action.method, repr(sorted(params.items()))))
        else:
            found |= {(action.method, name, repr(sorted(params.items()))) for name in names}
    return found


def _names(site: EngineSite) -> tuple[list[str], list[str]]:
    dump = site.dump()
    return sorted(w["name"] for w in dump["workspaces"]), sorted(g["name"] for g in dump["groups"])


def _by_name(site: EngineSite) -> dict[str, Any]:
    """The site with IDs replaced by names: what two sites built in another order share."""
    dump = site.dump()
    names = {u["id"]: u["username"] for u in dump["users"]}
    workspaces = sorted(
        (
            ws["name"],
            ws["root_access"],
            sorted(names[m] for m in ws["members"]),
            ws.get("permissions"),
            ws.get("notifications"),
        )
        for ws in dump["workspaces"]
    )
    groups = sorted((g["name"], sorted(names[m] for m in g["members"])) for g in dump["groups"])
    return {"workspaces": workspaces, "groups": groups}


async def _run(scenario: Scenario, directory: Path) -> None:
    async with (
        engine_site(scenario.seed, directory / "full") as full,
        engine_site(scenario.seed, directory / "scoped") as scoped,
    ):
        for step, document in enumerate(scenario.documents):
            await _apply(full, directory / "full.yaml", document, changed=False)
            desired = load_desired(document, directory / "scoped.yaml")
            everything = await scoped.plan(desired, PlanOptions(assume_no_groups=True))
            plan = await _apply(scoped, directory / "scoped.yaml", document, changed=True)
            if step:
                _assert_within_scope(plan)
                extra = _effects(plan) - _effects(everything)
                assert not extra, f"the scoped plan did what a full plan would not: {extra}"
                # what was deleted by hand is created again, as by the full plan
                assert _names(scoped) == _names(full)
            for site in (full, scoped):
                await _edit_by_hand(site, scenario.edits[step])
        last = scenario.documents[-1]
        await _apply(full, directory / "full.yaml", last, changed=False)
        await _apply(scoped, directory / "scoped.yaml", last, changed=False)
        assert _by_name(scoped) == _by_name(full)
    _count("examples")


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios)
def test_scoped_plans_then_a_full_plan_converge_like_full_plans(
    scenario: Scenario, workdirs: Callable[[], Path]
) -> None:
    directory = workdirs()
    directory.mkdir()
    asyncio.run(_run(scenario, directory))


# --- by example ----------------------------------------------------------------------------


def _big_document(size: int) -> dict[str, Any]:
    return {
        "version": 1,
        "workspaces": [{"name": f"Team {n:03}", "users": ["alice", "bob"]} for n in range(size)],
        "groups": [{"name": "crew", "members": ["carol"]}],
    }


def test_a_scoped_plan_reads_what_changed_and_not_the_site(tmp_path: Path) -> None:
    from tests.support.sandbox_site import example_seed

    document = _big_document(40)

    async def run() -> tuple[Plan, dict[str, int], Plan]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            await _apply(site, tmp_path / "site.yaml", document, changed=False)
            document["workspaces"][3]["users"].append("carol")
            document["workspaces"][7]["users"].append("dave")  # never referenced before
            document["groups"][0]["members"].append("erin")
            before = dict(site.client.stats.calls)
            desired = load_desired(document, tmp_path / "site.yaml")
            plan = await site.plan(desired, PlanOptions(changed=True))
            calls = {m: n - before.get(m, 0) for m, n in site.client.stats.calls.items()}
            full = await site.plan(desired)
            return plan, {m: n for m, n in calls.items() if n}, full

    plan, calls, full = asyncio.run(run())
    assert plan.context.scope == {
        "workspaces": ["Team 003", "Team 007"],
        "groups": ["crew"],
        "users": [],
    }
    assert calls == {
        "workspace_list": 1,  # every workspace: one deleted or renamed by hand is seen
        "users_location_access": 1,  # every group: one deleted by hand is created again
        "workspace_info": 2,
        # one search per reference of the touched set (alice, bob, carol, dave, erin): what
        # this plan read names them, but a user it did not read could have one, in another
        # case, as an e-mail, and the reference would then name two people
        "user_list": 5,
    }, calls
    assert sorted(a.id for a in plan.actions) == sorted(a.id for a in full.actions)
    assert "planned 3 of 41 objects" in plan.notices[0]


def test_without_a_full_apply_recorded_changed_falls_back_and_says_so(tmp_path: Path) -> None:
    from tests.support.sandbox_site import example_seed

    async def run() -> Plan:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            desired = load_desired(_big_document(3), tmp_path / "site.yaml")
            return await site.plan(desired, PlanOptions(changed=True))

    plan = asyncio.run(run())
    assert plan.context.scope is None
    assert any("this is a full plan" in notice for notice in plan.notices)
