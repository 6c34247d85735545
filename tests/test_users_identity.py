"""Deleting people safely: a user is judged by who the ID is on the site *now*.

A managed user renamed on the site by hand is never deleted under its old name, and a
declared one is not created again; ``policy.min_admins`` counts only active administrators
and holds even with ``--force``. End to end against the sandbox, plus the check made at the
moment a deletion runs (``RunCheck``), fed the way the executor feeds it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.actions import UserDelete
from reconciler.engine.plan import PlanOptions
from reconciler.engine.records import RecordedUser, Records
from reconciler.engine.safety import RunCheck
from reconciler.errors import EXIT_OK, EXIT_REFUSED
from reconciler.model import DesiredSite, LiveUser, Policy
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite, loopback_site


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path) as running:
        yield running


def users_on(site: LoopbackSite) -> dict[str, dict[str, Any]]:
    return {user["username"]: user for user in site.state()["users"]}


def people(*names: str, **policy: Any) -> dict[str, Any]:
    users = [{"username": name, "email": f"{name}@acme.example"} for name in names]
    return {"version": 1, "users": users, "policy": {"prune": False, **policy}}


def test_a_user_renamed_on_the_site_is_never_deleted_under_its_old_name(
    site: LoopbackSite,
) -> None:
    site.write_manifest("people.yaml", people("dave"))
    assert site.run("adopt", "people.yaml").returncode == EXIT_OK
    site.write_manifest("people.yaml", people(prune_users=True, protect_users=["keep-*"]))
    saved = site.run("plan", "people.yaml", "-o", "plan.json")
    assert 'user "dave"' in saved.stdout and "deletes the user account" in saved.stdout
    site.control("users/1004", {"username": "keep-dave"})  # renamed in the web app

    plan = site.run("plan", "people.yaml")
    assert "deletes the user account" not in plan.stdout
    assert 'renamed on the site to "keep-dave"' in plan.stdout
    applied = site.run("apply", "plan.json", "--auto-approve")
    assert applied.returncode != EXIT_OK or "No changes" in applied.stdout
    assert "keep-dave" in users_on(site)


def test_a_declared_user_renamed_on_the_site_is_not_created_again(site: LoopbackSite) -> None:
    site.write_manifest("people.yaml", people("dave"))
    assert site.run("adopt", "people.yaml").returncode == EXIT_OK
    site.control("users/1004", {"username": "dave.old"})
    plan = site.run("plan", "people.yaml")
    assert 'renamed on the site to "dave.old"' in plan.stdout
    applied = site.run("apply", "people.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "dave" not in users_on(site)  # not created a second time
    assert users_on(site)["dave.old"]["id"] == 1004


def test_min_admins_counts_active_administrators_and_force_never_goes_below(
    site: LoopbackSite,
) -> None:
    site.control("users/1005", {"admin": True})  # erin: an active administrator
    site.control("users/1006", {"admin": True, "active": False})  # frank: deactivated
    site.write_manifest("people.yaml", people("erin"))
    assert site.run("adopt", "people.yaml").returncode == EXIT_OK
    site.write_manifest("people.yaml", people(prune_users=True, min_admins=2))
    refused = site.run("apply", "people.yaml", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "1 active administrator(s), fewer than policy.min_admins (2)" in refused.stderr
    forced = site.run("apply", "people.yaml", "--auto-approve", "--force")
    assert forced.returncode != EXIT_OK
    assert "refused at the moment it was to run" in forced.stderr + forced.stdout
    assert "erin" in users_on(site)


# --- the check at the moment a deletion runs ----------------------------------------------

DAVE = UserDelete(user_id=1004, username="dave")
CALLER = LiveUser(1, "admin", "admin@acme.example", admin=True, active=True)


def run_check(**policy: Any) -> RunCheck:
    desired = DesiredSite((), (), Policy(prune_users=True, **policy))
    return RunCheck(desired, PlanOptions(), caller_id=1)


def records() -> Records:
    return Records("https://acme.example.net", users={"dave": RecordedUser(1004, managed=True)})


def test_the_check_refuses_a_user_renamed_after_the_plan_was_read() -> None:
    renamed = LiveUser(1004, "keep-dave", "dave@acme.example", active=True)
    check = run_check().with_users([CALLER, renamed])
    assert 'now called "keep-dave"' in (check.refusal(DAVE, records()) or "")
    protected = run_check(protect_users=("keep-*",)).with_users([CALLER, renamed])
    assert "protect_users" in (protected.refusal(DAVE, records()) or "")
    same = run_check().with_users([CALLER, LiveUser(1004, "dave", "d@acme.example")])
    assert same.refusal(DAVE, records()) is None


def test_the_check_refuses_when_the_users_were_not_read_again() -> None:
    assert "not read" in (run_check().refusal(DAVE, records()) or "")


def test_the_check_keeps_min_admins_across_the_deletions_of_one_apply() -> None:
    both = Records(
        "https://acme.example.net",
        users={
            "dave": RecordedUser(1004, managed=True),
            "erin": RecordedUser(1005, managed=True),
        },
    )
    dave = LiveUser(1004, "dave", "d@acme.example", admin=True, active=True)
    erin = LiveUser(1005, "erin", "e@acme.example", admin=True, active=True)
    check = run_check(min_admins=2).with_users([CALLER, dave, erin])
    assert check.refusal(DAVE, both) is None
    second = check.refusal(UserDelete(user_id=1005, username="erin"), both)
    assert "fewer than policy.min_admins (2)" in (second or "")


def test_a_users_file_that_vanished_from_the_manifest_directory_deletes_no_one(
    site: LoopbackSite,
) -> None:
    (site.workdir / "team").mkdir()
    policy = {"prune_users": True, "max_user_removal_fraction": 1.0, "max_deletes": 10}
    site.write_manifest("team/policy.yaml", {"version": 1, "policy": policy})
    site.write_manifest("team/people.yaml", {"users": people("erin", "frank")["users"]})
    assert site.run("adopt", "team").returncode == EXIT_OK
    assert site.run("apply", "team", "--auto-approve").returncode == EXIT_OK  # files recorded
    (site.workdir / "team" / "people.yaml").unlink()  # a bad merge, a rename
    refused = site.run("apply", "team", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "people.yaml" in refused.stderr and 'user "erin"' in refused.stderr
    assert {"erin", "frank"} <= set(users_on(site))
