"""Changes to the tool's records alone, found while reading the site, shown in the plan.

Some of what a plan finds needs no API call, only a change to the records: a ``previously``
rename moves a record to the new name, a recorded member whose user is gone from the site is
dropped, an object that left the manifest and is gone from the site is forgotten. They were
once folded in silently when an apply happened to run, so a plan of nothing else said "No
changes", the pipeline skipped its apply, and the next manifest without ``previously``
deleted the workspace it had renamed (issue 31). Now each is a ``RecordChange`` in the plan:
shown, counted as a change, carried by a saved plan, and saved by its apply.

The observation folds them into the records it compares with (``identities.settle``), so
the plan is made against the records as they will be; an apply saves exactly those records,
with ``record_events`` folded in once more (folding twice changes nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reconciler.core.planning import RecordChange
from reconciler.core.records import (
    Event,
    Forgotten,
    MembersGone,
    RecordedGroup,
    RecordedWorkspace,
    Records,
    Tables,
)

Kind = Literal["workspace", "group", "user"]


@dataclass(frozen=True, slots=True)
class RecordMoved(Event):
    """The record of ``old`` is now the record of ``new``: the same site object, renamed in the
    manifest (``previously``) or by ``state mv``. The site is not changed."""

    kind: Kind
    old: str
    new: str

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = getattr(tables, f"{self.kind}s")
        record = table.get(self.old)
        if record is None or self.new in table:
            return  # never onto another record (``record_moves`` and ``state mv`` make sure
            # no record of another spelling of the new name exists either)
        table[self.new] = table.pop(self.old)
        digests = tables.digests
        if (old_key := f"{self.kind}:{self.old}") in digests:
            del digests[old_key]  # the new name is compared afresh


@dataclass(frozen=True, slots=True)
class Move:
    """A record the manifest's ``previously`` moves, and what the site calls the object."""

    kind: Kind
    old: str
    new: str
    object_id: int | None
    site_name: str | None  # None: the site does not list it (groups on some sites)
    respelled: bool = False  # the manifest writes the recorded name in another spelling

    def notice(self) -> str | None:
        what = {"workspace": "Workspace", "group": "User group", "user": "User"}[self.kind]
        if self.respelled:
            return None  # the same name, as the site compares names: nothing to say
        if self.site_name == self.new:
            return (
                f'{what} "{self.new}" (previously "{self.old}", ID {self.object_id}): the '
                "tool's records move to the new name; the site already calls it by it."
            )
        called = f'"{self.site_name}"' if self.site_name else f'"{self.old}" (as recorded)'
        return (
            f'{what} "{self.new}" (previously "{self.old}", ID {self.object_id}): the tool\'s '
            "records move to the new name; nothing is deleted or created. The site's API "
            f"cannot rename, so the site keeps calling it {called} until someone renames it "
            "in the web app; the tool follows it by ID either way."
        )


def moved(moves: Iterable[Move]) -> list[RecordChange]:
    """The records ``previously`` moves to their new names. A record the manifest merely
    respells (``Legal`` as ``LEGAL``) is the same name as the site compares names: it follows
    the manifest's spelling whenever the records are saved, and is no change of its own."""
    return [
        RecordChange(move.kind, move.new, "move", id=move.object_id, old_name=move.old)
        for move in moves
        if not move.respelled
    ]


def members_dropped(before: Records, after: Records) -> list[RecordChange]:
    """The recorded members ``after`` no longer holds, workspace by workspace, group by group
    (``pending.drop_dead_members`` decides which: those whose users are gone from the site)."""
    return [
        *_dropped("workspace", before.workspaces, after.workspaces),
        *_dropped("group", before.groups, after.groups),
    ]


def _dropped(
    kind: Literal["workspace", "group"],
    was: Mapping[str, RecordedWorkspace | RecordedGroup],
    now: Mapping[str, RecordedWorkspace | RecordedGroup],
) -> list[RecordChange]:
    found = []
    for name, record in sorted(was.items()):
        kept = now.get(name)
        gone = tuple(sorted(record.members - kept.members)) if kept is not None else ()
        if gone:
            found.append(RecordChange(kind, name, "drop-members", id=record.id, user_ids=gone))
    return found


def record_events(changes: Iterable[RecordChange]) -> list[Event]:
    """The events that make the records say what ``changes`` say."""
    events: list[Event] = []
    for change in changes:
        if change.action == "move" and change.old_name is not None:
            events.append(RecordMoved(change.kind, change.old_name, change.name))
        elif change.action == "forget":
            events.append(Forgotten(change.kind, change.name))
        elif change.action == "drop-members" and change.kind != "user":
            events.append(MembersGone(change.kind, change.name, frozenset(change.user_ids)))
    return events
