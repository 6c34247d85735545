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

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from reconciler.engine.actions import UserKey
from reconciler.engine.diff_users import UserDiff as UserDiff  # read with the comparison
from reconciler.engine.diff_users import compare_users
from reconciler.engine.plan import Basis, Unmanaged
from reconciler.engine.records import (
    RecordedGroup,
    RecordedWorkspace,
    Records,
)
from reconciler.engine.users import Resolution
from reconciler.identity import (
    NameSet,
    NameTable,
    group_key,
    path_key,
    same_name,
    workspace_key,
)
from reconciler.kinds import workspace
from reconciler.kinds.change import FieldDiff as FieldDiff  # the generic change of a field
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredWorkspace,
    LiveGroup,
    LiveSite,
    LiveWorkspace,
)
from reconciler.spec import workspace_path


@dataclass(frozen=True, slots=True)
class WorkspaceDiff:
    """One workspace, declared or managed.

    ``missing``: declared, not on the site (``gone_id``: it was, under that recorded ID).
    ``present``: declared and on the site. ``extra``: managed, left the manifest, still there.
    ``renamed``: managed, and the site now calls it ``live.name``. ``vanished``: managed, left
    the manifest, and no longer on the site.
    """

    name: str
    status: Literal["missing", "present", "extra", "renamed", "vanished"]
    desired: DesiredWorkspace | None
    live: LiveWorkspace | None
    record: RecordedWorkspace | None
    desired_users: frozenset[UserKey] = frozenset()
    users_to_add: frozenset[UserKey] = frozenset()
    users_to_remove: frozenset[int] = frozenset()
    members_basis: Basis = "observed"
    replacement: tuple[FieldDiff, ...] = ()
    unobservable: tuple[str, ...] = ()
    gone_id: int | None = None

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


@dataclass(frozen=True, slots=True)
class GroupDiff:
    """One user group, declared or managed (statuses as for workspaces, plus ``uncertain``:
    a creation whose outcome could not be checked on a site that does not list groups)."""

    name: str
    status: Literal["missing", "present", "extra", "uncertain", "renamed", "vanished"]
    desired: DesiredGroup | None
    id: int | None
    record: RecordedGroup | None
    desired_members: frozenset[UserKey] = frozenset()
    members_to_add: frozenset[UserKey] = frozenset()
    members_to_remove: frozenset[int] = frozenset()
    members_known: bool = True  # False: the tool has no record of the group's members
    live_name: str | None = None  # renamed: what the site calls it now
    gone_id: int | None = None

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


@dataclass(frozen=True, slots=True)
class Comparison:
    workspaces: tuple[WorkspaceDiff, ...]
    groups: tuple[GroupDiff, ...]
    unmanaged: tuple[Unmanaged, ...]
    conflicts: tuple[str, ...]  # declared objects the tool cannot act on, with the reason
    notes: tuple[str, ...]  # site-wide facts that could not be observed
    users: tuple[UserDiff, ...] = ()


