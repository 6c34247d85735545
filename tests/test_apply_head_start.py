"""An apply sends the site's two lists as soon as it holds the site's lock, so that they
travel while its records are read, as a plan's do (issue 47); never before the lock is held,
since a read sent before it could miss the writes of the apply that holds it. Nor are they
used when the records say an interrupted apply's creation may still land: they may have been
answered before it did."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.core.planning import PlanOptions
from reconciler.engine.apply.journal import Journal
from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite
from reconciler.sandbox.rows import NewWorkspace
from reconciler.state.backend import Holder, LockHeld
from tests.support.engine_site import EngineSite, engine_site
from tests.support.site_strategies import load_desired

pytestmark = pytest.mark.anyio

SUPPORT = Path(__file__).parent / "support"
SEED: dict[str, Any] = yaml.safe_load((SUPPORT / "access_seed.yaml").read_text(encoding="utf-8"))


def _manifest(tmp_path: Path, **more: Any) -> DesiredSite:
    document = yaml.safe_load((SUPPORT / "access_site.yaml").read_text(encoding="utf-8"))
    document["workspaces"].append({"name": "Newcomers", "users": ["erin"], **more})
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    desired = load_manifest([str(path)]).desired
    assert desired is not None
    return desired


async def test_an_apply_reads_each_list_once_and_applies(tmp_path: Path) -> None:
    """The lists sent ahead are the very calls the plan reads: none is sent twice."""
    desired = _manifest(tmp_path)
    async with engine_site(SEED, tmp_path) as site:
        site.app.sandbox.calls.clear()
        await site.plan(desired, PlanOptions())
        planned = Counter(site.app.sandbox.calls)
        site.app.sandbox.calls.clear()
        outcome = await site.apply(desired)
        applied = Counter(site.app.sandbox.calls)
    assert outcome.complete and "Newcomers" in {w.name for w in outcome.plan.changes}
    assert {method: applied[method] for method in planned} == planned
    assert applied["workspace_list"] == 1 and applied["users_location_access"] == 1


async def test_an_apply_that_cannot_take_the_lock_sends_nothing(tmp_path: Path) -> None:
    desired = _manifest(tmp_path)
    async with engine_site(SEED, tmp_path) as site:
        site.app.sandbox.calls.clear()
        with site.store.lock(Holder.current("apply (another runner)")), pytest.raises(LockHeld):
            await site.apply(desired)
        assert not site.app.sandbox.calls


def _lands_after_the_first_list(site: EngineSite, name: str) -> None:
    """The site carries out an interrupted apply's ``workspace_add`` of ``name`` just after it
    answers the first ``workspace_list`` (the one sent ahead): a later list shows it."""
    lists = 0

    def land(method: str, body: bytes) -> bytes:
        nonlocal lists
        if method == "workspace_list":
            lists += 1
            if lists == 1:
                workspace = NewWorkspace(
                    None, name, f"/{name}", False, False, False, frozenset(), frozenset(), ()
                )
                site.app.sandbox.store.add_workspaces([workspace], int(time.time()))
        return body

    site.tap.lie = land


@pytest.mark.parametrize("command", ["plan", "apply"])
async def test_a_creation_that_lands_after_the_lists_sent_ahead_is_the_tools(
    tmp_path: Path, command: str
) -> None:
    """A killed apply's creation of "Late Arrival" lands after the lists sent ahead were
    answered but before the wait for it looks: taken from those lists, it would be settled
    as never done, and the workspace would stay unmanaged for good (never pruned)."""
    late = {"version": 1, "workspaces": [{"name": "Late Arrival", "users": []}]}
    pruned = {"version": 1, "workspaces": [], "policy": {"prune": True}}
    async with engine_site(SEED, tmp_path / "state") as site:
        (create,) = (await site.plan(load_desired(late, tmp_path / "late.yaml"))).actions
        with site.store.lock(Holder.current("killed apply (test)")) as lease:
            journal = Journal(site.store, lease, site.store.load().version)
            journal.write("intent", create, until=time.time() + 20)
        _lands_after_the_first_list(site, "Late Arrival")
        desired = load_desired(pruned, tmp_path / "none.yaml")
        if command == "plan":
            plan = await site.plan(desired, PlanOptions(force=True))
        else:
            plan = (await site.apply(desired, PlanOptions(force=True))).plan
            assert "Late Arrival" not in {w["name"] for w in site.dump()["workspaces"]}
    summaries = [action.summary() for action in plan.actions]
    assert [s.startswith('delete workspace "Late Arrival"') for s in summaries] == [True], summaries
