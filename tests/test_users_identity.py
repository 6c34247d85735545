"""Deleting people safely: a user is judged by who the ID is on the site *now*.

A managed user renamed on the site by hand is never deleted under its old name, and a
declared one is not created again; ``policy.min_admins`` counts only active administrators
and holds even with ``--force``. End to end against the sandbox, plus the check made at the
moment a deletion runs (``RunCheck``), fed the way the executor feeds it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.planning import PlanOptions
from reconciler.core.records import RecordedUser, Records
from reconciler.engine.planning.safety import RunCheck
from reconciler.errors import EXIT_OK, EXIT_REFUSED
from reconciler.kinds.user.actions import UserDelete
from reconciler.model import DesiredSite, LiveUser, Policy
from tests.support.engine_site import engine_site
from tests.support.loopback import LoopbackSite
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired


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


# --- answers that lie: user_add and user_delete are checked against the site's own list ----


def _answer(method: str, body: dict[str, Any]) -> Callable[[str, bytes], bytes]:
    def lie(called: str, answer: bytes) -> bytes:
        return json.dumps(body).encode() if called == method else answer

    return lie


def _apply(document: dict[str, Any], tmp_path: Path, lie: Callable[[str, bytes], bytes]) -> Any:
    desired = load_desired(document, tmp_path / "site.yaml")

    async def run() -> tuple[dict[str, Any], Records, Any]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            site.tap.lie = lie
            outcome = await site.apply(desired, PlanOptions())
            site.tap.lie = None
            again = await site.plan(desired)
            return site.dump(), site.records(), (outcome, again)

    return asyncio.run(run())


@pytest.mark.parametrize(
    "answered",
    [1003, 0, -5, 2**60],
    ids=["another user's ID", "zero", "negative", "out of range"],
)
def test_a_user_add_answer_naming_an_id_it_cannot_be_is_not_believed(
    tmp_path: Path, answered: int
) -> None:
    document = {
        "version": 1,
        "users": [NINA],
        "groups": [{"name": "onboarding", "members": ["nina"]}],
    }
    dump, records, (_, again) = _apply(
        document, tmp_path, _answer("user_add", {"userAdd": {"userId": answered}})
    )
    nina = next(user for user in dump["users"] if user["username"] == "nina")
    assert [u["username"] for u in dump["users"]].count("nina") == 1  # created once
    assert records.users["nina"].id == nina["id"] != answered
    group = next(g for g in dump["groups"] if g["name"] == "onboarding")
    assert group["members"] == [nina["id"]]  # never carol (1003)
    assert again.actions == ()


NINA = {"username": "nina", "email": "nina@acme.example", "first_name": "Nina", "last_name": "N"}
DELETE_ANSWERS = {
    "success naming another ID": (200, {"userDelete": {"userId": 1003}}),
    "404 Unknown Method": (404, {"error": {"title": "Unknown Method", "message": "No such"}}),
}


@pytest.mark.parametrize("answer", DELETE_ANSWERS.values(), ids=DELETE_ANSWERS.keys())
def test_a_user_delete_the_site_still_lists_is_not_recorded_as_done(
    tmp_path: Path, answer: tuple[int, dict[str, Any]]
) -> None:
    """The site answers without deleting anyone: the user is still listed, so not gone."""
    status, body = answer
    people = {"version": 1, "users": [{"username": "dave", "email": "dave@acme.example"}]}
    retired = {"version": 1, "users": [], "policy": {"prune_users": True}}

    async def run() -> tuple[dict[str, Any], Records, Any]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            await site.adopt(load_desired(people, tmp_path / "site.yaml"))
            site.tap.instead = lambda method: (
                (status, json.dumps(body).encode()) if method == "user_delete" else None
            )
            outcome = await site.apply(load_desired(retired, tmp_path / "site.yaml"))
            return site.dump(), site.records(), outcome

    dump, records, outcome = asyncio.run(run())
    assert "dave" in {u["username"] for u in dump["users"]}
    assert records.users["dave"].id == 1004  # the records say what the site says
    failed = [o for o in outcome.report.outcomes if o.status == "failed"]
    assert failed and "still lists user #1004" in failed[0].detail, outcome.report.outcomes


@pytest.mark.slow
def test_a_username_written_in_another_case_is_the_same_user(site: LoopbackSite) -> None:
    site.write_manifest("people.yaml", people("dave"))
    assert site.run("adopt", "people.yaml").returncode == EXIT_OK
    site.write_manifest("people.yaml", people("Dave", prune_users=True))
    plan = site.run("plan", "people.yaml", "--detailed-exitcode")
    assert plan.returncode == EXIT_OK, plan.stdout  # no deletion, no creation
    assert site.run("apply", "people.yaml", "--auto-approve").returncode == EXIT_OK
    site.write_manifest("people.yaml", people(prune_users=True))
    retired = site.run("plan", "people.yaml")
    assert 'user "Dave" (id 1004) will be DELETED' in retired.stdout  # the record's new spelling
