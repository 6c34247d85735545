"""Time-limited access (issue 45): ``expires:`` from the manifest to the removal.

A workspace member, a group member, a team member and a site account each carry an expiry
date; the site is applied on days before, on and after it, the day fixed by the clock the
docs name for tests (``RECONCILER_TODAY``) or shown with ``--at``. Before the date every plan
lists what ends soon; on and after it the access is removed like any other, saying why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import LoopbackSite
from tests.support.webhook import Receiver, receiver

__all__ = ["receiver"]  # the webhook receiver fixture

ENDS = "2026-12-31"
ALICE, BOB, CAROL, DAVE, MALLORY = 1001, 1002, 1003, 1004, 1011

MANIFEST: dict[str, Any] = {
    "version": 1,
    "users": [
        {
            "username": "quentin",
            "email": "quentin@acme.example",
            "first_name": "Quentin",
            "last_name": "Quinn",
            "expires": ENDS,
        },
    ],
    "workspaces": [
        {"name": "Finance", "users": ["alice", {"user": "bob", "expires": ENDS}, "quentin"]},
    ],
    "groups": [
        {"name": "auditors", "members": ["alice", {"user": "mallory", "expires": ENDS}]},
    ],
    "teams": [
        {"name": "Payments", "members": ["carol", {"user": "dave@acme.example", "expires": ENDS}]},
    ],
    "policy": {
        "max_member_removal_fraction": 1,
        "prune_users": True,
        "max_user_removal_fraction": 1,
    },
}


def on(site: LoopbackSite, day: str, *args: str) -> CliOutcome:
    """``reconciler ARGS`` with the clock set to ``day`` (tests only: ``RECONCILER_TODAY``)."""
    result = run_reconciler(*args, cwd=site.workdir, env={**site.env, "RECONCILER_TODAY": day})
    site.transcript += [result.stdout, result.stderr]
    assert "Traceback" not in result.stderr, result.stderr
    return result


def members(site: LoopbackSite) -> dict[str, set[int]]:
    state = site.state()
    found = {ws["name"]: set(ws["members"]) for ws in state["workspaces"]}
    found.update({f"group:{g['name']}": set(g["members"]) for g in state["groups"]})
    return found


def usernames(site: LoopbackSite) -> set[str]:
    return {user["username"] for user in site.state()["users"]}


@pytest.fixture
def granted(site: LoopbackSite) -> LoopbackSite:
    """The manifest applied a month before the grants end: everyone has their access."""
    site.write_manifest("site.yaml", MANIFEST)
    applied = on(site, "2026-12-01", "apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.output
    held = members(site)
    assert {ALICE, BOB} <= held["Finance"] and MALLORY in held["group:auditors"]
    assert DAVE in held["Payments"] and DAVE in held["group:Payments"]
    assert "quentin" in usernames(site)
    return site


def test_before_the_date_nothing_is_removed_and_every_plan_says_what_ends_soon(
    granted: LoopbackSite,
) -> None:
    plan = on(granted, "2026-12-26", "plan", "site.yaml", "--detailed-exitcode")
    assert plan.returncode == EXIT_OK, plan.output  # nothing to change yet
    for line in (
        'bob loses access to "Finance" on 2026-12-31 (in 5 days)',
        'mallory leaves the user group "auditors" on 2026-12-31 (in 5 days)',
        'dave@acme.example loses access to "Payments" on 2026-12-31 (in 5 days)',
        'dave@acme.example leaves the user group "Payments" on 2026-12-31 (in 5 days)',
        "the account quentin expires on 2026-12-31 (in 5 days)",
    ):
        assert line in plan.stdout, plan.stdout
    early = on(granted, "2026-12-01", "plan", "site.yaml")
    assert "Expires soon" not in early.stdout  # beyond the 14 days of notice
    applied = on(granted, "2026-12-30", "apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK and "in 1 day" in applied.stdout, applied.output
    assert BOB in members(granted)["Finance"] and "quentin" in usernames(granted)


@pytest.mark.parametrize("day", ["2026-12-31", "2027-01-05"])
def test_on_and_after_the_date_each_kind_of_access_is_removed_saying_why(
    granted: LoopbackSite, day: str
) -> None:
    plan = on(granted, day, "plan", "site.yaml", "--format", "json")
    assert plan.returncode == EXIT_OK, plan.output
    data = json.loads(plan.stdout)
    expired = {(c["person"], c["workspace"]): c for c in data["access"] if c["cause"] == "expired"}
    assert set(expired) == {("bob", "Finance"), ("dave", "Payments"), ("quentin", "Finance")}
    assert {c["expires"] for c in expired.values()} == {ENDS}
    notes = {(c["kind"], c["name"]): c.get("note") for c in data["changes"]}
    assert notes[("workspace", "Finance")] == f"bob: expired {ENDS}; quentin: expired {ENDS}"
    assert notes[("group", "auditors")] == f"mallory: expired {ENDS}"
    assert notes[("user", "quentin")] == f"expired {ENDS}"

    text = on(granted, day, "plan", "site.yaml")
    assert f'- bob loses access to "Finance" (id 2) (expired {ENDS})' in text.stdout, text.stdout
    assert "note: mallory: expired 2026-12-31" in text.stdout
    markdown = on(granted, day, "plan", "site.yaml", "--format", "markdown")
    assert f"(expired {ENDS})" in markdown.stdout

    applied = on(granted, day, "apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.output
    held = members(granted)
    assert held["Finance"] == {ALICE}
    assert held["group:auditors"] == {ALICE}
    assert held["Payments"] == held["group:Payments"] == {CAROL}
    assert "quentin" not in usernames(granted)
    again = on(granted, day, "plan", "site.yaml", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.output  # converged, the entries left in place
    assert "past their expiry date" in again.stdout and "reconciler expire" in again.stdout


def test_an_expired_account_is_kept_where_the_policy_keeps_users_and_loses_its_access(
    site: LoopbackSite,
) -> None:
    keeping = {**MANIFEST, "policy": {"max_member_removal_fraction": 1}}
    site.write_manifest("site.yaml", keeping)
    assert on(site, "2026-12-01", "apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    plan = on(site, ENDS, "plan", "site.yaml")
    kept = f'user "quentin": expired on {ENDS}; kept because policy.prune_users is false'
    assert kept in plan.stdout, plan.stdout
    assert 'quentin loses access to "Finance"' in plan.stdout
    assert on(site, ENDS, "apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    assert "quentin" in usernames(site) and members(site)["Finance"] == {ALICE}


def test_plan_at_shows_the_site_the_manifest_wants_on_that_day(granted: LoopbackSite) -> None:
    """``--at`` is the reviewer's preview: the same plan the clock would make on that day,
    saying it is one, and never saved."""
    preview = granted.run("plan", "site.yaml", "--at", "2027-01-05", "--format", "json")
    clocked = on(granted, "2027-01-05", "plan", "site.yaml", "--format", "json")
    previewed, made = json.loads(preview.stdout), json.loads(clocked.stdout)
    assert previewed["at"] == "2027-01-05" and "at" not in made
    assert previewed["access"] == made["access"] and previewed["changes"] == made["changes"]
    assert "a preview" in previewed["notices"][0]
    saved = granted.run("plan", "site.yaml", "--at", "2027-01-05", "-o", "plan.json")
    assert saved.returncode == EXIT_ERROR and "cannot be saved" in saved.stderr
    assert not (granted.workdir / "plan.json").exists()
    bad = granted.run("plan", "site.yaml", "--at", "2027-02-30")
    assert bad.returncode == EXIT_ERROR and "no day of the calendar" in bad.stderr


def test_drift_names_expired_access_as_drift(granted: LoopbackSite) -> None:
    before = on(granted, "2026-12-26", "drift", "site.yaml")
    assert before.returncode == EXIT_OK, before.output
    after = on(granted, "2027-01-05", "drift", "site.yaml", "--format", "json")
    assert after.returncode == EXIT_CHANGES, after.output
    report = json.loads(after.stdout)
    sentences = [item["detail"] for item in report["access"]]
    assert (
        f'bob can reach "Finance" (id 2) on the site; the manifest does not say so (its entry '
        f"in the manifest expired on {ENDS})"
    ) in sentences


def test_a_new_grant_that_has_already_expired_is_an_error(granted: LoopbackSite) -> None:
    audit = {"name": "Audit 2026", "users": ["alice", {"user": "mallory", "expires": "2026-06-30"}]}
    manifest = {**MANIFEST, "workspaces": [*MANIFEST["workspaces"], audit]}
    path = granted.write_manifest("site.yaml", manifest)
    lines = path.read_text().splitlines()
    audit = lines.index("- name: Audit 2026")
    line = next(n for n, text in enumerate(lines, 1) if n > audit and "user: mallory" in text)
    plan = on(granted, "2026-12-01", "plan", "site.yaml")
    assert plan.returncode == EXIT_ERROR
    assert f"site.yaml:{line}:5 (workspaces[1].users[1])" in plan.stderr, plan.stderr
    assert 'mallory\'s access to "Audit 2026" expired on 2026-06-30' in plan.stderr
    assert "Audit 2026" not in members(granted)


def test_a_saved_plan_never_grants_access_that_expired_after_it_was_made(
    site: LoopbackSite,
) -> None:
    manifest = {**MANIFEST, "users": [], "groups": [], "teams": []}
    manifest["workspaces"] = [{"name": "Finance", "users": ["alice"]}]
    site.write_manifest("site.yaml", manifest)
    assert on(site, "2026-12-01", "apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    bob = {"user": "bob", "expires": ENDS}
    manifest["workspaces"] = [{"name": "Finance", "users": ["alice", bob]}]
    site.write_manifest("site.yaml", manifest)
    saved = on(site, "2026-12-30", "plan", "site.yaml", "-o", "plan.json")
    assert saved.returncode == EXIT_OK and "+ users: bob" in saved.stdout, saved.output
    late = on(site, ENDS, "apply", "plan.json", "--auto-approve")
    assert late.returncode == EXIT_REFUSED, late.output  # the plan is stale: refused whole
    assert 'not needed as saved: bob joins workspace "Finance"' in late.output
    assert members(site)["Finance"] == {ALICE}


def test_a_plan_without_expiries_keeps_the_keys_plan_files_always_had(
    site: LoopbackSite,
) -> None:
    plan = site.run("plan", "site.yaml", "--format", "json")
    data = json.loads(plan.stdout)
    assert not {"at", "expiring"} & set(data)
    assert all("expires" not in change for change in data["access"])
    assert "expiry_notice_days" not in data["manifest"]["desired"]["policy"]


def test_the_notice_window_is_the_policys(granted: LoopbackSite) -> None:
    text = yaml.safe_dump({**MANIFEST, "policy": {**MANIFEST["policy"], "expiry_notice_days": 40}})
    granted.write_manifest("site.yaml", text)
    plan = on(granted, "2026-12-01", "plan", "site.yaml")
    assert 'bob loses access to "Finance" on 2026-12-31 (in 30 days)' in plan.stdout
    quiet = {**MANIFEST, "policy": {**MANIFEST["policy"], "expiry_notice_days": 0}}
    granted.write_manifest("site.yaml", quiet)
    assert "Expires soon" not in on(granted, "2026-12-30", "plan", "site.yaml").stdout


def test_drift_notify_warns_once_when_an_expiry_enters_the_notice_window(
    granted: LoopbackSite, receiver: Receiver
) -> None:
    first = on(granted, "2026-12-01", "drift", "site.yaml", "--notify", receiver.url)
    assert first.returncode == EXIT_OK, first.output
    [body] = receiver.take()  # the first report: the unmanaged objects, nothing expiring yet
    assert "expiring" not in body["new"]
    entering = on(granted, "2026-12-17", "drift", "site.yaml", "--notify", receiver.url)
    assert entering.returncode == EXIT_OK, entering.output  # in sync: expiring is no drift
    [warned] = receiver.take()
    listed = {item["detail"] for item in warned["new"]["expiring"]}
    assert 'bob loses access to "Finance" on 2026-12-31 (in 14 days)' in listed
    assert len(listed) == 6  # quentin's account, and its access to Finance with it
    assert "• Expires soon: bob loses access to" in warned["text"]
    later = on(granted, "2026-12-20", "drift", "site.yaml", "--notify", receiver.url)
    assert later.returncode == EXIT_OK and receiver.take() == []  # said once, not nightly
    assert "(in 11 days)" in later.stdout  # the report itself lists them every night


def _entries(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["person"], e["workspace"]): e for e in report["entries"]}


def test_access_reports_show_each_grants_end_and_find_the_expired_ones_still_held(
    granted: LoopbackSite,
) -> None:
    before = on(granted, "2026-12-26", "access", "site.yaml", "--format", "json")
    assert before.returncode == EXIT_OK, before.output
    report = json.loads(before.stdout)
    entries = _entries(report)
    assert entries[("bob", "Finance")]["manifest"] == "declared"
    assert entries[("bob", "Finance")]["expires"] == ENDS  # time-boxed
    assert "expires" not in entries[("alice", "Finance")]  # standing
    assert not [f for f in report["findings"] if f["kind"] == "expired"]

    after = granted.run("access", "site.yaml", "--at", "2027-01-05", "--format", "json")
    report = json.loads(after.stdout)
    entries = _entries(report)
    assert entries[("bob", "Finance")]["manifest"] == "expired"
    assert entries[("bob", "Finance")]["expires"] == ENDS
    [expired] = [f for f in report["findings"] if f["person"] == "bob"]
    assert expired["kind"] == "expired"  # not "undeclared": the manifest did grant it
    assert expired["detail"] == (
        f"still a member of Finance (on {ENDS}), whose grant in the manifest expired"
    )
    text = granted.run("access", "site.yaml", "--at", "2027-01-05").stdout
    assert (
        f"bob      member         true    own (not read)       own (not read)  expired {ENDS}"
        in text
    )
    assert "bob: still a member of Finance (on 2026-12-31)" in text, text
    assert f"declared until {ENDS}" in on(granted, "2026-12-26", "access", "site.yaml").stdout


def test_a_review_file_seals_each_grants_end(granted: LoopbackSite) -> None:
    started = on(granted, "2026-12-26", "review", "start", "site.yaml", "-o", "review.json")
    assert started.returncode == EXIT_OK, started.output
    rows = json.loads((granted.workdir / "review.json").read_text())["rows"]
    ends = {(row["person"], row["workspace"]): row["expires"] for row in rows}
    assert ends[("bob", "Finance")] == ENDS
    assert ends[("alice", "Finance")] == "standing"
    assert ends[("admin", "Finance")] == ""  # an administrator the manifest never names


def test_expired_only_plans_the_removal_of_expired_access_and_nothing_else(
    granted: LoopbackSite,
) -> None:
    """What the scheduled job applies (docs/ci.md): the expiries, never a change of the
    manifest nobody has reviewed yet, nor a repair of drift."""
    finance = {"name": "Finance", "users": [*MANIFEST["workspaces"][0]["users"], "erin"]}
    new = {"name": "Audit", "users": ["alice"]}
    granted.write_manifest("site.yaml", {**MANIFEST, "workspaces": [finance, new]})
    plan = on(granted, ENDS, "plan", "site.yaml", "--expired-only", "-o", "plan.json")
    assert plan.returncode == EXIT_OK, plan.output
    assert "(--expired-only)" in plan.stdout and "erin" not in plan.stdout
    assert 'workspace "Audit"' not in plan.stdout
    assert "Plan: 0 to create, 4 to change, 1 to delete." in plan.stdout, plan.stdout
    applied = on(granted, ENDS, "apply", "plan.json", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.output
    held = members(granted)
    assert held["Finance"] == {ALICE} and "Audit" not in held  # erin not added: not an expiry
    assert held["group:auditors"] == {ALICE} and held["Payments"] == {CAROL}
    assert "quentin" not in usernames(granted)


def test_a_clock_moved_by_the_environment_is_said_on_every_command(tmp_path: Path) -> None:
    """RECONCILER_TODAY is for tests: set by mistake in a pipeline, it decides which access an
    apply removes, so every command says it is set, and to which day."""
    (tmp_path / "site.yaml").write_text("version: 1\n", encoding="utf-8")
    moved = run_reconciler(
        "validate", "site.yaml", cwd=tmp_path, env={**os.environ, "RECONCILER_TODAY": "2030-07-01"}
    )
    assert moved.exit_code == EXIT_OK, moved.output
    assert "Warning: RECONCILER_TODAY sets the day to 2030-07-01" in moved.stderr
    plain = run_reconciler("validate", "site.yaml", cwd=tmp_path)
    assert "RECONCILER_TODAY" not in plain.stderr
