"""An apply records the accesses its done writes ended, with the plan's run (issue 44): how
``review close`` names the apply that carried out a revocation -- who ran it, when, which
plan -- from the records, never from a guess by time."""

from __future__ import annotations

import json

from reconciler.core.memberships import Place
from reconciler.core.records import PlanApplied, PlanProgress, Records, reduce
from reconciler.engine.apply.journal import recover
from reconciler.errors import EXIT_OK
from reconciler.kinds.user.actions import UserDelete
from reconciler.kinds.workspace.actions import WorkspaceDelete, WorkspaceLeave
from tests.support.loopback import LoopbackSite

SITE = "https://site.example"


def test_a_done_removal_is_recorded_with_its_plan_and_a_write_never_done_is_not() -> None:
    leave = WorkspaceLeave(user=1002, user_label="bob", targets=(Place(3, "Legal"), Place(4, "X")))
    gone = UserDelete(user_id=1011, username="mallory")
    pruned = WorkspaceDelete(workspace_id=9, name="Old")
    entries = [
        {"event": "intent", "base": 2, "action": leave.to_data(), "plan": "p1"},
        {"event": "done", "base": 2, "action": leave.to_data(), "plan": "p1"},
        {"event": "intent", "base": 2, "action": gone.to_data(), "plan": "p1"},  # no answer
        {"event": "done", "base": 2, "action": pruned.to_data(), "plan": "p1"},
    ]
    progress = recover(entries, 2).progress
    assert progress == [PlanProgress("p1", 2, 1, ((1002, 3), (1002, 4), (None, 9)))]
    started = reduce(Records(SITE), [PlanApplied("p1", 3)])
    run = reduce(started, progress).plan_runs["p1"]
    assert run.ended == ((1002, 3), (1002, 4), (None, 9))
    # folded twice (the journal, then the apply's own count): each access once
    assert reduce(reduce(started, progress), progress).plan_runs["p1"].ended == run.ended


def test_an_apply_keeps_the_memberships_it_removed_in_the_records(site: LoopbackSite) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    manifest = (site.workdir / "site.yaml").read_text(encoding="utf-8")
    edited = manifest.replace("users: [frank, grace@acme.example, heidi]", "users: [frank]")
    assert edited != manifest
    site.write_manifest("site.yaml", edited)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK

    shown = site.run("state", "show", "site.yaml")
    records = json.loads(shown.stdout)
    legal = records["workspaces"]["Legal"]["id"]
    runs = [run for run in records["plan_runs"].values() if run["ended"]]
    assert [sorted(run["ended"]) for run in runs] == [[[1007, legal], [1008, legal]]]
