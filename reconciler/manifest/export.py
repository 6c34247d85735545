"""Export: describe the live site as a manifest, so an existing site can be adopted.

``export_site`` builds the manifest as a model (``Export``), fact by fact: each value says
whether it was read on the site, taken from the tool's records, or could not be known (then a
``note`` says so, and ``render/manifest.py`` writes it as a YAML comment at that place). Names
that cannot round-trip through the API are reported and skipped, never silently changed; the
name rules are the manifest's own (``reconciler.manifest.names``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from reconciler.core.records import Records
from reconciler.identity import NameSet, NameTable, group_key, workspace_key
from reconciler.kinds import user as kinds_user
from reconciler.kinds import workspace
from reconciler.kinds.workspace import Overrides
from reconciler.manifest.names import (
    email_problem,
    group_name_problem,
    username_problem,
    workspace_name_problem,
)
from reconciler.model import LiveSite, LiveUser, LiveWorkspace

T = TypeVar("T")
UserName = str | int  # a username, or the numeric ID of a user without one


@dataclass(frozen=True, slots=True)
class Noted(Generic[T]):
    """A value of the exported manifest and, when it is not a fact the site reported, why."""

    value: T
    note: str | None = None


@dataclass(frozen=True, slots=True)
class ExportedWorkspace:
    """A workspace entry: the settings written before its users (by their manifest keys),
    its users, and its overrides (None: the overrides could not be read at all)."""

    name: str
    settings: Mapping[str, Noted[Any]]
    users: Noted[tuple[UserName, ...]]
    overrides: Mapping[str, Noted[Overrides]] | None


@dataclass(frozen=True, slots=True)
class ExportedGroup:
    name: str
    members: Noted[tuple[UserName, ...]]


@dataclass(frozen=True, slots=True)
class ExportedUser:
    """A ``users:`` entry: the username and the fields to write (``kinds.user.exported``)."""

    username: str
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Skipped:
    """An object that cannot be written as a manifest entry, and why."""

    kind: Literal["workspace", "group", "user"]
    name: str
    id: int
    problem: str


@dataclass
class Export:
    """The live site as a manifest model, and what could not be exported."""

    site: str
    workspaces: list[ExportedWorkspace] = field(default_factory=list)
    groups: list[ExportedGroup] = field(default_factory=list)
    users: list[ExportedUser] | None = None  # None: users were not asked for
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    groups_note: str | None = None


def export_site(live: LiveSite, records: Records, site: str, *, users: bool = False) -> Export:
    """The manifest of ``live``: workspaces, discoverable groups and, if asked, users."""
    result = Export(site)
    directory = {user.id: user for user in live.users}
    names = Counter(workspace_key(ws.name) for ws in live.workspaces)
    paths = Counter(ws.path for ws in live.workspaces)
    for ws in sorted(live.workspaces, key=lambda w: (w.name.casefold(), w.id)):
        problem = _workspace_problem(ws, names, paths)
        if problem is not None:
            result.skipped.append(Skipped("workspace", ws.name, ws.id, problem))
            result.problems.append(
                f'workspace "{ws.name}" (id {ws.id}) was not exported: {problem}'
            )
            continue
        result.workspaces.append(_workspace(ws, records, directory, result.problems))
    _groups(live, records, directory, result)
    if users:
        result.users = _users(live.users, result)
    return result


def _workspace_problem(ws: LiveWorkspace, names: Counter[str], paths: Counter[str]) -> str | None:
    problem = workspace_name_problem(ws.name)
    if problem is not None:
        return f"its name {problem}"
    if names[workspace_key(ws.name)] > 1:
        return "another workspace has the same name"
    if paths[ws.path] > 1:
        return f"another workspace has the same path {ws.path}"
    return None


def _user_names(
    ids: frozenset[int], directory: dict[int, LiveUser], problems: list[str], where: str
) -> tuple[UserName, ...]:
    """Usernames where there are; a user without one is written as its ID, and reported."""
    found: list[UserName] = []
    for user_id in sorted(ids, key=lambda i: (directory[i].username if i in directory else "", i)):
        user = directory.get(user_id)
        if user is not None and user.username:
            found.append(user.username)
        else:
            found.append(user_id)
            problems.append(f"user {user_id} in {where} has no username: written as its numeric ID")
    return tuple(found)


def _workspace(
    ws: LiveWorkspace, records: Records, directory: dict[int, LiveUser], problems: list[str]
) -> ExportedWorkspace:
    record = NameTable("workspace", records.workspaces).get(ws.name)
    record = record if record is not None and record.id == ws.id else None
    plain, overrides = workspace.exported(ws, record.settings if record is not None else None)
    settings = {name: Noted(value, note) for name, (value, note) in plain.items()}
    if ws.users is None:
        users: Noted[tuple[UserName, ...]] = Noted((), "could not be read")
    else:
        users = Noted(_user_names(ws.users, directory, problems, f'workspace "{ws.name}"'))
    if overrides is None:
        return ExportedWorkspace(ws.name, settings, users, None)
    shown = {name: Noted(value, note) for name, (value, note) in overrides.items()}
    return ExportedWorkspace(ws.name, settings, users, shown)


def _groups(
    live: LiveSite, records: Records, directory: dict[int, LiveUser], result: Export
) -> None:
    found: dict[str, int] = {}
    seen: Counter[str] = Counter(group_key(group.name) for group in live.groups)
    for group in live.groups:
        problem = group_name_problem(group.name)
        problem = f"its name {problem}" if problem else None
        if seen[group_key(group.name)] > 1:
            problem = "another group has the same name"
        if problem is not None:
            result.skipped.append(Skipped("group", group.name, group.id, problem))
            result.problems.append(
                f'user group "{group.name}" (id {group.id}) was not exported: {problem}'
            )
            continue
        found[group.name] = group.id
    listed = NameSet("group", found)
    for name, recorded in records.groups.items():
        if recorded.id is not None and name not in listed and not live.groups_listed:
            found[name] = recorded.id
    if not live.groups_listed and not found:
        result.groups_note = "this site does not list user groups"
    recorded_groups = NameTable("group", records.groups)
    for name in sorted(found, key=str.casefold):
        record = recorded_groups.get(name)
        if record is not None and record.id == found[name]:
            members = _user_names(record.members, directory, result.problems, f'group "{name}"')
            note = (
                "recorded by site-reconciler"
                if record.members_known
                else "those the tool added; the site cannot report the others"
            )
            result.groups.append(ExportedGroup(name, Noted(members, note)))
        else:
            note = "the site cannot report group members: list them here"
            result.groups.append(ExportedGroup(name, Noted((), note)))


def _users(users: tuple[LiveUser, ...], result: Export) -> list[ExportedUser]:
    exported = []
    for user in sorted(users, key=lambda u: (u.username.casefold(), u.id)):
        problem = username_problem(user.username)
        problem = f"its username {problem}" if problem else None
        if problem is None and (bad_email := email_problem(user.email)):
            problem = f"its e-mail address {bad_email}"
        if problem is not None:
            result.skipped.append(Skipped("user", user.username, user.id, problem))
            result.problems.append(
                f'user "{user.username}" (id {user.id}) was not exported: {problem}'
            )
            continue
        exported.append(ExportedUser(user.username, kinds_user.exported(user)))
    return exported
