"""Compare the desired site with the live site and the tool's records: a pure function.

``compare`` says, object by object, what differs and on what basis: a fact *observed* on the
site (``workspace_info``, ``workspace_list``, ``users_location_access``) or *recorded* by the
tool (group members, a workspace setting the site does not report, whether an override is
switched on). Facts that are
neither are reported as unobservable rather than guessed. It knows nothing of HTTP, of
options such as ``--replace`` or of policy: turning differences into actions is ``planner``'s
job, turning them into a report is ``drift``'s.

Names are compared as the site compares them (``reconciler.identity``): ``legal`` in the
manifest is the site's ``Legal`` and the record of ``LEGAL``. Objects are matched to records
by ID wherever the site reports one: a managed object whose observed name differs from the
recorded one was *renamed on the site* and is never deleted
or replaced; a managed object the site no longer has stays recorded and is reported *missing
on the site* (records are dropped only when the tool deleted the object or a person ran
``state forget``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.core.changes import ObjectKind
from reconciler.core.kind import Diff
from reconciler.core.records import Records
from reconciler.core.users import Resolution
from reconciler.engine.planning.plan import Unmanaged
from reconciler.identity import NameSet
from reconciler.kinds import registry
from reconciler.model import DesiredSite, LiveSite


@dataclass(frozen=True, slots=True)
class Comparison:
    """Every kind's differences (``core/kind.py``: ``Diff``), by kind, in the registry's order;
    what the site has that nothing manages; what the tool cannot act on."""

    diffs: Mapping[ObjectKind, tuple[Diff, ...]]
    unmanaged: tuple[Unmanaged, ...]
    conflicts: tuple[str, ...]  # declared objects the tool cannot act on, with the reason
    notes: tuple[str, ...]  # site-wide facts that could not be observed

    def of(self, kind: ObjectKind) -> tuple[Any, ...]:
        """The differences of one kind (its own type: only the kind reads the rest)."""
        return self.diffs.get(kind, ())

    def all(self) -> tuple[Diff, ...]:
        return tuple(diff for diffs in self.diffs.values() for diff in diffs)


def compare(
    desired: DesiredSite, live: LiveSite, records: Records, resolution: Resolution
) -> Comparison:
    """Everything that differs between ``desired`` and the site, object by object: each
    kind's comparison (``kinds/<kind>/diff.py``), in the registry's order."""
    conflicts: list[str] = []
    diffs = {
        kind.name: tuple(kind.compare(desired, live, records, resolution, conflicts))
        for kind in registry.KINDS
    }
    return Comparison(
        diffs=diffs,
        unmanaged=_unmanaged(desired, live, records),
        conflicts=tuple(conflicts),
        notes=live.notes,
    )


def _unmanaged(desired: DesiredSite, live: LiveSite, records: Records) -> tuple[Unmanaged, ...]:
    """Live objects neither declared nor recorded as managed (by name or, renamed, by ID)."""
    declared_ws = NameSet(
        "workspace", [*(ws.name for ws in desired.workspaces), *records.managed_workspaces()]
    )
    managed_ws_ids = {rec.id for rec in records.managed_workspaces().values()}
    declared_groups = NameSet(
        "group", [*(g.name for g in desired.groups), *records.managed_groups()]
    )
    managed_group_ids = {rec.id for rec in records.managed_groups().values()}
    found = [
        Unmanaged("workspace", ws.name, ws.id)
        for ws in live.workspaces
        if ws.name not in declared_ws and ws.id not in managed_ws_ids
    ] + [
        Unmanaged("group", g.name, g.id)
        for g in live.groups
        if g.name not in declared_groups and g.id not in managed_group_ids
    ]
    return tuple(sorted(found, key=lambda u: (u.kind, u.name.casefold(), u.id)))


__all__ = ["Comparison", "compare"]
