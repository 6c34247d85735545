"""One rule for a user reference, everywhere a person names a user.

Carol is ``carol`` / ``Carol.Carter@acme.test``; another account's *username* is exactly
``carol.carter@acme.test`` (its e-mail elsewhere). The site compares usernames and e-mail
addresses without regard to case, so ``carol.carter@acme.test`` names both people: an exact
spelling must never hide the folded one and hand Finance to the wrong person. Every place
that takes a reference -- the manifest's ``users:`` and ``members:`` in full and scoped plans,
``access --user``, ``--target user:``, ``policy.protect_users`` -- follows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.core.users import UserDirectory
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.model import LiveUser, Source, UserRef
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import SANDBOX_PROFILES, LoopbackSite, loopback_site
from tests.support.sandbox_site import seed_with

CAROL_ID, TWIN_ID = 1003, 1100
REFERENCE = "carol.carter@acme.test"


def _seed() -> dict[str, Any]:
    seed = seed_with(
        users=[
            {
                "id": TWIN_ID,
                "username": REFERENCE,
                "email": "cc@elsewhere.test",
                "first_name": "Other",
                "last_name": "Account",
            }
        ]
    )
    seed["users"] = [
        {**user, "email": "Carol.Carter@acme.test"} if user["id"] == CAROL_ID else user
        for user in seed["users"]
    ]
    return seed


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path, _seed()) as running:
        yield running


def finance(*users: str, **policy: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "workspaces": [{"name": "Finance", "users": list(users)}],
        "policy": {"prune": False, **policy},
    }


def _says_both(output: str) -> None:
    assert f"user {CAROL_ID} (username 'carol'" in output, output
    assert f"user {TWIN_ID} (username '{REFERENCE}'" in output, output
    assert f"numeric ID ({CAROL_ID} or {TWIN_ID})" in output, output


@pytest.mark.parametrize("scope", [[], ["--target", "Finance"]], ids=["full", "targeted"])
def test_a_reference_that_is_one_users_username_and_anothers_email_is_refused(
    twins: LoopbackSite, scope: list[str]
) -> None:
    twins.write_manifest("site.yaml", finance(REFERENCE))
    refused = twins.run("apply", "site.yaml", "--auto-approve", *scope)
    assert refused.returncode == EXIT_ERROR, refused.output
    _says_both(refused.stderr)
    assert "Finance" not in twins.workspaces()  # nobody was given anything


def test_the_numeric_id_names_one_of_them(twins: LoopbackSite) -> None:
    twins.write_manifest("site.yaml", finance(str(CAROL_ID)))
    assert twins.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    members = set(twins.workspaces()["Finance"]["members"])
    assert members == {CAROL_ID}


def test_access_user_names_both_people_and_refuses(twins: LoopbackSite) -> None:
    refused = twins.run("access", "--user", REFERENCE)
    assert refused.returncode == EXIT_ERROR, refused.output
    assert "names 2 users" in refused.stderr
    _says_both(refused.stderr)


def test_protect_users_protects_a_user_by_e_mail(twins: LoopbackSite) -> None:
    people = [{"username": "carol", "email": "Carol.Carter@acme.test"}]
    twins.write_manifest("site.yaml", {"version": 1, "users": people})
    assert twins.run("adopt", "site.yaml").returncode == EXIT_OK
    manifest = {
        "version": 1,
        "users": [],
        "policy": {"prune_users": True, "protect_users": ["carol.carter@*"]},
    }
    twins.write_manifest("site.yaml", manifest)
    plan = twins.run("apply", "site.yaml", "--auto-approve")
    assert plan.returncode == EXIT_OK, plan.output
    assert 'matches policy.protect_users "carol.carter@*"' in plan.stdout
    assert CAROL_ID in {user["id"] for user in twins.state()["users"]}


def test_target_user_names_a_declared_user_by_e_mail(twins: LoopbackSite) -> None:
    people = [
        {"username": "nina", "email": "Nina.New@acme.test", "first_name": "N", "last_name": "N"}
    ]
    twins.write_manifest("site.yaml", {"version": 1, "users": people})
    plan = twins.run("plan", "site.yaml", "--target", "user:nina.new@ACME.test")
    assert plan.returncode == EXIT_OK, plan.output
    assert 'user "nina"' in plan.stdout


def test_a_literal_target_naming_two_people_is_refused(twins: LoopbackSite) -> None:
    """The other account is managed (adopted, then left the manifest); Carol is declared by
    her e-mail: ``user:carol.carter@acme.test`` names both, and a targeted plan may delete."""
    other = {"username": REFERENCE, "email": "cc@elsewhere.test"}
    twins.write_manifest("site.yaml", {"version": 1, "users": [other]})
    assert twins.run("adopt", "site.yaml").returncode == EXIT_OK
    carol = {"username": "carol", "email": "Carol.Carter@acme.test"}
    manifest = {"version": 1, "users": [carol], "policy": {"prune_users": True}}
    twins.write_manifest("site.yaml", manifest)
    refused = twins.run("apply", "site.yaml", "--auto-approve", "--target", f"user:{REFERENCE}")
    assert refused.returncode == EXIT_ERROR, refused.output
    assert f'names 2 users: "carol" (e-mail Carol.Carter@acme.test) and "{REFERENCE}"' in (
        refused.stderr
    )
    assert TWIN_ID in {user["id"] for user in twins.state()["users"]}


def test_validate_refuses_a_username_that_is_another_declared_users_email(
    tmp_path: Path,
) -> None:
    people = [
        {"username": "nina", "email": "shared@acme.test", "first_name": "N", "last_name": "N"},
        {"username": "Shared@acme.test", "email": "s2@acme.test", "first_name": "S",
         "last_name": "S"},
    ]  # fmt: skip
    (tmp_path / "site.yaml").write_text(yaml.safe_dump({"version": 1, "users": people}))
    result = run_reconciler("validate", "site.yaml", cwd=tmp_path)
    assert result.returncode == EXIT_ERROR, result.output
    assert (
        "site.yaml:9:3: error: the username 'Shared@acme.test' is the e-mail address of "
        "another declared user (line 2)"
    ) in result.output


def _user(id_: int, username: str, email: str) -> LiveUser:
    return LiveUser(id_, username, email)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (REFERENCE, {CAROL_ID, TWIN_ID}),  # exact username of one, folded e-mail of the other
        ("Carol.Carter@acme.test", {CAROL_ID, TWIN_ID}),  # exact e-mail, folded username
        ("CAROL", {CAROL_ID}),
        (str(TWIN_ID), {TWIN_ID}),
        ("cc@ELSEWHERE.test", {TWIN_ID}),
    ],
)
def test_candidates_are_every_user_the_reference_folds_to(text: str, expected: set[int]) -> None:
    directory = UserDirectory.of(
        [
            _user(CAROL_ID, "carol", "Carol.Carter@acme.test"),
            _user(TWIN_ID, REFERENCE, "cc@elsewhere.test"),
        ]
    )
    found = directory.candidates(UserRef(text, Source("test")))
    assert {user.id for user in found} == expected


@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_an_id_nobody_has_names_no_user_on_every_profile(site: LoopbackSite) -> None:
    """The published site answers ``user_info`` of an ID nobody has with "Please try again",
    not a 404: the look-up asks the user list instead, and says the ID names nobody -- for
    ``access --user`` and for a targeted plan's reference alike."""
    refused = site.run("access", "--user", "99999")
    assert refused.returncode == EXIT_ERROR, refused.output
    assert '--user "99999" names no user on the site' in refused.stderr
    site.write_manifest("site.yaml", finance("99999"))
    plan = site.run("plan", "site.yaml", "--target", "Finance")
    assert plan.returncode == EXIT_ERROR, plan.output
    assert 'no user on the site is "99999"' in plan.stderr
