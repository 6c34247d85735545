"""Compare the declared workspaces with the site's and the records: part of
``engine.planning.diff.compare``.

A declared workspace is ``missing`` (``gone_id``: it was on the site, under that recorded ID)
or ``present``, with the users who join and leave and the settings that differ
(``kinds.workspace.diff``: each needs a replacement); a managed workspace is ``extra`` once
it left the manifest, ``vanished`` once gone from the site, or ``renamed`` when the site calls
its recorded ID something else -- reported, never deleted nor replaced. A name the site has
twice is a conflict the tool does not guess at; so is a name whose path another workspace has.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from reconciler.core.actions import UserKey
from reconciler.core.records import RecordedWorkspace, Records
from reconciler.core.users import Resolution
from reconciler.identity import NameSet, NameTable, path_key, same_name, workspace_key
from reconciler.kinds import workspace
from reconciler.kinds.change import Basis, FieldChange
from reconciler.model import DesiredSite, DesiredWorkspace, LiveSite, LiveWorkspace
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
    replacement: tuple[FieldChange, ...] = ()
    in_place: tuple[FieldChange, ...] = ()  # settings that differ and need no replacement
    unobservable: tuple[str, ...] = ()
    gone_id: int | None = None

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


def compare_workspaces(
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
    replacement, in_place, unobservable = workspace.compare(
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
        in_place,
        unobservable,
    )
