"""The guards count users as they count workspaces and groups (issue 20, items 4 and 5).

A manifest file that vanished (a broken link, a bad merge) is noticed however many of its
objects a policy keeps: a file declaring workspaces and users, whose users ``policy.prune_users``
keeps, or one of whose users ``policy.protect_users`` keeps, still deletes everything else it
declared, and that needs ``--force``. End to end: the real CLI against the sandbox.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import EXIT_OK, EXIT_REFUSED
from tests.support.loopback import LoopbackSite, loopback_site


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path) as running:
        yield running


def users_on(site: LoopbackSite) -> set[str]:
    return {user["username"] for user in site.state()["users"]}


def declared(*names: str) -> list[dict[str, Any]]:
    return [
        {
            "username": name,
            "email": f"{name}@acme.example",
            "first_name": name.title(),
            "last_name": "Example",
        }
        for name in names
    ]


def team(site: LoopbackSite, policy: dict[str, Any], people: dict[str, Any]) -> None:
    """A directory manifest: ``team/policy.yaml`` and ``team/people.yaml``, adopted and
    applied once so the records hold which file declares each object."""
    (site.workdir / "team").mkdir()
    site.write_manifest("team/policy.yaml", {"version": 1, "policy": policy})
    site.write_manifest("team/people.yaml", people)
    adopted = site.run("adopt", "team")
    assert adopted.returncode == EXIT_OK, adopted.stdout + adopted.stderr
    applied = site.run("apply", "team", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stdout + applied.stderr


def test_a_vanished_file_whose_users_prune_users_keeps_still_needs_force(
    site: LoopbackSite,
) -> None:
    people = {"workspaces": [{"name": "Vendors", "users": ["erin"]}], "users": declared("erin")}
    team(site, {"prune": True}, people)  # prune_users is off: erin is never deleted
    assert "Vendors" in site.workspaces()
    (site.workdir / "team" / "people.yaml").unlink()

    plan = site.run("plan", "team")
    assert "people.yaml" in plan.stdout and 'workspace "Vendors"' in plan.stdout
    refused = site.run("apply", "team", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "people.yaml" in refused.stderr and "no longer part of the manifest" in refused.stderr
    assert "Vendors" in site.workspaces() and "erin" in users_on(site)


def test_a_vanished_users_file_with_one_protected_user_deletes_no_one(
    site: LoopbackSite,
) -> None:
    policy = {"prune_users": True, "protect_users": ["erin"], "max_user_removal_fraction": 1.0}
    team(site, policy, {"users": declared("erin", "frank")})
    (site.workdir / "team" / "people.yaml").unlink()

    refused = site.run("apply", "team", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "people.yaml" in refused.stderr and 'user "frank"' in refused.stderr
    assert {"erin", "frank"} <= users_on(site)
    forced = site.run("apply", "team", "--auto-approve", "--force")
    assert forced.returncode == EXIT_OK, forced.stdout + forced.stderr
    assert "frank" not in users_on(site) and "erin" in users_on(site)


def test_users_the_tool_created_are_covered_by_the_vanished_file_guard(
    site: LoopbackSite,
) -> None:
    policy = {"prune_users": True, "max_user_removal_fraction": 1.0}
    (site.workdir / "team").mkdir()
    site.write_manifest("team/policy.yaml", {"version": 1, "policy": policy})
    site.write_manifest("team/contractors.yaml", {"users": declared("xavier", "yolanda")})
    created = site.run("apply", "team", "--auto-approve")
    assert created.returncode == EXIT_OK, created.stdout + created.stderr
    assert {"xavier", "yolanda"} <= users_on(site)
    (site.workdir / "team" / "contractors.yaml").unlink()

    plan = site.run("plan", "team")
    assert "contractors.yaml" in plan.stdout and 'user "yolanda"' in plan.stdout
    refused = site.run("apply", "team", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert {"xavier", "yolanda"} <= users_on(site)


def test_a_users_file_renamed_with_its_users_is_not_a_vanished_file(site: LoopbackSite) -> None:
    policy = {"prune_users": True, "max_user_removal_fraction": 1.0}
    team(site, policy, {"users": declared("erin", "frank")})
    people = site.workdir / "team" / "people.yaml"
    text = people.read_text(encoding="utf-8").replace("erin", "Erin")  # the site ignores case
    (site.workdir / "team" / "staff.yaml").write_text(text, encoding="utf-8")
    people.unlink()
    applied = site.run("apply", "team", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stdout + applied.stderr
    assert "no longer part of the manifest" not in applied.stdout + applied.stderr
    assert {"erin", "frank"} <= users_on(site)


def test_max_deletes_counts_user_deletions_with_workspace_deletions(site: LoopbackSite) -> None:
    people = {"workspaces": [{"name": "Vendors", "users": ["erin"]}], "users": declared("erin")}
    policy = {"prune": True, "prune_users": True, "max_deletes": 1}
    policy |= {"max_user_removal_fraction": 1.0, "max_delete_fraction": 1.0}
    team(site, policy, people)
    site.write_manifest("team/people.yaml", {"users": []})  # both removed on purpose

    refused = site.run("apply", "team", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "it deletes 2 objects, more than policy.max_deletes (1)" in refused.stderr
    assert "Vendors" in site.workspaces() and "erin" in users_on(site)


def test_force_never_deletes_below_min_admins_active_administrators(site: LoopbackSite) -> None:
    """Three administrators besides the caller: one deactivated, two active. With
    ``min_admins: 2`` the two active ones cannot both go, even with ``--force``; the
    deactivated one never counted."""
    site.control("users/1004", {"admin": True})  # dave
    site.control("users/1005", {"admin": True})  # erin
    site.control("users/1006", {"admin": True, "active": False})  # frank: deactivated
    policy = {"prune_users": True, "min_admins": 2, "max_user_removal_fraction": 1.0}
    team(site, policy, {"users": declared("dave", "erin", "frank")})
    site.write_manifest("team/people.yaml", {"users": declared("frank")})

    plan = site.run("plan", "team")
    assert (
        "leave 1 active administrator(s), fewer than policy.min_admins (2), which --force"
        in plan.stdout
    )
    forced = site.run("apply", "team", "--auto-approve", "--force")
    assert forced.returncode == EXIT_REFUSED, forced.stdout + forced.stderr
    assert "refused at the moment it was to run" in forced.stderr
    assert "--force never overrides" in forced.stderr
    left = users_on(site)
    assert "frank" in left and len({"dave", "erin"} & left) == 1  # one may go, never both
