"""The records' document: the first format is read as a user upgrading has it, writes of
unknown outcome are the actions themselves and are stored as they always were, and the one
way records change (``reduce``) leaves the records it is given untouched."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.actions import Done, Pending, Result, WriteAction
from reconciler.core.records import Known, Records, UnreadableWrite, reduce
from reconciler.engine.apply.pending import settle
from reconciler.engine.read.scope import touched
from reconciler.engine.records import document as records_document
from reconciler.engine.records import ledger
from reconciler.errors import StateError
from reconciler.kinds.group.actions import GroupCreate
from reconciler.kinds.workspace.actions import WorkspaceAdd
from reconciler.state.directory import DirectoryRecords
from reconciler.state.documents import dump_document
from tests.support.models import desired_site, live_site

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
    (pending,) = reading.records.pending
    assert isinstance(pending, WorkspaceAdd) and pending.names == ("North",)


def test_reduce_returns_new_records_and_leaves_the_old_ones_alone() -> None:
    before = Records(SITE)
    add = WorkspaceAdd(
        names=("A",), root_access=True, users=(1001,), permissions=None, notifications=None
    )
    after = reduce(before, [Done(add, Result((7,)))])
    assert before.workspaces == {} and after.workspaces["A"].id == 7


# --- writes of unknown outcome: the actions themselves, stored as they always were ---------

ADD = WorkspaceAdd(
    names=("North",), root_access=True, users=(1001,), permissions=None, notifications=None
).after("user_add:dave")
GROUP = GroupCreate(name="night-shift", members=(1001,), groups_before=frozenset({5, 3}))

# What the previous release wrote for ``Pending(ADD, 1700000000.5)`` and ``Pending(GROUP)``.
STORED_PENDING: dict[str, Any] = {
    "format": 3,
    "site": SITE,
    "workspaces": {},
    "groups": {
        "night-shift": {
            "id": None,
            "managed": True,
            "origin": "created",
            "members": [1001],
            "members_known": True,
            "uncertain": True,
            "source": None,
        }
    },
    "users": {},
    "applied_plans": [],
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
            "summary": 'create workspace "North" with 1 user(s)',
            "depends_on": ["user_add:dave"],
        },
        {
            "id": "user_group_add:night-shift",
            "phase": "create_groups",
            "method": "user_group_add",
            "params": {"name": "night-shift", "member_ids": [1001], "groups_before": [3, 5]},
            "summary": 'create user group "night-shift" with 1 member(s)',
            "depends_on": [],
        },
    ],
    "pending_until": 1700000000.5,
    "digests": {},
    "references": {},
    "last_full_read": None,
    "policy": None,
}

# A write kind of a newer version: this one cannot send or settle it, but must not lose it.
NEWER_WRITE = {
    "id": "workspace_rename:North",
    "phase": "rename_workspaces",
    "method": "workspace_rename",
    "params": {"old": "North", "new": "South", "keep_links": True},
    "summary": 'rename workspace "North" to "South"',
    "depends_on": [],
}


def read_back(text: str) -> Records:
    return records_document.from_data(json.loads(text), site=SITE, where="test")


def test_a_pending_write_is_the_action_itself_in_memory_and_when_read() -> None:
    """The event keeps the action sent, not its data; the stored document reads back as the
    same actions. A second event for the same write keeps it once; the same call waiting for
    other writes is another entry (entries compare as they are stored)."""
    records = reduce(Records(SITE), [Pending(ADD, 1700000000.5), Pending(GROUP), Pending(ADD)])
    assert records.pending == (ADD, GROUP)
    assert all(isinstance(write, WriteAction) for write in records.pending)
    again = read_back(dump_document(records_document.to_data(records)))
    assert again == records
    assert [write.depends_on for write in again.pending if isinstance(write, WriteAction)] == [
        ("user_add:dave",),
        (),
    ]
    other = replace(ADD, depends_on=())
    assert reduce(records, [Pending(other)]).pending == (ADD, GROUP, other)


def test_a_records_document_with_pending_writes_round_trips_byte_for_byte() -> None:
    text = dump_document(STORED_PENDING)
    records = read_back(text)
    assert [type(write) for write in records.pending] == [WorkspaceAdd, GroupCreate]
    assert dump_document(records_document.to_data(records)) == text
    made = reduce(Records(SITE), [Pending(ADD, 1700000000.5), Pending(GROUP)])
    assert dump_document(records_document.to_data(made)) == text  # the format of old


def test_a_pending_write_of_a_newer_version_is_read_kept_and_reported() -> None:
    """Records another version wrote are read: the write this one cannot read is kept as
    stored, written back unchanged, and settling reports and drops it, as it always did."""
    text = dump_document({**STORED_PENDING, "pending": [NEWER_WRITE, *STORED_PENDING["pending"]]})
    records = read_back(text)
    newer, add, group = records.pending
    assert newer == UnreadableWrite(NEWER_WRITE, "unknown write method 'workspace_rename'")
    assert (add, group) == (ADD, GROUP)
    assert dump_document(records_document.to_data(records)) == text
    scanned = replace(records, last_full_read="2026-01-01T00:00:00Z")
    assert touched(desired_site({}), scanned) is None  # only a full read can tell
    settled, learnt = settle(records, live_site({}))
    assert settled.pending == ()
    assert learnt[0] == (
        "a write of unknown outcome could not be read back (unknown write method "
        "'workspace_rename') and was dropped; the plan below shows what the site needs now"
    )


@pytest.mark.parametrize("entry", ["workspace_add", 7, ["workspace_add"]])
def test_a_pending_entry_that_is_no_object_is_damage(entry: object) -> None:
    """Not another version's write: no version wrote anything but an object there."""
    document = {**STORED_PENDING, "pending": [entry]}
    with pytest.raises(StateError, match="damaged: a pending write must be an object") as raised:
        records_document.from_data(document, site=SITE, where="test")
    assert "pending[0]" in raised.value.message
