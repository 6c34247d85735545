"""A saved plan whose apply was cut short says how far it got (issue 31, item 6).

A records database restart stopped an apply at 23 of 48 writes; running the plan again said
"already applied (48 of 48 actions ran)", because the count was guessed from what a fresh plan
still wanted, and once users are created the rest of a plan no longer looks as saved. The
count now comes from what ran: the apply's own outcomes, else the journal it left.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.planning import PlanOptions
from reconciler.core.records import PlanApplied, PlanProgress, PlanRun, Records, reduce
from reconciler.engine.apply.journal import recover
from reconciler.engine.planning.plan import Plan, PlanContext
from reconciler.engine.planning.saved import refuse_applied_again
from reconciler.errors import EXIT_OK, EXIT_REFUSED, RefusedForSafety
from tests.support.loopback import LoopbackSite, loopback_site
from tests.support.postgres import libpq_environment, running_postgres

SITE = "https://acme.example.net"

# Three users to create, then groups naming them: once the users exist, the groups' actions
# carry their IDs instead of "known after apply", so a fresh plan no longer matches the saved
# one action for action.
TEAM: dict[str, Any] = {
    "version": 1,
    "users": [
        {"username": n, "email": f"{n}@acme.example", "first_name": n, "last_name": "X"}
        for n in ("nina", "omar", "pia")
    ],
    "groups": [{"name": f"team-{i}", "members": ["nina", "alice"]} for i in range(4)],
}
RAN = re.compile(r"did not finish: (\d+) of (\d+) actions ran; make a new plan to finish the rest")
"""Three users, then four groups: stopped once the groups are being created, the three users
are done, and not every group."""


def wait_for_groups(site: LoopbackSite, timeout: float = 60) -> None:
    """Until the site has received the first group creation: every user is done by then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if site.control("calls")["methods"].get("user_group_add", 0) >= 1:
            return
        time.sleep(0.02)
    raise AssertionError(f"the site received no group creation in {timeout} s")


def cut_short(site: LoopbackSite, stop: Any) -> tuple[int, int]:
    """Save a plan of TEAM, start applying it, ``stop`` the apply once it creates groups, and
    run the plan again: the counts its refusal gives."""
    site.write_manifest("team.yaml", TEAM)
    assert site.run("plan", "team.yaml", "-o", "plan.json").returncode == EXIT_OK
    site.faults(latency_ms=250)
    process = site.start(
        "apply", "plan.json", "team.yaml", "--auto-approve", "--concurrency", "1",
        "--lock-lease", "2", "--timeout", "5",
    )  # fmt: skip
    wait_for_groups(site)
    stop(process)
    site.collect(process)
    site.faults(latency_ms=0)
    again = site.run("apply", "plan.json", "team.yaml", "--auto-approve", "--lock-timeout", "30")
    assert again.returncode == EXIT_REFUSED, again.stdout + again.stderr
    assert "already been applied" not in again.stderr, again.stderr
    found = RAN.search(again.stderr)
    assert found is not None, again.stderr
    assert "reconciler plan team.yaml -o plan.json" in again.stderr
    return int(found.group(1)), int(found.group(2))


@pytest.mark.e2e
@pytest.mark.slow
def test_a_plan_whose_apply_was_killed_says_how_many_actions_ran(site: LoopbackSite) -> None:
    done, total = cut_short(site, lambda process: os.kill(process.pid, signal.SIGKILL))
    assert total == 7  # three users, four groups
    assert 3 <= done < total


