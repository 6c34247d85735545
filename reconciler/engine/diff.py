"""Compare the desired site with the live site and the tool's records: a pure function.

``compare`` says, object by object, what differs and on what basis: a fact *observed* on the
site (``workspace_info``, ``workspace_list``, ``users_location_access``) or *recorded* by the
tool (group members, ``root_access``, whether an override is switched on). Facts that are
neither are reported as unobservable rather than guessed. It knows nothing of HTTP, of
options such as ``--replace`` or of policy: turning differences into actions is ``planner``'s
job, turning them into a report is ``drift``'s.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, cast

from reconciler.api.spec import workspace_path
from reconciler.engine.state import RecordedGroup, RecordedWorkspace, SiteState
from reconciler.engine.users import Resolution
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredWorkspace,
    LiveGroup,
    LiveSite,
    LiveWorkspace,
    Overrides,
)

Basis = Literal["observed", "recorded"]


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """A setting that differs and cannot be changed in place (only by replacement)."""

    field: str  # "root_access", "permissions" or "notifications"
    live: bool | Overrides
    desired: bool | Overrides
    basis: Basis


@dataclass(frozen=True, slots=True)
class WorkspaceDiff:
    """One workspace: declared (``missing`` or ``present``) or managed and left (``extra``)."""

    name: str
    status: Literal["missing", "present", "extra"]
    desired: DesiredWorkspace | None
    live: LiveWorkspace | None
    record: RecordedWorkspace | None
    desired_users: frozenset[int] = frozenset()
    users_to_add: frozenset[int] = frozenset()
    users_to_remove: frozenset[int] = frozenset()
    members_basis: Basis = "observed"
    replacement: tuple[FieldDiff, ...] = ()
    unobservable: tuple[str, ...] = ()

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


@dataclass(frozen=True, slots=True)
class GroupDiff:
    """One user group: declared (``missing``/``present``/``uncertain``) or managed and left."""

    name: str
    status: Literal["missing", "present", "extra", "uncertain"]
    desired: DesiredGroup | None
    id: int | None
    record: RecordedGroup | None
    desired_members: frozenset[int] = frozenset()
    members_to_add: frozenset[int] = frozenset()
    members_to_remove: frozenset[int] = frozenset()
    members_known: bool = True  # False: the tool has no record of the group's members

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


@dataclass(frozen=True, slots=True)
class Unmanaged:
    """An object on the site that the manifest never managed: listed, never touched."""

    kind: Literal["workspace", "group"]
    name: str
    id: int


@dataclass(frozen=True, slots=True)
class Comparison:
    workspaces: tuple[WorkspaceDiff, ...]
    groups: tuple[GroupDiff, ...]
    unmanaged: tuple[Unmanaged, ...]
    conflicts: tuple[str, ...]  # declared objects the tool cannot act on, with the reason
    notes: tuple[str, ...]  # site-wide facts that could not be observed


def compare(
    desired: DesiredSite, live: LiveSite, state: SiteState, resolution: Resolution
) -> Comparison:
    """Everything that differs between ``desired`` and the site, object by object."""
    conflicts: list[str] = []
    workspaces = _compare_workspaces(desired, live, state, resolution, conflicts)
    groups = _compare_groups(desired, live, state, resolution, conflicts)
    declared_ws = {ws.name for ws in desired.workspaces} | {
        name for name, rec in state.workspaces.items() if rec.managed
    }
    declared_groups = {g.name for g in desired.groups} | {
        name for name, rec in state.groups.items() if rec.managed
    }
    unmanaged = [
        Unmanaged("workspace", ws.name, ws.id)
        for ws in live.workspaces
        if ws.name not in declared_ws
    ] + [Unmanaged("group", g.name, g.id) for g in live.groups if g.name not in declared_groups]
    return Comparison(
        workspaces=tuple(workspaces),
        groups=tuple(groups),
        unmanaged=tuple(sorted(unmanaged, key=lambda u: (u.kind, u.name.casefold(), u.id))),
        conflicts=tuple(conflicts),
        notes=live.notes,
    )


# --- workspaces ---------------------------------------------------------------------------


def _compare_workspaces(
    desired: DesiredSite,
    live: LiveSite,
    state: SiteState,
    resolution: Resolution,
    conflicts: list[str],
) -> list[WorkspaceDiff]:
    by_name: dict[str, list[LiveWorkspace]] = defaultdict(list)
    by_path: dict[str, LiveWorkspace] = {}
    for ws in live.workspaces:
        by_name[ws.name].append(ws)
        by_path.setdefault(ws.path, ws)
    diffs: list[WorkspaceDiff] = []
    for want in desired.workspaces:
        record = state.workspaces.get(want.name)
        users = resolution.ids_of(want.users)
        candidates = by_name.get(want.name, [])
        match = _pick(candidates, record, want.name, conflicts)
        if match is None:
            clash = by_path.get(workspace_path(want.name))
            if clash is not None and not candidates:
                conflicts.append(
                    f'Workspace "{want.name}" cannot be created: the site\'s workspace '
                    f'"{clash.name}" already has its path {clash.path}. Rename one of them.'
                )
            elif not candidates:
                diffs.append(WorkspaceDiff(want.name, "missing", want, None, None, users))
            continue
        if record is not None and record.id != match.id:
            record = None  # replaced by hand: what was recorded belongs to another workspace
        diffs.append(_present_workspace(want, match, record, users))
    for name, record in sorted(state.workspaces.items()):
        if not record.managed or any(ws.name == name for ws in desired.workspaces):
            continue
        match = next((ws for ws in by_name.get(name, []) if ws.id == record.id), None)
        if match is not None:
            diffs.append(WorkspaceDiff(name, "extra", None, match, record))
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
    users: frozenset[int],
) -> WorkspaceDiff:
    replacement: list[FieldDiff] = []
    unobservable: list[str] = []
    for field, wanted, observed in (
        ("permissions", want.permissions, _observed_permissions(live)),
        ("notifications", want.notifications, _observed_notifications(live, want, record)),
    ):
        if observed is not _UNKNOWN:
            if observed != wanted:
                replacement.append(FieldDiff(field, cast(Overrides, observed), wanted, "observed"))
            continue
        known = record is not None and record.settings_known
        recorded = getattr(record, field) if known else None
        if known and recorded != wanted:
            replacement.append(FieldDiff(field, recorded, wanted, "recorded"))
        elif not known:
            unobservable.append(f"{field} override: the site does not report it")
    if record is not None and record.settings_known:
        if record.root_access != want.root_access:
            replacement.append(
                FieldDiff("root_access", record.root_access, want.root_access, "recorded")
            )
    else:
        unobservable.append("root_access: the site does not report it")
    current = live.users if live.users is not None else (record.members if record else None)
    basis: Basis = "observed" if live.users is not None else "recorded"
    to_add = users - current if current is not None else users
    to_remove = current - users if current is not None else frozenset()
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
        tuple(replacement),
        tuple(unobservable),
    )


_UNKNOWN = object()


def _observed_permissions(live: LiveWorkspace) -> object:
    """The permission override as observed: ``None`` (off), a set of flags, or unknown.

    An override that is on has at least one flag on (an API rule), so no flags means off.
    """
    if not live.details_observed:
        return _UNKNOWN
    return live.permissions or None


def _observed_notifications(
    live: LiveWorkspace, want: DesiredWorkspace, record: RecordedWorkspace | None
) -> object:
    """The notification override as observed.

    Flags reported as on prove the override is on. None reported on cannot tell "override
    off" from "override on with both notifications off": when the manifest wants flags on,
    the site observably differs; otherwise the records decide where they know the settings,
    and a workspace the tool knows nothing of is taken to have no override.
    """
    if not live.details_observed:
        return _UNKNOWN
    if live.notifications:
        return live.notifications
    if want.notifications:
        return None
    if want.notifications is None and not (record is not None and record.settings_known):
        return None
    return _UNKNOWN


# --- groups -------------------------------------------------------------------------------


def _compare_groups(
    desired: DesiredSite,
    live: LiveSite,
    state: SiteState,
    resolution: Resolution,
    conflicts: list[str],
) -> list[GroupDiff]:
    live_by_name: dict[str, list[LiveGroup]] = defaultdict(list)
    for group in live.groups:
        live_by_name[group.name].append(group)
    live_ids = {group.id for group in live.groups}
    diffs: list[GroupDiff] = []
    for want in desired.groups:
        members = resolution.ids_of(want.members)
        record = state.groups.get(want.name)
        if record is not None and record.uncertain and record.id is None:
            diffs.append(GroupDiff(want.name, "uncertain", want, None, record, members))
            continue
        recorded_id = record.id if record is not None else None
        if recorded_id is not None:
            if live.groups_listed and recorded_id not in live_ids:
                record = None  # deleted by hand: create it again
            else:
                diffs.append(_present_group(want, recorded_id, record, members))
                continue
        found = live_by_name.get(want.name, [])
        if len(found) > 1:
            ids = ", ".join(str(g.id) for g in found)
            conflicts.append(
                f'The site has {len(found)} user groups named "{want.name}" (IDs {ids}); the '
                "tool cannot tell which one the manifest means. Remove the extra ones by hand."
            )
        elif found:
            diffs.append(_present_group(want, found[0].id, None, members))
        else:
            diffs.append(GroupDiff(want.name, "missing", want, None, None, members, members))
    declared = {g.name for g in desired.groups}
    for name, record in sorted(state.groups.items()):
        still_there = record.id is not None and (not live.groups_listed or record.id in live_ids)
        if record.managed and name not in declared and still_there:
            diffs.append(GroupDiff(name, "extra", None, record.id, record))
    return diffs


def _present_group(
    want: DesiredGroup, group_id: int, record: RecordedGroup | None, members: frozenset[int]
) -> GroupDiff:
    """Members cannot be read back: compare with what the tool recorded applying."""
    recorded = record.members if record is not None else frozenset()
    return GroupDiff(
        want.name,
        "present",
        want,
        group_id,
        record,
        members,
        members - recorded,
        recorded - members,
        members_known=record is not None,
    )
