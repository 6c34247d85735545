"""``state diff`` of a table filled at once: deepdiff reports the whole table as changed (two
or more entries added to an empty one, as a first apply does), which was an "Internal error"
(IndexError); each entry is said instead. Found by running ``state diff``'s help example."""

from __future__ import annotations

from reconciler.engine.records.diff import records_changes


def test_a_table_filled_at_once_is_said_entry_by_entry() -> None:
    old = {"workspaces": {}, "references": {}}
    new = {
        "workspaces": {"Finance": {"id": 1}, "Legal": {"id": 2}},
        "references": {"alice": [1001, "alice"], "bob": [1002, "bob"]},
    }
    changes = records_changes(old, new)
    said = [(c.kind, c.name, c.change, c.after) for c in changes]
    assert said == [
        ("reference", "alice", "added", [1001, "alice"]),
        ("reference", "bob", "added", [1002, "bob"]),
        ("workspace", "Finance", "added", {"id": 1}),
        ("workspace", "Legal", "added", {"id": 2}),
    ]
