"""Faults: under every fault switch of the sandbox, and their combinations, repeated apply
converges, and the site never holds a duplicate workspace or group, nor a membership the
manifest does not ask for; a killed apply leaves records from which the next one converges.

* In-process (the real engine and client, ``tests/support/engine_site.py``): the example
  manifest, then a changed one that prunes, each applied until an apply completes, under
  each fault profile with several fault seeds. The faults that came back are counted.
* Over loopback (the real CLI against ``reconciler sandbox serve``): every switch at once,
  and ``reconciler apply`` killed with SIGKILL at random points while it writes.

Soak: ``pytest -m soak tests/test_faults.py`` (more seeds and more kills).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.api.answers import WorkspaceSettings
from reconciler.core.planning import PlanOptions
from reconciler.engine import workflow
from reconciler.engine.apply.journal import Journal
from reconciler.engine.planning.plan import Plan
from reconciler.engine.records import ledger
from reconciler.engine.workflow import AutoApprove, LoadedManifest
from reconciler.errors import EXIT_OK, EXIT_REFUSED
from reconciler.kinds.registry import ACTION_TYPES, action_from_data
from reconciler.sandbox.settings import PROFILES, SandboxSettings
from reconciler.state.backend import Holder
from reconciler.state.directory import DirectoryRecords
from tests.support.engine_site import SITE_URL, engine_site
from tests.support.fault_runs import (
    apply_until_complete,
    changed_document,
    converge_under_faults,
    example_document,
)
from tests.support.figures import tally
from tests.support.invariants import example_site_problems, name_counts
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite, loopback_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import Expectation, load_desired

FAULT_PROFILES: dict[str, dict[str, Any]] = {
    "fail_rate": {"fail_rate": 0.3},
    "drop_after_commit_rate": {"drop_after_commit_rate": 0.3},
    "fail_rate+drop_after_commit_rate": {"fail_rate": 0.2, "drop_after_commit_rate": 0.2},
    "latency+fail_rate+drop_after_commit_rate": {
        "latency_ms": 3,
        "fail_rate": 0.15,
        "drop_after_commit_rate": 0.15,
    },
    "errors_as_200+fail_rate+drop_after_commit_rate": {
        "errors_as_200": True,
        "fail_rate": 0.2,
        "drop_after_commit_rate": 0.2,
    },
    "partial_multi_add+drop_after_commit_rate": {
        "partial_multi_add": True,
        "drop_after_commit_rate": 0.3,
    },
    "legacy_workspace_list+fail_rate+drop_after_commit_rate": {
        "legacy_workspace_list": True,
        "fail_rate": 0.2,
        "drop_after_commit_rate": 0.2,
    },
    "published profile+fail_rate+drop_after_commit_rate": {
        **PROFILES["published"],
        "fail_rate": 0.2,
        "drop_after_commit_rate": 0.2,
    },
    "everything": {
        "errors_as_200": True,
        "partial_multi_add": True,
        "legacy_workspace_list": True,
        "latency_ms": 2,
        "fail_rate": 0.15,
        "drop_after_commit_rate": 0.15,
    },
}
RATE_LIMITED: dict[str, tuple[dict[str, Any], float | None]] = {
    "rate_limit (the site's 429s)": ({"rate_limit": 20, "drop_after_commit_rate": 0.1}, None),
    "rate_limit with --rate-limit": ({"rate_limit": 20, "drop_after_commit_rate": 0.1}, 16.0),
}
CI_SEEDS = range(3)
SOAK_SEEDS = range(3, 43)


def _kill_test_documents() -> dict[str, dict[str, Any]]:
    """The example and a much changed version, each pruning the other's objects: every
    switch between them has tens of writes, deletions included, for a kill to interrupt."""
    example, changed = example_document(prune=True), changed_document()
    changed["workspaces"] += [
        {"name": f"Project {n:02}", "users": [(n + k) % 9 + 1001 for k in range(3)]}
        for n in range(12)
    ]
    changed["groups"] += [{"name": f"crew-{n}", "members": ["olivia", "peggy"]} for n in range(4)]
    for document in (example, changed):
        document["policy"].update(
            max_delete_fraction=1.0, max_member_removal_fraction=1.0, max_deletes=100
        )
    return {"site.yaml": example, "changed.yaml": changed}


SWITCH_FILES = "--force"  # each file prunes every object of the other: the guard is meant to ask


@pytest.mark.parametrize("seed", CI_SEEDS)
@pytest.mark.parametrize("profile", sorted(FAULT_PROFILES))
def test_repeated_apply_converges_under_faults(profile: str, seed: int, tmp_path: Path) -> None:
    runs = asyncio.run(converge_under_faults(FAULT_PROFILES[profile], seed, tmp_path))
    assert runs["manifests converged"] == 2
    tally("faults in-process", runs, runs=1)


@pytest.mark.parametrize("profile", sorted(RATE_LIMITED))
def test_repeated_apply_converges_when_rate_limited(profile: str, tmp_path: Path) -> None:
    faults, client_limit = RATE_LIMITED[profile]
    runs = asyncio.run(converge_under_faults(faults, 1, tmp_path, rate_limit=client_limit))
    if client_limit is None:
        assert runs["rate limited (429)"] > 0  # waited out as Retry-After says
    else:
        assert runs["rate limited (429)"] == 0  # the client keeps under the site's limit
    tally("faults in-process", runs, runs=1)


@pytest.mark.soak
@pytest.mark.parametrize("seed", SOAK_SEEDS)
@pytest.mark.parametrize("profile", sorted(FAULT_PROFILES))
def test_soak_repeated_apply_converges_under_faults(
    profile: str, seed: int, tmp_path: Path
) -> None:
    runs = asyncio.run(converge_under_faults(FAULT_PROFILES[profile], seed, tmp_path))
    tally("faults in-process (soak)", runs, runs=1)


def test_groups_hidden_by_the_site_are_never_created_twice(tmp_path: Path) -> None:
    """A dropped ``user_group_add`` on a site that does not list groups cannot be checked:
    the group is marked uncertain, reported, and never created again."""
    runs: Counter[str] = Counter()
    desired = load_desired(example_document(), tmp_path / "site.yaml")
    settings = SandboxSettings(
        omit_groups_in_location_access=True, drop_after_commit_rate=0.5, random_seed=4
    )

    async def run() -> tuple[dict[str, Any], dict[str, Any], Plan]:
        async with engine_site(example_seed(), tmp_path, settings) as site:
            initial = site.dump()
            first_apply = PlanOptions(assume_no_groups=True)  # the site hides its groups
            await apply_until_complete(site, desired, runs, first_apply)
            site.set_faults(drop_after_commit_rate=0.0)
            again = await site.plan(desired)
            runs.update(site.tap.seen)
            return initial, site.dump(), again

    initial, after, again = asyncio.run(run())
    with DirectoryRecords(tmp_path, SITE_URL) as store:
        groups = ledger.read(store).records.groups
    uncertain = [name for name, group in groups.items() if group.uncertain]
    assert uncertain, "the fault seed should drop at least one user_group_add"
    assert again.actions == ()
    assert all(any(f'"{name}"' in w for w in again.warnings) for name in uncertain)
    assert example_site_problems(initial, after, Expectation.of(desired, initial["users"])) == []
    tally("faults in-process", runs, runs=1)


def test_a_partial_multi_add_after_a_race_creates_nothing_twice(tmp_path: Path) -> None:
    """Three workspaces share one ``workspace_add``; another administrator creates one of
    them between the apply's read and its write. The site creates the other two and refuses
    the call (``partial_multi_add``); the next apply finds them and creates nothing again."""
    document = {
        "version": 1,
        "workspaces": [{"name": n, "users": ["alice"]} for n in ("North", "South", "West")],
    }
    desired = load_desired(document, tmp_path / "site.yaml")

    async def run() -> tuple[dict[str, Any], Plan]:
        settings = SandboxSettings(partial_multi_add=True)
        async with engine_site(example_seed(), tmp_path / "state", settings) as site:
            plan = await site.plan(desired)
            assert [a.params()["names"] for a in plan.actions] == [["North", "South", "West"]]
            await site.client.workspace_add(["South"], WorkspaceSettings(user_ids=(1002,)))
            report = await site.execute(plan, desired)
            assert report.count("failed") == 1 and "Created:" in report.outcomes[0].detail
            await apply_until_complete(site, desired, Counter())
            return site.dump(), await site.plan(desired)

    dump, again = asyncio.run(run())
    assert again.actions == ()
    assert name_counts(dump, "workspaces") == {"Legacy Scans": 1, "North": 1, "South": 1, "West": 1}
    assert all(set(ws["members"]) == {1001} for ws in dump["workspaces"][1:])


# --- over loopback: the real CLI ----------------------------------------------------------

EVERY_SWITCH = SandboxSettings(
    errors_as_200=True,
    partial_multi_add=True,
    legacy_workspace_list=True,
    rate_limit=60,
    latency_ms=10,
    fail_rate=0.15,
    drop_after_commit_rate=0.2,
    random_seed=11,
)


@pytest.mark.slow
def test_the_cli_converges_with_every_switch_on(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path, settings=EVERY_SWITCH) as site:
        initial = site.state()
        applies = site.apply_until_ok("site.yaml", "--rate-limit", "50")
        site.faults(fail_rate=0.0, drop_after_commit_rate=0.0)
        assert site.run("plan", "site.yaml", "--detailed-exitcode").returncode == EXIT_OK
        desired = load_desired(example_document(), tmp_path / "check.yaml")
        expectation = Expectation.of(desired, initial["users"])
        assert example_site_problems(initial, site.state(), expectation) == []
        calls = site.control("calls")["total"]
    tally("faults over loopback (CLI)", runs=1, applies=applies, **{"API calls": calls})


# --- SIGKILL at random points -------------------------------------------------------------

KILL_LATENCY_MS = 30
SLOW_ENOUGH_TO_KILL_MS = 400  # time to see a call arrive and kill before its answer
# How long the next apply waits for a write a kill left in doubt: short where the kill comes
# right after one call arrived; random kills keep 5 s, since a write the site is slow to carry
# out (a busy machine) must still land within it (2 s left a workspace unrecorded in a soak).
KILLED_TIMEOUT = "2"


def _writes_received(site: LoopbackSite) -> int:
    methods = site.control("calls")["methods"]
    return sum(count for method, count in methods.items() if method in ACTION_TYPES)


def _kill_during_apply(site: LoopbackSite, manifest: str, rng: random.Random) -> bool:
    """Start ``apply`` and kill -9 it a random moment after its first write reached the site;
    True if it was killed (rather than finishing first)."""
    site.control("calls/reset", {})
    process = site.start(
        "apply", manifest, "--auto-approve", "--concurrency", "2", "--timeout", "5", SWITCH_FILES
    )
    deadline = time.monotonic() + 60
    while not _writes_received(site) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(rng.uniform(0.0, 0.3))
    killed = process.poll() is None
    if killed:
        os.kill(process.pid, signal.SIGKILL)
    site.collect(process)
    return killed


def _kill_when_received(site: LoopbackSite, manifest: str, method: str) -> None:
    """Start ``apply`` and kill -9 it as soon as the site receives a ``method`` call."""
    site.control("calls/reset", {})
    process = site.start(
        "apply", manifest, "--auto-approve", "--concurrency", "1", "--timeout", KILLED_TIMEOUT
    )
    deadline = time.monotonic() + 60
    while not site.control("calls")["methods"].get(method) and time.monotonic() < deadline:
        assert process.poll() is None, "apply ended before it sent " + method
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    site.collect(process)


@pytest.mark.e2e
@pytest.mark.slow
def test_a_creation_settled_by_a_killed_apply_stays_managed(tmp_path: Path) -> None:
    """An apply is killed after sending ``user_group_add`` (its journal holds the intent
    only). The next apply finds the group, so it is the tool's, adds a member to it, and is
    killed too. The third must still know the group as created by the tool, so that a later
    manifest without it prunes it."""
    team = {"name": "Payments", "members": ["carol", "dave"]}
    documents = {
        "first.yaml": {"version": 1, "teams": [team]},
        "second.yaml": {"version": 1, "teams": [{**team, "members": ["carol", "dave", "erin"]}]},
        "third.yaml": {"version": 1, "policy": {"prune": True}},
    }
    for name, document in documents.items():
        (tmp_path / name).write_text(yaml.safe_dump(document), encoding="utf-8")
    with loopback_site(tmp_path, own_process=True) as site:
        store = DirectoryRecords(tmp_path / ".reconciler", site.url)
        assert site.run("plan", "first.yaml", "-o", "first.json").returncode == EXIT_OK
        saved = json.loads((tmp_path / "first.json").read_text())
        actions = [action_from_data(a) for a in saved["actions"]]
        (group_add,) = [a for a in actions if a.method == "user_group_add"]
        with store.lock(Holder.current("killed apply (test)")) as lease:
            # what the killed apply left: the intent...
            Journal(store, lease, store.load().version).write("intent", group_add)
        site.api(lambda client: client.user_group_add("Payments", [1003, 1004]))  # ...sent

        site.faults(latency_ms=SLOW_ENOUGH_TO_KILL_MS)
        _kill_when_received(site, "second.yaml", "workspace_add")
        site.faults(latency_ms=0)
        events = store.journal_entries()
        assert ("done", "add_to_user_group:1005") in [
            (e["event"], e["action"]["id"]) for e in events
        ]

        assert site.run("apply", "second.yaml", "--auto-approve").returncode == EXIT_OK
        assert ledger.read(store).records.groups["Payments"].origin == "created"
        guarded = site.run("apply", "third.yaml", "--auto-approve")  # second.yaml is not given
        assert guarded.returncode == EXIT_REFUSED, guarded.stdout
        assert "every object declared in second.yaml" in guarded.stderr
        assert site.run("apply", "third.yaml", "--auto-approve", "--force").returncode == EXIT_OK
        assert set(site.groups()) == {"old-contractors"}
        assert set(site.workspaces()) == {"Legacy Scans"}


def _lock_left_held(store: DirectoryRecords) -> bool:
    """Whether the killed apply still held the lock: one killed as it was exiting (on a loaded
    machine, after it had let the lock go) leaves nothing to take over."""
    lease = json.loads((store.directory / "lease.json").read_text(encoding="utf-8"))
    return not lease.get("released")


def kill_and_recover(tmp_path: Path, kills: int, seed: int) -> Counter[str]:
    rng = random.Random(seed)
    runs: Counter[str] = Counter()
    documents = _kill_test_documents()
    for name, document in documents.items():
        (tmp_path / name).write_text(yaml.safe_dump(document), encoding="utf-8")
    settings = SandboxSettings(latency_ms=KILL_LATENCY_MS)
    with loopback_site(tmp_path, settings=settings, own_process=True) as site:
        initial = site.state()
        store = DirectoryRecords(tmp_path / ".reconciler", site.url)
        held_when_killed = False  # the last apply was killed holding the lock
        for number in range(kills):
            killed = _kill_during_apply(site, sorted(documents)[number % 2], rng)
            runs["applies killed with SIGKILL" if killed else "applies that finished first"] += 1
            held_when_killed = killed and _lock_left_held(store)
            runs["journals left by a kill"] += killed and bool(store.journal_entries())
            for left in store.directory.rglob("*"):
                expected = 0o700 if left.is_dir() else 0o600
                assert left.stat().st_mode & 0o777 == expected, left
        for number, (name, document) in enumerate(documents.items()):
            final = site.run("apply", name, "--auto-approve", SWITCH_FILES)
            assert final.returncode == EXIT_OK, final.stderr
            runs["locks taken over"] += "took the lock over" in final.stderr
            if number == 0:  # a killed holder's lock is free at once, and said so
                # (a kill that came after the lock was given up, as the process ended, is
                # not a takeover)
                took_over = "took the lock over" in final.stderr
                assert took_over == held_when_killed, final.stderr
            assert store.journal_entries() == []
            plan = site.run("plan", name, "--detailed-exitcode")
            assert plan.returncode == EXIT_OK, plan.stdout
            desired = load_desired(document, tmp_path / f"check-{name}")
            expectation = Expectation.of(desired, initial["users"])
            assert example_site_problems(initial, site.state(), expectation) == []
    return runs


@pytest.mark.e2e
@pytest.mark.slow
def test_an_apply_killed_at_random_points_is_picked_up_by_the_next(tmp_path: Path) -> None:
    runs = kill_and_recover(tmp_path, kills=8, seed=2026)
    assert runs["applies killed with SIGKILL"] >= 4 and runs["journals left by a kill"] >= 4
    tally("SIGKILL during apply (CLI)", runs)


@pytest.mark.e2e
@pytest.mark.soak
@pytest.mark.parametrize("seed", range(50))
def test_soak_an_apply_killed_at_random_points_is_picked_up(tmp_path: Path, seed: int) -> None:
    """50 seeded series of 8 kills; run it beside a CPU hog too (docs/reliability.md)."""
    tally("SIGKILL during apply (CLI, soak)", kill_and_recover(tmp_path, kills=8, seed=seed))


def test_a_write_answered_after_the_timeout_is_never_sent_again_before_it_shows(
    tmp_path: Path,
) -> None:
    """The site takes 1.5 s to carry out a workspace_add; the client gives up after 0.5 s and
    reads: nothing yet. Sending it again would make two workspaces on a site that allows
    duplicate names. It stays unknown instead, and the next apply finds the one workspace."""
    document = {"version": 1, "workspaces": [{"name": "Slow", "users": ["alice"]}]}
    desired = load_desired(document, tmp_path / "site.yaml")
    settings = SandboxSettings(allow_duplicate_workspace_names=True)

    async def run() -> tuple[list[str], list[str], int]:
        async with engine_site(example_seed(), tmp_path / "state", settings, timeout=0.5) as site:
            site.tap.slow = lambda method: 1.5 if method == "workspace_add" else 0.0
            first = await site.apply(desired, PlanOptions())
            await asyncio.gather(*site.tap.late)  # the site finishes the first write
            site.tap.slow = lambda method: 0.0
            second = await site.apply(desired, PlanOptions())
            names = [ws["name"] for ws in site.dump()["workspaces"]]
            assert first.report is not None
            statuses = [outcome.status for outcome in first.report.outcomes]
            return names, statuses, len(second.plan.actions)

    names, statuses, left = asyncio.run(run())
    assert names.count("Slow") == 1, names
    assert statuses == ["unknown"], statuses
    assert left == 0  # the second apply found it done


def test_a_member_deleted_on_the_site_is_reported_once_and_never_jams_the_pipeline(
    tmp_path: Path,
) -> None:
    """bob is in the group "crew" by the records; an administrator deletes bob's account in
    the web app. No call that fails for ever: he is dropped from the records, a record change
    the plan shows (once) and the apply saves."""
    with_bob = {"version": 1, "groups": [{"name": "crew", "members": ["alice", "bob"]}]}
    without = {"version": 1, "groups": [{"name": "crew", "members": ["alice"]}]}

    async def run() -> None:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            assert (await site.apply(load_desired(with_bob, tmp_path / "a.yaml"))).complete
            site.app.sandbox.store.delete_user(1002, int(time.time()))  # by hand
            desired = load_desired(without, tmp_path / "a.yaml")
            plan = await site.plan(desired)
            assert plan.actions == (), [a.summary() for a in plan.actions]
            (dropped,) = plan.record_changes
            assert dropped.describe().startswith('group "crew"') and dropped.user_ids == (1002,)
            result = await workflow.apply_manifest(
                LoadedManifest(desired), site.site, PlanOptions(), AutoApprove()
            )
            assert result.records_changed == 1
            assert 1002 not in site.records().groups["crew"].members
            again = await workflow.apply_manifest(
                LoadedManifest(desired), site.site, PlanOptions(), AutoApprove()
            )
            assert again.plan.record_changes == () and again.records_changed == 0  # once
            drift = await workflow.drift(LoadedManifest(desired), site.site)
            assert "1002" not in json.dumps(drift.to_data())
            gone = {"version": 1, "groups": [], "policy": {"prune": True}}
            pruned = await site.apply(load_desired(gone, tmp_path / "a.yaml"))
            assert pruned.complete and "crew" not in {g["name"] for g in site.dump()["groups"]}

    asyncio.run(run())


def _leave_an_intent(site: LoopbackSite, manifest: str) -> None:
    """What an apply killed mid-write leaves: the intent of the one write a plan of
    ``manifest`` makes, which may still land for 20 s."""
    assert site.run("plan", manifest, "-o", "doubt.json").returncode == EXIT_OK
    saved = json.loads((site.workdir / "doubt.json").read_text())
    (action,) = [action_from_data(a) for a in saved["actions"]]
    store = DirectoryRecords(site.workdir / ".reconciler", site.url)
    with store.lock(Holder.current("killed apply (test)")) as lease:
        Journal(store, lease, store.load().version).write("intent", action, until=time.time() + 20)


def _apply_while_it_lands(site: LoopbackSite, manifest: str, lands: Callable[[], None]) -> str:
    """``apply manifest``, and the site carries the write out once the apply has said that it
    waits for it (having found it not there yet); its output. Landing on the apply's word,
    not on a call seen at the site: a list sent ahead of the wait may be answered before the
    write lands or after, as the machine's load decides (that race has its own test,
    ``test_apply_head_start.py``)."""
    process = site.start("apply", manifest, "--auto-approve", "--force")
    assert process.stderr is not None
    said = process.stderr.readline()  # the apply's first line on stderr, or "" once it ended
    if said.startswith("Waiting up to"):
        lands()
    stdout, stderr = site.collect(process)
    assert process.returncode == EXIT_OK, said + stderr
    assert said.startswith("Waiting up to"), said + stderr
    return said + stderr + stdout


def _write_documents(directory: Path, documents: dict[str, Any]) -> None:
    for name, document in documents.items():
        (directory / name).write_text(yaml.safe_dump(document), encoding="utf-8")


@pytest.mark.e2e
def test_a_creation_that_lands_after_the_next_apply_read_is_still_managed(
    tmp_path: Path,
) -> None:
    """An apply is killed with its ``workspace_add`` still on its way: the site carries it out
    a moment later. The next apply, started at once, must not read the site before the
    creation could have landed and settle it as "never happened": the workspace would then
    exist with no record naming it, and prune (or a plan that declares it) would never see
    it as the tool's."""
    _write_documents(tmp_path, {
        "late.yaml": {"version": 1, "workspaces": [{"name": "Late Arrival", "users": []}]},
        "none.yaml": {"version": 1, "workspaces": [], "policy": {"prune": True}},
    })  # fmt: skip
    with loopback_site(tmp_path) as site:
        _leave_an_intent(site, "late.yaml")
        output = _apply_while_it_lands(
            site,
            "none.yaml",
            lambda: site.api(lambda c: c.workspace_add(["Late Arrival"], WorkspaceSettings())),
        )
        assert "Waited" in output
        assert "Late Arrival" not in site.workspaces()  # recorded as the tool's, then pruned
        store = DirectoryRecords(tmp_path / ".reconciler", site.url)
        assert ledger.read(store).records.pending == ()


@pytest.mark.e2e
def test_a_deletion_that_lands_after_the_next_apply_read_is_not_taken_as_undone(
    tmp_path: Path,
) -> None:
    """The same race for a deletion: a killed apply's ``workspace_delete`` lands while the next
    apply reads. Taken as "never happened", the record of a workspace that is gone would stay,
    and the manifest that declares it again would not create it."""
    _write_documents(tmp_path, {
        "keep.yaml": {"version": 1, "workspaces": [{"name": "Doomed", "users": []}]},
        "none.yaml": {"version": 1, "workspaces": [], "policy": {"prune": True}},
    })  # fmt: skip
    with loopback_site(tmp_path) as site:
        assert site.run("apply", "keep.yaml", "--auto-approve").returncode == EXIT_OK
        doomed = site.workspaces()["Doomed"]["id"]
        _leave_an_intent(site, "none.yaml")
        _apply_while_it_lands(
            site, "keep.yaml", lambda: site.api(lambda c: c.workspace_delete(doomed))
        )
        assert "Doomed" in site.workspaces()  # created again, as the manifest declares
        assert site.run("plan", "keep.yaml", "--detailed-exitcode").returncode == EXIT_OK