def compare(
    desired: DesiredSite, live: LiveSite, records: Records, resolution: Resolution
) -> Comparison:
    """Everything that differs between ``desired`` and the site, object by object."""
    conflicts: list[str] = []
    workspaces = _compare_workspaces(desired, live, records, resolution, conflicts)
    groups = _compare_groups(desired, live, records, resolution, conflicts)
    return Comparison(
        workspaces=tuple(workspaces),
        groups=tuple(groups),
        unmanaged=_unmanaged(desired, live, records),
        conflicts=tuple(conflicts),
        notes=live.notes,
        users=tuple(compare_users(desired, live, records)),
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


# --- workspaces ---------------------------------------------------------------------------


def _compare_workspaces(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    resolution: Resolution,
    conflicts: list[str],
) -> list[WorkspaceDiff]:
    by_name: dict[str, list[LiveWorkspace]] = defaultdict(list)
    by_path: dict[str, LiveWorkspace] = {}
    by_id = {ws.id: ws for ws in live.workspaces}
    for ws in live.workspaces:
        by_name[workspace_key(ws.name)].append(ws)
        by_path.setdefault(path_key(ws.path), ws)
    recorded = NameTable("workspace", records.workspaces)
    diffs: list[WorkspaceDiff] = []
    for want in desired.workspaces:
        record = recorded.get(want.name)
        users = resolution.ids_of(want.users)
        ours = by_id.get(record.id) if record is not None and record.managed else None
        if ours is not None and not same_name("workspace", ours.name, want.name):
            if ours.name in NameSet("workspace", want.previously):  # the API cannot rename
                diffs.append(_present_workspace(want, ours, record, users))
            else:
                diffs.append(WorkspaceDiff(want.name, "renamed", want, ours, record, users))
            continue
        candidates = by_name.get(workspace_key(want.name), [])
        match = _pick(candidates, record, want.name, conflicts)
        if match is None:
            clash = by_path.get(path_key(workspace_path(want.name)))
            if clash is not None and not candidates:
                conflicts.append(
                    f'Workspace "{want.name}" cannot be created: the site\'s workspace '
                    f'"{clash.name}" already has its path {clash.path}. Rename one of them.'
                )
            elif not candidates:
                gone = record.id if record is not None and record.id not in by_id else None
                diffs.append(
                    WorkspaceDiff(want.name, "missing", want, None, record, users, gone_id=gone)
                )
            continue
        if record is not None and record.id != match.id:
            record = None  # replaced by hand: what was recorded belongs to another workspace
        diffs.append(_present_workspace(want, match, record, users))
    declared = NameSet("workspace", (ws.name for ws in desired.workspaces))
    for name, record in sorted(records.managed_workspaces().items()):
        if name in declared:
            continue
        found = by_id.get(record.id)
        if found is None:
            diffs.append(WorkspaceDiff(name, "vanished", None, None, record, gone_id=record.id))
        else:
            same = same_name("workspace", found.name, name)
            status: Literal["extra", "renamed"] = "extra" if same else "renamed"
            diffs.append(WorkspaceDiff(name, status, None, found, record))
    return diffs


def _pick(
    candidates: list[LiveWorkspace],
    record: RecordedWorkspace | None,
    name: str,
    conflicts: list[str],
) -> LiveWorkspace | None:
    """The live workspace a declared name refers to; duplicates are resolved by the record."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    if record is not None:
        for ws in candidates:
            if ws.id == record.id:
                return ws
    ids = ", ".join(str(ws.id) for ws in candidates)
    conflicts.append(
        f'The site has {len(candidates)} workspaces named "{name}" (IDs {ids}); the tool '
        "cannot tell which one the manifest means. Rename or delete the extra ones by hand."
    )
    return None


def _present_workspace(
    want: DesiredWorkspace,
    live: LiveWorkspace,
    record: RecordedWorkspace | None,
    users: frozenset[UserKey],
) -> WorkspaceDiff:
    replacement, unobservable = workspace.compare(
        want.settings, live, record.settings if record is not None else None
    )
    current = live.users if live.users is not None else (record.members if record else None)
    basis: Basis = "observed" if live.users is not None else "recorded"
    to_add = users - current if current is not None else users
    to_remove = current - users if current is not None else frozenset()
    to_remove = frozenset(u for u in to_remove if isinstance(u, int))
    return WorkspaceDiff(
        want.name,
        "present",
        want,
        live,
        record,
        users,
        frozenset(to_add),
        frozenset(to_remove),
        basis,
        replacement,
        unobservable,
    )


# --- groups -------------------------------------------------------------------------------


def _compare_groups(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    resolution: Resolution,
    conflicts: list[str],
) -> list[GroupDiff]:
    live_by_name: dict[str, list[LiveGroup]] = defaultdict(list)
    for group in live.groups:
        live_by_name[group_key(group.name)].append(group)
    by_id = {group.id: group for group in live.groups}
    recorded = NameTable("group", records.groups)
    diffs: list[GroupDiff] = []
    for want in desired.groups:
        members = resolution.ids_of(want.members)
        record = recorded.get(want.name)
        if record is not None and record.uncertain and record.id is None:
            diffs.append(GroupDiff(want.name, "uncertain", want, None, record, members))
            continue
        gone_id = None
        recorded_id = record.id if record is not None else None
        if record is not None and recorded_id is not None:
            listed = by_id.get(recorded_id)
            renamed = listed is not None and not same_name("group", listed.name, want.name)
            if listed is not None and renamed and record.managed:
                if listed.name in NameSet("group", want.previously):  # the site keeps the old name
                    diffs.append(_present_group(want, recorded_id, record, members))
                else:
                    diffs.append(_renamed_group(want.name, want, record, listed, members))
                continue
            if live.groups_listed and listed is None:
                gone_id, record = recorded_id, None  # deleted by hand: create it again
            else:
                diffs.append(_present_group(want, recorded_id, record, members))
                continue
        found = live_by_name.get(group_key(want.name), [])
        if len(found) > 1:
            ids = ", ".join(str(g.id) for g in found)
            conflicts.append(
                f'The site has {len(found)} user groups named "{want.name}" (IDs {ids}); the '
                "tool cannot tell which one the manifest means. Remove the extra ones by hand."
            )
        elif found:
            diffs.append(_present_group(want, found[0].id, None, members))
        else:
            diffs.append(
                GroupDiff(want.name, "missing", want, None, None, members, members, gone_id=gone_id)
            )
    declared = NameSet("group", (g.name for g in desired.groups))
    for name, record in sorted(records.managed_groups().items()):
        if name in declared or record.id is None:
            continue
        listed = by_id.get(record.id)
        if listed is not None and not same_name("group", listed.name, name):
            diffs.append(_renamed_group(name, None, record, listed, frozenset()))
        elif live.groups_listed and listed is None:
            diffs.append(GroupDiff(name, "vanished", None, None, record, gone_id=record.id))
        else:
            diffs.append(GroupDiff(name, "extra", None, record.id, record))
    return diffs


def _renamed_group(
    name: str,
    want: DesiredGroup | None,
    record: RecordedGroup,
    listed: LiveGroup,
    members: frozenset[UserKey],
) -> GroupDiff:
    return GroupDiff(name, "renamed", want, listed.id, record, members, live_name=listed.name)


def _present_group(
    want: DesiredGroup, group_id: int, record: RecordedGroup | None, members: frozenset[UserKey]
) -> GroupDiff:
    """Members cannot be read back: compare with what the tool recorded applying.

    A member the tool added can always be removed; a declared member it never added is
    added (adding an existing member changes nothing). Whether that is drift is known only
    when the records hold every member (``members_known``: the tool created the group).
    """
    recorded = record.members if record is not None else frozenset()
    unsure = record.unsure if record is not None else frozenset()  # an interrupted change
    return GroupDiff(
        want.name,
        "present",
        want,
        group_id,
        record,
        members,
        (members - recorded) | (members & unsure),
        frozenset(u for u in (recorded | unsure) - members if isinstance(u, int)),
        members_known=record is not None and record.members_known,
    )
