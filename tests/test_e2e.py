"""End to end: the real ``reconciler`` command against a real sandbox server over loopback.

The tests whose behaviour differs on the ``published`` profile (errors with HTTP 200 and the
published generic messages, PHP's JSON, signing over the site's own encoding) run on both
profiles; the core scenario runs on it in ``test_profiles.py``."""

from __future__ import annotations

import json

import pytest
import yaml

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import SANDBOX_PROFILES, LoopbackSite


def manifest(workspaces: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {"version": 1, "workspaces": workspaces, **extra}


def test_example_plan_apply_plan_shows_no_changes(site: LoopbackSite) -> None:
    first = site.run("plan", "site.yaml", "--detailed-exitcode")
    assert first.returncode == EXIT_CHANGES, first.stderr
    assert "Plan: 14 to create, 0 to change, 0 to delete." in first.stdout
    assert "2 objects not managed by the manifest (1 group, 1 workspace)" in first.stdout

    applied = site.run("apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "Apply complete" in applied.stdout

    again = site.run("plan", "site.yaml", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.stdout
    assert "No changes." in again.stdout
    live = site.workspaces()
    assert live["Finance"]["root_access"] is False
    assert sorted(live["Payments"]["members"]) == [1003, 1004]
    assert sorted(site.groups()["auditors"]["members"]) == [1011, 1042]


def test_drift_reports_a_change_made_through_the_api(site: LoopbackSite) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    assert site.run("drift", "site.yaml").returncode == EXIT_OK

    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda client: client.add_to_workspace(1011, [finance]))  # mallory joins by hand

    drift = site.run("drift", "site.yaml", "--format", "json")
    assert drift.returncode == EXIT_CHANGES
    report = json.loads(drift.stdout)
    assert report["in_sync"] is False
    assert [item["name"] for item in report["changed"]] == ["Finance"]
    assert "mallory" in report["changed"][0]["detail"]
    assert {item["name"] for item in report["unmanaged"]} == {"Legacy Scans", "old-contractors"}


def test_saved_plan_is_refused_when_stale_and_applies_once(site: LoopbackSite) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    text = (site.workdir / "site.yaml").read_text()
    site.write_manifest(
        "site.yaml",
        text.replace(
            "users: [frank, grace@acme.example, heidi]",
            "users: [frank, grace@acme.example, heidi, judy]",
        ),
    )
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    assert (site.workdir / "plan.json").stat().st_mode & 0o777 == 0o600

    # A change to a workspace the plan does not touch does not make it stale...
    marketing = site.workspaces()["Marketing"]["id"]
    site.api(lambda client: client.add_to_workspace(1011, [marketing]))
    # ...but a change to one it touches does.
    legal = site.workspaces()["Legal"]["id"]
    site.api(lambda client: client.add_to_workspace(1013, [legal]))
    stale = site.run("apply", "plan.json", "--auto-approve")
    assert stale.returncode == EXIT_REFUSED
    assert "stale" in stale.stderr and 'workspace "Legal" changed' in stale.stderr

    site.api(lambda client: client.remove_from_workspace(1013, [legal]))
    fresh = site.run("apply", "plan.json", "--auto-approve")
    assert fresh.returncode == EXIT_OK, fresh.stderr + fresh.stdout
    assert 1010 in site.workspaces()["Legal"]["members"]
    again = site.run("apply", "plan.json", "--auto-approve")
    assert again.returncode == EXIT_REFUSED
    assert "already been applied" in again.stderr


def test_apply_without_a_terminal_needs_approval(site: LoopbackSite) -> None:
    result = site.run("apply", "site.yaml")
    assert result.returncode == EXIT_REFUSED
    assert "--auto-approve" in result.stderr
    assert set(site.workspaces()) == {"Legacy Scans"}


def test_prune_off_keeps_and_prune_on_deletes_except_protected(site: LoopbackSite) -> None:
    workspaces = [{"name": name, "users": ["alice"]} for name in ("Keep", "Drop", "Archive 1")]
    site.write_manifest("m.yaml", manifest(workspaces))
    assert site.run("apply", "m.yaml", "--auto-approve").returncode == EXIT_OK

    site.write_manifest("m.yaml", manifest(workspaces[:1]))
    kept = site.run("apply", "m.yaml", "--auto-approve")
    assert kept.returncode == EXIT_OK
    assert "kept because policy.prune is false" in kept.stdout
    assert {"Drop", "Archive 1"} <= set(site.workspaces())

    policy = {"prune": True, "protect": ["Archive*"]}
    site.write_manifest("m.yaml", manifest(workspaces[:1], policy=policy))
    plan = site.run("plan", "m.yaml")
    assert 'workspace "Drop"' in plan.stdout and "will be DELETED" in plan.stdout
    assert 'matches policy.protect "Archive*"' in plan.stdout
    pruned = site.run("apply", "m.yaml", "--auto-approve")
    assert pruned.returncode == EXIT_OK, pruned.stderr
    assert set(site.workspaces()) == {"Legacy Scans", "Keep", "Archive 1"}


def test_delete_guard_refuses_unless_forced(site: LoopbackSite) -> None:
    workspaces = [{"name": f"Team {n}", "users": ["alice"]} for n in range(10)]
    site.write_manifest("m.yaml", manifest(workspaces))
    assert site.run("apply", "m.yaml", "--auto-approve").returncode == EXIT_OK

    site.write_manifest("m.yaml", manifest(workspaces[:7], policy={"prune": True}))
    plan = site.run("plan", "m.yaml")
    assert plan.returncode == EXIT_OK  # the guard never blocks the dry run
    assert "Apply will refuse this plan" in plan.stdout
    refused = site.run("apply", "m.yaml", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert "max_delete_fraction" in refused.stderr
    assert len(site.workspaces()) == 11
    forced = site.run("apply", "m.yaml", "--auto-approve", "--force")
    assert forced.returncode == EXIT_OK
    assert len(site.workspaces()) == 8


def test_settings_change_needs_replace(site: LoopbackSite) -> None:
    site.write_manifest("m.yaml", manifest([{"name": "Ops", "users": ["alice"]}]))
    assert site.run("apply", "m.yaml", "--auto-approve").returncode == EXIT_OK
    old_id = site.workspaces()["Ops"]["id"]

    site.write_manifest(
        "m.yaml", manifest([{"name": "Ops", "users": ["alice"], "root_access": False}])
    )
    plan = site.run("plan", "m.yaml", "--detailed-exitcode")
    assert "needs replacement" in plan.stdout and '--replace "Ops"' in plan.stdout
    assert "destroys all files" in plan.stdout
    assert site.run("apply", "m.yaml", "--auto-approve").returncode == EXIT_OK
    assert site.workspaces()["Ops"]["id"] == old_id  # not replaced without --replace

    replaced = site.run("apply", "m.yaml", "--auto-approve", "--replace", "Ops")
    assert replaced.returncode == EXIT_OK, replaced.stderr
    ops = site.workspaces()["Ops"]
    assert ops["id"] != old_id and ops["root_access"] is False
    assert site.run("plan", "m.yaml", "--detailed-exitcode").returncode == EXIT_OK


@pytest.mark.slow
@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_faulty_site_converges_without_duplicates(site: LoopbackSite) -> None:
    site.faults(drop_after_commit_rate=0.3, fail_rate=0.2, random_seed=7)
    for _ in range(6):
        if site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK:
            break
    site.faults(drop_after_commit_rate=0.0, fail_rate=0.0)
    assert site.run("plan", "site.yaml", "--detailed-exitcode").returncode == EXIT_OK
    state = site.state()
    names = [ws["name"] for ws in state["workspaces"]]
    assert len(names) == len(set(names)) == 9
    groups = [g["name"] for g in state["groups"]]
    assert len(groups) == len(set(groups)) == 7


def test_unknown_user_reference_names_file_and_line(site: LoopbackSite) -> None:
    site.write_manifest("m.yaml", "version: 1\nworkspaces:\n  - name: X\n    users: [alice, zed]\n")
    result = site.run("plan", "m.yaml")
    assert result.returncode == EXIT_ERROR
    assert "m.yaml:4" in result.stderr and '"zed"' in result.stderr


def test_invalid_manifest_reads_nothing(site: LoopbackSite) -> None:
    site.write_manifest("m.yaml", yaml.safe_dump({"version": 2}))
    site.control("calls/reset", {})
    result = site.run("plan", "m.yaml")
    assert result.returncode == EXIT_ERROR
    assert site.control("calls")["total"] == 0


def test_saved_plan_with_deletions_and_member_changes_applies(site: LoopbackSite) -> None:
    workspaces = [{"name": n, "users": ["alice"]} for n in ("Stay", "Go")]
    site.write_manifest("m.yaml", manifest(workspaces))
    assert site.run("apply", "m.yaml", "--auto-approve").returncode == EXIT_OK
    changed = [{"name": "Stay", "users": ["alice", "bob"]}]
    site.write_manifest("m.yaml", manifest(changed, policy={"prune": True}))
    assert site.run("plan", "m.yaml", "-o", "p.json").returncode == EXIT_OK
    weaker = site.run("apply", "p.json", "--auto-approve")  # prune was off at the last apply
    assert weaker.returncode == EXIT_REFUSED and "cannot weaken it" in weaker.stderr
    applied = site.run("apply", "p.json", "m.yaml", "--auto-approve")  # the merged manifest
    assert applied.returncode == EXIT_OK, applied.stderr
    live = site.workspaces()
    assert "Go" not in live and sorted(live["Stay"]["members"]) == [1001, 1002]


@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_the_site_runs_the_profile_under_test(site: LoopbackSite, sandbox_profile: str) -> None:
    """Guards the parametrisation: the published run really talks to a published-profile site."""
    settings = site.control("settings")
    published = sandbox_profile == "published"
    assert settings["published_messages"] is settings["php_json"] is published
    assert settings["errors_as_200"] is settings["strict_signing"] is published
    env = {**site.env, "RECONCILER_API_SECRET": "wrong-secret"}
    refused = run_reconciler("plan", "site.yaml", cwd=site.workdir, env=env)
    site.transcript += [refused.stdout, refused.stderr]
    assert refused.returncode == EXIT_ERROR
    assert "Traceback" not in refused.stderr
    assert (
        "Check RECONCILER_API_KEY and RECONCILER_API_SECRET" in refused.stderr
    )  # the hint, either way
