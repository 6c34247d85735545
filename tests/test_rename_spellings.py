"""Issue 32, item 1: a rename (or a manifest) that spells an old name otherwise never destroys.

The site compares names without regard to case or width, so ``previously: [legal]`` names the
recorded ``Legal``, and a manifest that now writes ``LEGAL`` means the same workspace. Each
case runs the CLI (in-process, against the embedded sandbox) with prune on, as the issue's
attacker did: nothing is deleted or created, the records move, the site keeps its objects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.errors import EXIT_OK, EXIT_REFUSED
from reconciler.sandbox.store import Store
from tests.support.cli_runner import CliOutcome, run_reconciler

PRUNE = {"prune": True, "prune_users": True, "max_delete_fraction": 1.0}
FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)})


class Site:
    """A manifest in a directory of its own and the embedded sandbox beside it."""

    def __init__(self, directory: Path) -> None:
        self.manifest = directory / "site.yaml"
        self.database = directory / ".reconciler" / "sandbox" / "site.db"

    def write(self, document: dict[str, Any]) -> None:
        self.manifest.write_text(yaml.safe_dump({"version": 1, **document}), encoding="utf-8")

    def run(self, *args: str) -> CliOutcome:
        return run_reconciler(*args, str(self.manifest), "--sandbox")

    def validate(self) -> CliOutcome:
        return run_reconciler("validate", str(self.manifest))

    def apply(self) -> CliOutcome:
        return self.run("apply", "--auto-approve")

    def records(self) -> dict[str, Any]:
        shown = self.run("state", "show")
        assert shown.exit_code == EXIT_OK, shown.stderr
        data: dict[str, Any] = json.loads(shown.stdout)
        return data

    def objects(self) -> dict[str, dict[str, int]]:
        """What the site holds, by kind: name -> ID."""
        store = Store(str(self.database))
        try:
            return {
                "workspaces": {ws.name: ws.id for ws in store.workspaces()},
                "groups": {g.name: g.id for g in store.groups()},
                "users": {u.username: u.id for u in store.users()},
            }
        finally:
            store.close()


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path)


def _applied(site: Site) -> None:
    applied = site.apply()
    assert applied.exit_code == EXIT_OK, applied.output
    assert "DELETED" not in applied.output and "will be REPLACED" not in applied.output


@pytest.mark.parametrize("old", ["legal", "LEGAL", "Legal".translate(FULLWIDTH), " legal"])
def test_a_workspace_renamed_from_another_spelling_keeps_its_files(site: Site, old: str) -> None:
    site.write({"workspaces": [{"name": "Legal", "users": ["frank"]}], "policy": PRUNE})
    _applied(site)
    legal = site.objects()["workspaces"]["Legal"]
    site.write(
        {
            "workspaces": [{"name": "Counsel", "users": ["frank"], "previously": [old.strip()]}],
            "policy": PRUNE,
        }
    )
    assert site.validate().exit_code == EXIT_OK

    applied = site.apply()
    assert applied.exit_code == EXIT_OK, applied.output
    assert 'the site keeps calling it "Legal"' in applied.stdout
    assert "DELETED" not in applied.stdout
    assert site.objects()["workspaces"] == {"Legacy Scans": 1, "Legal": legal}  # files kept
    recorded = site.records()["workspaces"]
    assert recorded["Counsel"]["id"] == legal and "Legal" not in recorded


@pytest.mark.parametrize("old", ["auditors", "AUDITORS", "auditors".translate(FULLWIDTH)])
def test_a_group_renamed_from_another_spelling_is_kept(site: Site, old: str) -> None:
    site.write({"groups": [{"name": "Auditors", "members": ["alice"]}], "policy": PRUNE})
    _applied(site)
    auditors = site.objects()["groups"]["Auditors"]
    site.write(
        {"groups": [{"name": "audit", "members": ["alice"], "previously": [old]}], "policy": PRUNE}
    )
    assert site.validate().exit_code == EXIT_OK
    applied = site.apply()
    assert applied.exit_code == EXIT_OK, applied.output
    assert "DELETED" not in applied.stdout
    assert site.objects()["groups"]["Auditors"] == auditors
    assert site.records()["groups"]["audit"]["id"] == auditors


@pytest.mark.parametrize("old", ["Dave", "DAVE"])
def test_a_user_renamed_from_another_spelling_keeps_the_account(site: Site, old: str) -> None:
    dave = {"username": "dave", "email": "dave@acme.example", "first_name": "Dave"}
    site.write({"users": [dave], "policy": PRUNE})
    assert site.run("adopt").exit_code == EXIT_OK  # the site's account 1004, now managed
    site.write({"users": [{**dave, "username": "dave.d", "previously": [old]}], "policy": PRUNE})
    assert site.validate().exit_code == EXIT_OK
    applied = site.apply()
    assert applied.exit_code == EXIT_OK, applied.output
    assert "deletes the user account" not in applied.stdout
    assert site.objects()["users"]["dave"] == 1004
    assert site.records()["users"]["dave.d"]["id"] == 1004


def test_a_manifest_that_respells_its_names_changes_nothing(site: Site) -> None:
    """No ``previously`` at all: ``LEGAL`` is the workspace ``Legal``, not a new one (the old
    one pruned); the records follow the manifest's spelling."""
    nina = {
        "username": "nina",
        "email": "nina@acme.example",
        "first_name": "Nina",
        "last_name": "K",
    }
    site.write(
        {
            "workspaces": [{"name": "Legal", "users": ["frank", "nina"]}],
            "groups": [{"name": "Auditors", "members": ["nina"]}],
            "users": [nina],
            "policy": PRUNE,
        }
    )
    _applied(site)
    before = site.objects()
    site.write(
        {
            "workspaces": [{"name": "LEGAL", "users": ["FRANK", "Nina"]}],
            "groups": [{"name": "auditors".translate(FULLWIDTH), "members": ["NINA"]}],
            "users": [{**nina, "username": "Nina"}],
            "policy": PRUNE,
        }
    )
    plan = site.run("plan", "--detailed-exitcode")
    assert plan.exit_code == EXIT_OK, plan.output  # nothing to do
    _applied(site)
    assert site.objects() == before
    recorded = site.records()
    assert set(recorded["workspaces"]) == {"LEGAL"}
    assert set(recorded["users"]) == {"Nina"}


