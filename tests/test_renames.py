"""Renames in the manifest (``previously:``) and ``state mv``: the real CLI against the sandbox
on loopback. The API cannot rename, so a rename keeps the site object (and a workspace's
files): the records move to the new name and the site keeps the old one until a person
renames it by hand."""

from __future__ import annotations

import json
from typing import Any

from reconciler.core.records import RecordedWorkspace, Records
from reconciler.engine.read.identities import record_moves
from reconciler.errors import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED
from reconciler.model import LiveSite, LiveWorkspace
from tests.support.loopback import LoopbackSite
from tests.support.models import desired_site

NAMES = {"first_name": "Nina", "last_name": "Nowak"}

BEFORE: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Legal", "users": ["frank"]},
        {"name": "Marketing", "users": ["ivan", "nina"]},
    ],
    "groups": [{"name": "crew", "members": ["alice"]}],
    "users": [{"username": "nina", "email": "nina@acme.example", **NAMES}],
    "policy": {"prune": True, "prune_users": True, "max_delete_fraction": 1.0},
}

AFTER: dict[str, Any] = {
    **BEFORE,
    "workspaces": [
        {"name": "Counsel", "users": ["frank", "heidi"], "previously": ["Legal"]},
        {"name": "Marketing", "users": ["ivan", "nina.r"]},  # the new username: the same user
    ],
    "groups": [{"name": "team", "members": ["alice"], "previously": ["crew"]}],
    "users": [
        {"username": "nina.r", "email": "nina@acme.example", **NAMES, "previously": ["nina"]}
    ],
}