@pytest.mark.e2e
@pytest.mark.slow
def test_a_plan_stopped_by_a_records_database_restart_says_how_many_actions_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database goes away mid-apply (its writes can no longer be journaled, so it
    stops); it comes back, and the plan is run again."""
    with running_postgres() as server:
        libpq_environment(monkeypatch, server.app_password)
        monkeypatch.setenv("RECONCILER_STATE", server.url(schema="restarted"))
        with loopback_site(tmp_path) as site:

            def restart(process: Any) -> None:
                server.stop()
                process.wait(timeout=120)  # it stops at its next journal entry
                server.start()

            done, total = cut_short(site, restart)
    assert total == 7
    assert 3 <= done < total


def _plan(actions: int) -> Plan:
    from reconciler.kinds.user.actions import UserAdd
    from reconciler.model import DesiredUser, Source

    users = tuple(
        UserAdd.declared(DesiredUser(f"u{i}", f"u{i}@x.example", Source("t.yaml")))
        for i in range(actions)
    )
    return Plan(PlanContext(SITE, "now", "test", ("site/",)), PlanOptions(), users)


def _refusal(plan: Plan, records: Records) -> str:
    with pytest.raises(RefusedForSafety) as refused:
        refuse_applied_again(plan, records)
    return refused.value.message


def test_the_refusal_counts_what_ran_as_the_records_say() -> None:
    plan = _plan(5)
    started = reduce(Records(SITE), [PlanApplied(plan.checksum, 5)])
    assert started.plan_runs[plan.checksum] == PlanRun(5, 0)
    partly = reduce(started, [PlanProgress(plan.checksum, 2)])
    assert "did not finish: 2 of 5 actions ran; make a new plan" in _refusal(plan, partly)
    unsure = reduce(started, [PlanProgress(plan.checksum, 2, 1)])
    assert "rest (1 more sent with no answer: the next plan checks" in _refusal(plan, unsure)
    whole = reduce(started, [PlanProgress(plan.checksum, 5)])
    assert "already been applied (5 of 5 actions ran)" in _refusal(plan, whole)
    older = Records(SITE, applied_plans=(plan.checksum,))  # applied by an older release
    assert "already been applied; a saved plan" in _refusal(plan, older)
    records_only = reduce(Records(SITE), [PlanApplied(_plan(0).checksum, 0)])
    assert "changed only the tool's records" in _refusal(_plan(0), records_only)


def test_the_journal_of_an_apply_cut_short_counts_each_action_once() -> None:
    """A write done in two parts (two "done" entries) is one action that ran."""
    plan = _plan(3)
    first, second = (action.to_data() for action in plan.actions[:2])
    result = {"ids": [7]}
    entries = [
        {"event": "intent", "base": 4, "action": first, "plan": plan.checksum},
        {"event": "done", "base": 4, "action": first, "plan": plan.checksum, "result": result},
        {"event": "done", "base": 4, "action": first, "plan": plan.checksum, "result": result},
        {"event": "intent", "base": 4, "action": second, "plan": plan.checksum},
    ]
    recovered = recover(entries, 4)
    assert recovered.progress == [PlanProgress(plan.checksum, 1, 1)]  # one done, one unanswered
    started = reduce(Records(SITE), [PlanApplied(plan.checksum, 3)])
    assert reduce(started, recovered.progress).plan_runs[plan.checksum] == PlanRun(3, 1, 1)


def test_the_same_change_saved_again_within_a_second_is_a_new_plan(site: LoopbackSite) -> None:
    """Add alice, remove her, add her again, each saved and applied at once (a script, a
    quick reviewer): the third plan holds what the first held, but it is a new plan and
    runs; before, both were stamped to the second and the third was 'already applied'."""
    with_alice = {"version": 1, "workspaces": [{"name": "Audit", "users": ["alice"]}]}
    without = {"version": 1, "workspaces": [{"name": "Audit", "users": []}]}
    site.write_manifest("site.yaml", with_alice)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    for document in (without, with_alice, without, with_alice):
        site.write_manifest("site.yaml", document)
        assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
        applied = site.run("apply", "plan.json", "site.yaml", "--auto-approve")
        assert applied.returncode == EXIT_OK, applied.output
    assert site.workspaces()["Audit"]["members"] == [1001]
