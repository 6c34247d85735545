"""The records' document: the first format is read as a user upgrading has it, and the one way
records change (``reduce``) leaves the records it is given untouched."""

from __future__ import annotations

from pathlib import Path

from reconciler.engine import ledger, records_document
from reconciler.engine.actions import Done, Result, WorkspaceAdd
from reconciler.engine.records import Known, Records, reduce
from reconciler.state.directory import DirectoryRecords
from reconciler.state.documents import dump_document

SITE = "https://acme.example.net"

FORMAT_1 = {
    "format": 1,
    "site": SITE,
    "serial": 12,
    "workspaces": {
        "Finance": {
            "id": 10,
            "managed": True,
            "origin": "created",
            "settings_known": True,
            "root_access": False,
            "permissions": ["upload_files"],
            "notifications": None,
            "members": [1001],
        },
        "Legal": {"id": 11, "managed": True, "origin": "adopted", "settings_known": False},
    },
    "groups": {
        "made": {"id": 5, "managed": True, "origin": "created", "members": [1001]},
        "adopted": {"id": 6, "managed": True, "origin": "adopted", "members": [1002]},
    },
    "applied_plans": ["abc"],
    "pending": [
        {
            "id": "workspace_add:North",
            "phase": "create_workspaces",
            "method": "workspace_add",
            "params": {
                "names": ["North"],
                "root_access": True,
                "user_ids": [1001],
                "permissions": None,
                "notifications": None,
            },
            "summary": "create workspace",
            "depends_on": [],
        }
    ],
}


def test_records_of_the_first_format_are_read_with_what_each_fact_was() -> None:
    records = records_document.from_data(FORMAT_1, site=SITE, where="test")
    finance, legal = records.workspaces["Finance"], records.workspaces["Legal"]
    assert finance.root_access == Known(False)
    assert finance.permissions == Known(frozenset({"upload_files"}))
    assert finance.notifications == Known(None)
    assert legal.root_access is None and legal.permissions is None  # never known: unknown
    assert records.groups["made"].members_known  # created by the tool: every member known
    assert not records.groups["adopted"].members_known  # adoption recorded the manifest's word
    assert records.applied_plans == ("abc",)
    assert records.last_full_read is None  # --changed falls back to a full plan


def test_a_runner_of_the_previous_release_is_read_through_the_backend(tmp_path: Path) -> None:
    """Its ``sites/<host>/state.json``, pending write included, becomes the records."""
    legacy = tmp_path / "sites" / "acme.example.net"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text(dump_document(FORMAT_1))
    with DirectoryRecords(tmp_path, SITE) as store:
        reading = ledger.read(store)
    assert set(reading.records.workspaces) == {"Finance", "Legal"}
    assert reading.records.pending[0]["method"] == "workspace_add"


def test_reduce_returns_new_records_and_leaves_the_old_ones_alone() -> None:
    before = Records(SITE)
    add = WorkspaceAdd(
        names=("A",), root_access=True, users=(1001,), permissions=None, notifications=None
    )
    after = reduce(before, [Done(add, Result((7,)))])
    assert before.workspaces == {} and after.workspaces["A"].id == 7