def plan_json(site: LoopbackSite, *args: str) -> dict[str, Any]:
    result = site.run("plan", "site.yaml", "--format", "json", *args)
    assert result.returncode == EXIT_OK, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def records(site: LoopbackSite) -> dict[str, Any]:
    shown = site.run("state", "show", "site.yaml")
    assert shown.returncode == EXIT_OK, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def test_a_rename_with_previously_moves_the_records_and_keeps_the_objects(
    site: LoopbackSite,
) -> None:
    site.write_manifest("site.yaml", BEFORE)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    legal, crew = site.workspaces()["Legal"]["id"], site.groups()["crew"]["id"]
    nina = next(u["id"] for u in site.state()["users"] if u["username"] == "nina")
    site.write_manifest("site.yaml", AFTER)

    plan = plan_json(site)
    assert {(c["name"], c["action"]) for c in plan["changes"]} == {("Counsel", "update")}
    assert [a["method"] for a in plan["actions"]] == ["add_to_workspace"]
    moved = [n for n in plan["notices"] if "records move to the new name" in n]
    assert len(moved) == 3
    assert any('the site keeps calling it "Legal"' in n for n in moved)

    applied = site.run("apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    live = site.workspaces()
    assert live["Legal"]["id"] == legal  # the same workspace: its files are kept
    assert sorted(live["Legal"]["members"]) == [1006, 1008]  # frank, heidi
    assert "Counsel" not in live  # the API cannot rename
    assert site.groups()["crew"]["id"] == crew
    assert nina in {u["id"] for u in site.state()["users"]}
    kept = records(site)
    assert kept["workspaces"]["Counsel"]["id"] == legal and "Legal" not in kept["workspaces"]
    assert kept["groups"]["team"]["id"] == crew and "crew" not in kept["groups"]
    assert kept["users"]["nina.r"]["id"] == nina and "nina" not in kept["users"]

    again = site.run("plan", "site.yaml", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.stdout
    assert 'The site still calls workspace "Counsel" by its old name "Legal"' in again.stdout
    assert site.run("drift", "site.yaml").returncode == EXIT_OK


def test_a_rename_without_previously_warns_that_files_would_be_destroyed(
    site: LoopbackSite,
) -> None:
    """What ``previously`` prevents: the plan deletes Legal and creates Counsel, the same
    users and settings under another name, and says it looks like a rename."""
    site.write_manifest("site.yaml", BEFORE)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    plain = {
        **BEFORE,
        "workspaces": [{"name": "Counsel", "users": ["frank"]}, BEFORE["workspaces"][1]],
    }
    site.write_manifest("site.yaml", plain)
    plan = plan_json(site)
    actions = {(c["name"], c["action"]) for c in plan["changes"]}
    assert {("Counsel", "create"), ("Legal", "delete")} <= actions
    (warning,) = [w for w in plan["warnings"] if "looks like a rename" in w]
    assert 'workspace "Legal" is deleted and "Counsel" created' in warning
    assert "files would be destroyed" in warning and 'previously: ["Legal"]' in warning
    text = site.run("plan", "site.yaml")
    assert "looks like a rename; files would be destroyed" in text.stdout + text.stderr

    other = {
        **plain,
        "workspaces": [{"name": "Counsel", "users": ["heidi"]}, BEFORE["workspaces"][1]],
    }
    site.write_manifest("site.yaml", other)  # other users: a new workspace, no warning
    assert not [w for w in plan_json(site)["warnings"] if "looks like a rename" in w]


def test_delete_and_create_of_a_previously_name_is_refused(site: LoopbackSite) -> None:
    """The new name has records of its own (its workspace was deleted by hand), so the
    records cannot move: the plan deletes Legal and creates Counsel, and apply refuses."""
    both = {**BEFORE, "workspaces": [*BEFORE["workspaces"], {"name": "Counsel", "users": []}]}
    site.write_manifest("site.yaml", both)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    counsel = site.workspaces()["Counsel"]["id"]
    site.api(lambda client: client.workspace_delete(counsel))
    site.write_manifest("site.yaml", AFTER)

    applied = site.run("apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_REFUSED, applied.stdout + applied.stderr
    assert 'workspace "Legal" would be deleted and "Counsel" created' in applied.stderr
    assert "state mv workspace" in applied.stderr
    assert "Legal" in site.workspaces()


def test_previously_moves_nothing_when_the_object_is_gone_or_renamed_by_hand() -> None:
    desired = desired_site({"workspaces": [{"name": "Counsel", "previously": ["Legal"]}]})
    recorded = Records("https://x.example", {"Legal": RecordedWorkspace(10, managed=True)})

    def site_with(*workspaces: LiveWorkspace) -> LiveSite:
        return LiveSite((), workspaces, (), False)

    (move,) = record_moves(desired, recorded, site_with(LiveWorkspace(10, "Legal", "/Legal/")))
    assert (move.old, move.new, move.object_id) == ("Legal", "Counsel", 10)
    assert record_moves(desired, recorded, site_with()) == []  # gone: nothing to keep
    other = LiveWorkspace(10, "Legal Dept", "/Legal_Dept/")
    assert record_moves(desired, recorded, site_with(other)) == []  # renamed by hand
    taken = Records(
        "https://x.example", {**recorded.workspaces, "Counsel": RecordedWorkspace(11, managed=True)}
    )
    assert record_moves(desired, taken, site_with(LiveWorkspace(10, "Legal", "/L/"))) == []


def test_a_plan_of_a_rename_alone_is_a_change_for_detailed_exitcode(site: LoopbackSite) -> None:
    """No write, but the records must move: exit 2, so a pipeline runs its apply (issue 31)."""
    site.write_manifest("site.yaml", BEFORE)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    same = {
        **AFTER,
        "workspaces": [{**AFTER["workspaces"][0], "users": ["frank"]}, AFTER["workspaces"][1]],
    }
    site.write_manifest("site.yaml", same)
    plan = site.run("plan", "site.yaml", "--detailed-exitcode")
    assert plan.returncode == EXIT_CHANGES, plan.stdout  # no write, but the records move
    assert "records move to the new name" in plan.stdout
    assert 'workspace "Counsel" (id ' in plan.stdout and 'from "Legal" (previously:)' in plan.stdout
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    assert "Counsel" in records(site)["workspaces"]


def test_state_mv_moves_one_record_in_one_version(site: LoopbackSite) -> None:
    site.write_manifest("site.yaml", BEFORE)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    legal = site.workspaces()["Legal"]["id"]
    versions = len(site.run("state", "history", "site.yaml").stdout.splitlines())

    moved = site.run("state", "mv", "workspace", "Legal", "Counsel", "site.yaml")
    assert moved.returncode == EXIT_OK, moved.stderr
    assert 'Moved the record of workspace "Legal" to "Counsel"' in moved.stdout
    kept = records(site)["workspaces"]
    assert kept["Counsel"]["id"] == legal and "Legal" not in kept
    history = site.run("state", "history", "site.yaml").stdout
    assert len(history.splitlines()) == versions + 1
    assert 'moved the record of workspace "Legal" to "Counsel"' in history

    # the manifest renamed without `previously`: the moved record keeps the workspace
    renamed = {
        **BEFORE,
        "workspaces": [{"name": "Counsel", "users": ["frank"]}, BEFORE["workspaces"][1]],
    }
    site.write_manifest("site.yaml", renamed)
    plan = plan_json(site)
    assert not [c for c in plan["changes"] if c["action"] in ("create", "delete")], plan["changes"]

    missing = site.run("state", "mv", "workspace", "Nope", "Other", "site.yaml")
    assert missing.returncode == 1 and 'No workspace "Nope" is recorded' in missing.stderr
    taken = site.run("state", "mv", "workspace", "Counsel", "Marketing", "site.yaml")
    assert taken.returncode == 1 and 'A workspace "Marketing" is recorded already' in taken.stderr
    assert "state forget workspace" in taken.stderr