def test_the_rename_guard_trips_on_another_spelling(site: Site) -> None:
    """The new name has records of its own (its workspace was deleted by hand), so the
    records cannot move: deleting ``Legal`` to create ``Counsel`` is refused, though
    ``previously`` spells the old name ``LEGAL``."""
    workspaces = [{"name": "Legal", "users": ["frank"]}, {"name": "Counsel", "users": []}]
    site.write({"workspaces": workspaces, "policy": PRUNE})
    _applied(site)
    store = Store(str(site.database))
    store.delete_workspace(site.objects()["workspaces"]["Counsel"])  # by hand, in the web app
    store.close()
    site.write({"workspaces": [{"name": "Counsel", "previously": ["LEGAL"]}], "policy": PRUNE})
    refused = site.apply()
    assert refused.exit_code == EXIT_REFUSED, refused.output
    assert 'workspace "Legal" would be deleted and "Counsel" created' in refused.stderr
    assert "Legal" in site.objects()["workspaces"]


def test_state_mv_and_forget_take_a_name_in_another_spelling(site: Site) -> None:
    workspaces = [{"name": "Legal", "users": ["frank"]}, {"name": "Marketing", "users": []}]
    site.write({"workspaces": workspaces, "policy": PRUNE})
    _applied(site)
    legal = site.objects()["workspaces"]["Legal"]
    taken = site.run("state", "mv", "workspace", "legal", "MARKETING")
    assert taken.exit_code == 1 and 'A workspace "Marketing" is recorded already' in taken.stderr
    moved = site.run("state", "mv", "workspace", "LEGAL", "Counsel")
    assert moved.exit_code == EXIT_OK, moved.output
    respelt = site.run("state", "mv", "workspace", "counsel", "COUNSEL")  # the same record
    assert respelt.exit_code == EXIT_OK, respelt.output
    assert site.records()["workspaces"]["COUNSEL"]["id"] == legal
    forgot = site.run("state", "forget", "workspace", "Counsel".translate(FULLWIDTH))
    assert forgot.exit_code == EXIT_OK, forgot.output
    assert set(site.records()["workspaces"]) == {"Marketing"}
