"""Whose approval each change needs, and what no plan may do for a team's file.

The owners of a change are those of the files that declare what it changes: a workspace's
users are its team's to change when the team's file sets them, its settings the central
owners' when a central file sets them (``Ownership.origin``: which file sets which field of
an object declared across files). Making and deleting are the central owners' unless granted
(``create``, ``delete``): a workspace that only a team's file declares and the site lacks
would be created on the team's word alone, which a plan refuses and ``--force`` never
overrides (``creation_refusal``, held again as each action runs, like ``min_admins``).

``owners_of_workspace`` is the one answer to "who answers for this workspace": the access
report's column, and the reviewers ``review start`` assigns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from reconciler.core.changes import Change
from reconciler.core.records import RecordedGroup, RecordedUser, RecordedWorkspace, Records
from reconciler.identity import NameTable, same_name
from reconciler.model import DesiredGroup, DesiredSite, DesiredUser, DesiredWorkspace
from reconciler.ownership.model import CREATE, DELETE, Ownership, joined

Declared = DesiredWorkspace | DesiredGroup | DesiredUser


def _declared(desired: DesiredSite, kind: str, name: str) -> Declared | None:
    objects: Iterable[Declared]
    if kind == "workspace":
        objects = desired.workspaces
    elif kind == "group":
        objects = desired.groups
    else:
        objects = desired.users
    return next((o for o in objects if same_name(kind, _name(o), name)), None)


def _name(declared: Declared) -> str:
    return declared.username if isinstance(declared, DesiredUser) else declared.name


def _files(ownership: Ownership, kind: str, declared: Declared) -> tuple[str, ...]:
    return ownership.files_of(kind, _name(declared), declared.source.file)


def _owners_of_files(ownership: Ownership, files: Iterable[str]) -> tuple[str, ...]:
    """The owners of ``files``: their teams' first, the central owners last if one is central."""
    teams = [team for file in files if (team := ownership.team_of(file)) is not None]
    central = any(ownership.team_of(file) is None for file in files)
    return joined(*(team.owners for team in teams), ownership.central if central else ())


def owners_of_workspace(desired: DesiredSite, name: str) -> tuple[str, ...]:
    """Who answers for workspace ``name``: the owners of the files that declare it (its
    team's first), the central owners for one no file declares; () without ``ownership:``."""
    return _owners_of(desired, "workspace", name)


def _owners_of(desired: DesiredSite, kind: str, name: str) -> tuple[str, ...]:
    ownership = desired.ownership
    if ownership is None:
        return ()
    declared = _declared(desired, kind, name)
    if declared is None:
        return ownership.central
    return _owners_of_files(ownership, _files(ownership, kind, declared))


def _creator(ownership: Ownership, files: Sequence[str]) -> tuple[str, ...]:
    """Whose word creates an object these files declare: the central owners' if a central
    file declares it (that is their approval), else its team's when granted ``create``."""
    teams = [ownership.team_of(file) for file in files]
    if any(team is None for team in teams):
        return ownership.central
    granted = [team for team in teams if team is not None and team.may(CREATE)]
    return joined(*(team.owners for team in granted)) if granted else ownership.central


def change_owners(
    change: Change, desired: DesiredSite, recorded_source: str | None = None
) -> tuple[str, ...]:
    """Whose approval ``change`` needs. ``recorded_source`` is the file the records say
    declared an object that left the manifest (a deletion's)."""
    ownership = desired.ownership
    if ownership is None:
        return ()
    declared = _declared(desired, change.kind, change.name)
    if change.action == "delete" or declared is None:
        file = recorded_source or (declared.source.file if declared is not None else None)
        team = ownership.team_of(file) if file is not None else None
        return team.owners if team is not None and team.may(DELETE) else ownership.central
    files = _files(ownership, change.kind, declared)
    if change.action in ("create", "replace"):
        return joined(_creator(ownership, files), _owners_of_files(ownership, files))
    name, main = _name(declared), declared.source.file
    setters = [ownership.origin(change.kind, name, f.field) or main for f in change.fields]
    return _owners_of_files(ownership, setters or [main])


def with_owners(
    changes: Sequence[Change], desired: DesiredSite | None, records: Records
) -> tuple[Change, ...]:
    """``changes``, each naming whose approval it needs (unchanged without ``ownership:``);
    a deletion's by the file ``records`` say declared the object."""
    if desired is None or desired.ownership is None:
        return tuple(changes)
    tables: dict[str, Mapping[str, RecordedWorkspace | RecordedGroup | RecordedUser]] = {
        "workspace": records.workspaces,
        "group": records.groups,
        "user": records.users,
    }
    owned = []
    for change in changes:
        record = NameTable(change.kind, tables[change.kind]).get(change.name)
        source = record.source if record is not None else None
        owned.append(replace(change, owners=change_owners(change, desired, source)))
    return tuple(owned)


def creation_refusal(kind: str, name: str, desired: DesiredSite) -> str | None:
    """Why creating ``kind`` ``name`` is refused, or None: only a team's file declares it, and
    the team may not create. Never overridden by ``--force``."""
    ownership = desired.ownership
    declared = None if ownership is None else _declared(desired, kind, name)
    if ownership is None or declared is None:
        return None
    files = _files(ownership, kind, declared)
    teams = [ownership.team_of(file) for file in files]
    if any(team is None or team.may(CREATE) for team in teams):
        return None
    central = ", ".join(ownership.central)
    where = ", ".join(ownership.relative(file) for file in files)
    rules = ", ".join(
        f"ownership.teams[{ownership.teams.index(team)}].may_set" for team in teams if team
    )
    return (
        f'it creates {kind} "{name}", which the site does not have and only a team\'s file '
        f"declares ({where}): only {central} may create it ({rules} has no create), which "
        "--force never overrides"
    )


def creation_refusals(changes: Iterable[Change], desired: DesiredSite | None) -> list[str]:
    """A sentence for each workspace or group a plan would create on a team's word alone."""
    if desired is None or desired.ownership is None:
        return []
    return [
        refusal
        for change in changes
        if change.action in ("create", "replace") and change.kind in ("workspace", "group")
        if (refusal := creation_refusal(change.kind, change.name, desired)) is not None
    ]
