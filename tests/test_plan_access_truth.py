"""Issue 42, item 2: a plan's "who gains or loses access" is what its apply does to access.

Each case is one a reviewer relies on and the plan got wrong: a pruned workspace's members
were missing (only administrators were listed, as its members were never read), and a user
the plan deletes lost nothing in a targeted plan, nor in a full one where a workspace the
tool does not manage holds them. End to end against the sandbox on loopback; the property
test in ``test_access_oracles.py`` holds every plan to what a later report observes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconciler.errors import EXIT_OK
from tests.support.loopback import SANDBOX_PROFILES, LoopbackSite

OSCAR = {"username": "oscar", "email": "oscar@acme.example", "first_name": "O", "last_name": "O"}


def access_of(site: LoopbackSite, *args: str) -> list[dict[str, Any]]:
    planned = site.run("plan", "site.yaml", "--format", "json", *args)
    assert planned.returncode == EXIT_OK, planned.output
    access: list[dict[str, Any]] = json.loads(planned.stdout)["access"]
    return access


def test_everyone_in_a_pruned_workspace_is_said_to_lose_it(site: LoopbackSite) -> None:
    both = [{"name": "Audit", "users": ["alice", "bob"]}, {"name": "Keep", "users": ["carol"]}]
    site.write_manifest("site.yaml", {"version": 1, "workspaces": both})
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    audit = site.workspaces()["Audit"]["id"]
    site.write_manifest(
        "site.yaml", {"version": 1, "workspaces": both[1:], "policy": {"prune": True}}
    )
    losing = {
        (c["user_id"], c["via"])
        for c in access_of(site)
        if c["workspace_id"] == audit and c["effect"] == "loses"
    }
    assert losing == {(1001, "member"), (1002, "member"), (1, "administrator")}
    text = site.run("plan", "site.yaml").stdout
    assert f'- alice loses access to "Audit" (id {audit}) (workspace deleted)' in text


@pytest.mark.parametrize("targeted", [False, True], ids=["full", "targeted"])
def test_a_deleted_user_loses_every_workspace_they_are_in(
    site: LoopbackSite, targeted: bool
) -> None:
    """oscar is in the hand-made Legacy Scans (never managed, so a plan reads no members of
    it) and in Finance; the plan asks the site which workspaces he is in."""
    finance = {"name": "Finance", "users": ["oscar"]}
    site.write_manifest("site.yaml", {"version": 1, "workspaces": [finance], "users": [OSCAR]})
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    assert site.run("adopt", "site.yaml").returncode == EXIT_OK  # oscar: managed from now on
    ids = {name: ws["id"] for name, ws in site.workspaces().items()}
    site.write_manifest(
        "site.yaml",
        {"version": 1, "workspaces": [{"name": "Finance"}], "policy": {"prune_users": True}},
    )
    scope = ["--target", "user:oscar"] if targeted else []
    losing = {
        c["workspace_id"]
        for c in access_of(site, *scope)
        if c["person"] == "oscar" and c["effect"] == "loses"
    }
    assert losing == {ids["Legacy Scans"], ids["Finance"]}


@pytest.mark.parametrize("sandbox_profile", SANDBOX_PROFILES)
def test_a_managed_user_deleted_by_hand_is_not_asked_about(site: LoopbackSite) -> None:
    """The published site answers ``user_info`` of a deleted ID with a failure, not a 404:
    the plan asks only about users the site still lists, and plans as before."""
    site.write_manifest("site.yaml", {"version": 1, "users": [OSCAR]})
    assert site.run("adopt", "site.yaml").returncode == EXIT_OK
    site.api(lambda client: client.user_delete(1042))  # offboarded in the web app
    site.write_manifest("site.yaml", {"version": 1, "policy": {"prune_users": True}})
    assert access_of(site) == []
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
