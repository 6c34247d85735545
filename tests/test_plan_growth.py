"""A plan stays linear in the size of the site: what one write looks up about the site (a
workspace by its ID, the administrators, the plan's other writes) is indexed once a plan,
never searched again for each write. Counted, not timed: how often the plan walks the live
site's list of workspaces must not grow with the number of writes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.core.planning import PlanOptions
from reconciler.core.users import UserDirectory, resolve_references
from reconciler.engine.planning.diff import compare
from reconciler.engine.planning.plan import PlanContext
from reconciler.engine.planning.planner import build_plan
from tests.support.models import desired_site, live_site, site_state

SITE_WORKSPACES = 120


class CountedWalks(tuple[Any, ...]):
    """The live site's workspaces, counting every walk through them."""

    walks = 0

    def __iter__(self) -> Iterator[Any]:
        CountedWalks.walks += 1
        return super().__iter__()


def walks_of_a_plan_changing(changed: int) -> int:
    """Walks through the live workspaces while planning ``changed`` new members and
    ``changed`` new workspaces (every administrator gains each) on a site of 120."""
    names = [f"Team {n:03}" for n in range(SITE_WORKSPACES)]
    live_data = {
        "users": [
            {"id": 1001, "username": "alice", "admin": True},
            {"id": 1002, "username": "bob"},
            {"id": 1003, "username": "carol"},
        ],
        "workspaces": [
            {"id": n + 1, "name": name, "users": [1002]} for n, name in enumerate(names)
        ],
    }
    desired = desired_site(
        {
            "workspaces": [
                {"name": name, "users": ["bob", "carol"] if n < changed else ["bob"]}
                for n, name in enumerate(names)
            ]
            + [{"name": f"New {n:03}", "users": ["carol"]} for n in range(changed)]
        }
    )
    state = site_state(
        {"workspaces": {name: {"id": n + 1, "managed": True} for n, name in enumerate(names)}}
    )
    live = live_site(live_data)
    live = dataclasses.replace(live, workspaces=CountedWalks(live.workspaces))
    directory = UserDirectory.of(live.users)
    comparison = compare(desired, live, state, resolve_references(desired, directory))
    CountedWalks.walks = 0
    plan = build_plan(
        comparison,
        live,
        state,
        directory,
        desired.policy,
        PlanOptions(),
        PlanContext("https://acme.example.net", "2026-11-28T00:00:00Z", "test"),
    )
    assert len(plan.access) >= 2 * changed  # carol gains each; alice each new one
    return CountedWalks.walks


@pytest.mark.parametrize("changed", [40, 100])
def test_planning_walks_the_site_as_often_for_many_writes_as_for_few(changed: int) -> None:
    assert walks_of_a_plan_changing(changed) == walks_of_a_plan_changing(4)
