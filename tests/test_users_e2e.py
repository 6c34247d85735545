"""Users as code, end to end: the real ``reconciler`` command against a sandbox server.

One apply onboards a team of new people (the users, then the workspace and group naming them);
retiring a user is opt-in (``policy.prune_users``), happens last, and is refused for the
caller, below ``policy.min_admins`` or over ``policy.max_user_removal_fraction``.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.planning import PlanOptions
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from reconciler.sandbox.settings import SandboxSettings
from tests.support.engine_site import engine_site
from tests.support.loopback import SANDBOX_PROFILES, LoopbackSite
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired

TEAM = [
    {"username": "nina", "email": "nina@acme.example", "first_name": "Nina", "last_name": "N"},
    {"username": "omar", "email": "omar@acme.example", "first_name": "Omar", "last_name": "O"},
    {"username": "pia", "email": "pia@acme.example", "first_name": "Pia", "last_name": "P"},
]


def manifest(users: list[dict[str, Any]], **policy: Any) -> dict[str, Any]:
    names = [user["username"] for user in users]
    return {
        "version": 1,
        "users": users,
        "workspaces": [{"name": "Onboarding", "users": [*names, "alice"]}],
        "groups": [{"name": "onboarding", "members": names}],
        "policy": {"prune": False, **policy},
    }


def users_on(site: LoopbackSite) -> dict[str, dict[str, Any]]:
    return {user["username"]: user for user in site.state()["users"]}


def onboard(site: LoopbackSite) -> dict[str, dict[str, Any]]:
    site.write_manifest("team.yaml", manifest(TEAM))
    planned = site.run("plan", "team.yaml")
    assert planned.returncode == EXIT_OK, planned.stderr
    assert "nina (new user)" in planned.stdout
    applied = site.run("apply", "team.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr + applied.stdout
    return users_on(site)


def test_one_apply_onboards_a_team_of_new_people(site: LoopbackSite) -> None:
    users = onboard(site)
    ids = {users[name]["id"] for name in ("nina", "omar", "pia")}
    assert users["nina"]["first_name"] == "Nina" and not users["nina"]["admin"]
    assert set(site.workspaces()["Onboarding"]["members"]) == ids | {1001}
    assert set(site.groups()["onboarding"]["members"]) == ids
    again = site.run("plan", "team.yaml", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.stdout
    assert "No changes." in again.stdout


def test_removing_a_user_deletes_nothing_without_prune_users(site: LoopbackSite) -> None:
    onboard(site)
    site.write_manifest("team.yaml", manifest(TEAM[:2]))
    kept = site.run("apply", "team.yaml", "--auto-approve")
    assert kept.returncode == EXIT_OK, kept.stderr
    assert "kept because policy.prune_users is false" in kept.stdout
    assert "pia" in users_on(site)


def test_with_prune_users_the_user_is_deleted_last(site: LoopbackSite) -> None:
    onboard(site)
    site.write_manifest("team.yaml", manifest(TEAM[:2], prune_users=True))
    plan = site.run("plan", "team.yaml")
    assert 'user "pia"' in plan.stdout and "deletes the user account" in plan.stdout
    actions = json.loads(site.run("plan", "team.yaml", "--format", "json").stdout)["actions"]
    assert [a["method"] for a in actions][-1] == "user_delete"  # after the removals
    assert {a["method"] for a in actions} >= {"remove_from_workspace", "remove_from_user_group"}
    pruned = site.run("apply", "team.yaml", "--auto-approve")
    assert pruned.returncode == EXIT_OK, pruned.stderr + pruned.stdout
    assert "pia" not in users_on(site)
    assert "nina" in users_on(site)


def test_the_guards_refuse_deleting_too_many_users_at_once(site: LoopbackSite) -> None:
    onboard(site)
    site.write_manifest("team.yaml", manifest([], prune_users=True))
    refused = site.run("apply", "team.yaml", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout
    assert "max_user_removal_fraction" in refused.stderr
    assert {"nina", "omar", "pia"} <= set(users_on(site))


def test_the_guards_refuse_deleting_the_caller_or_going_below_min_admins(
    site: LoopbackSite,
) -> None:
    admin = {"username": "admin", "email": "admin@acme.example", "admin": True}
    site.write_manifest("admins.yaml", {"version": 1, "users": [admin]})
    assert site.run("adopt", "admins.yaml").returncode == EXIT_OK  # the caller, adopted
    site.write_manifest("admins.yaml", {"version": 1, "users": [], "policy": {"prune_users": True}})
    refused = site.run("apply", "admins.yaml", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert "whose API key this tool runs with" in refused.stderr
    assert "policy.min_admins" in refused.stderr
    forced = site.run("apply", "admins.yaml", "--auto-approve", "--force")
    assert forced.returncode != EXIT_OK  # checked again when it runs: never the caller
    assert "refused at the moment it was to run" in forced.stderr
    assert "admin" in users_on(site)


def test_differences_on_an_existing_user_are_drift_not_fixed(site: LoopbackSite) -> None:
    declared = {"username": "alice", "email": "alice@elsewhere.example", "admin": True}
    site.write_manifest("alice.yaml", {"version": 1, "users": [declared]})
    plan = site.run("plan", "alice.yaml", "--detailed-exitcode")
    assert plan.returncode == EXIT_OK, plan.stdout  # nothing the API could do
    assert "differs on the site" in plan.stdout
    drift = site.run("drift", "alice.yaml")
    assert drift.returncode == EXIT_CHANGES
    assert "alice@acme.example on the site" in drift.stdout


def test_a_fault_run_creates_each_user_exactly_once(tmp_path: Path) -> None:
    """Writes committed and then cut off, again and again: every user is created once."""
    desired = load_desired(manifest(TEAM), tmp_path / "team.yaml")
    settings = SandboxSettings(drop_after_commit_rate=0.5, random_seed=7)

    async def run() -> tuple[dict[str, Any], Counter[str]]:
        runs: Counter[str] = Counter()
        async with engine_site(example_seed(), tmp_path / "state", settings) as site:
            for _ in range(20):
                runs["applies"] += 1
                outcome = await site.apply(desired, PlanOptions())
                if outcome.complete:
                    break
            runs.update(site.tap.seen)
            site.set_faults(drop_after_commit_rate=0.0)
            again = await site.plan(desired)
            assert again.actions == (), [a.summary() for a in again.actions]
            return site.dump(), runs

    dump, runs = asyncio.run(run())
    assert runs["dropped connections"] >= 2, runs
    names = Counter(user["username"] for user in dump["users"])
    assert all(names[user["username"]] == 1 for user in TEAM), names


@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_a_user_whose_creation_fails_skips_what_needs_it_and_says_why(
    site: LoopbackSite,
) -> None:
    taken = {"username": "zed", "email": "alice@acme.example"}  # the site refuses the e-mail
    document = manifest([taken])
    document["workspaces"].append({"name": "Unrelated", "users": ["bob"]})
    site.write_manifest("team.yaml", document)
    applied = site.run("apply", "team.yaml", "--auto-approve")
    assert applied.returncode == EXIT_ERROR
    assert 'failed: create user "zed"' in applied.stderr
    assert 'skipped: create workspace "Onboarding"' in applied.stderr
    assert "user_add:zed did not complete" in applied.stderr
    assert "Unrelated" in site.workspaces() and "Onboarding" not in site.workspaces()
