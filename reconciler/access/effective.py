"""Effective access, from a read of the site, the tool's records and (perhaps) the manifest.

A pure function of its inputs. A person reaches a workspace as a member (``workspace_info``
lists them) or as an administrator (administrators reach every workspace). Their
permissions there are every permission for an administrator, else the workspace's
permission override when it has one, else their own; their notifications (members only) are
the workspace's notification override when it has one, else their own. A workspace setting
that decides access is what the tool recorded: the site does not report it. A fact nobody
reported stays ``None``.

An override that is on has at least one permission on (an API rule), so no permission
reported means none. No notification reported cannot tell "no override" from "an override
with both off": the records decide where they know, and otherwise there is taken to be none,
as the diff takes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import Access, Declared, Origin, Person, WorkspaceFacts
from reconciler.access.read import SiteRead
from reconciler.core.expiry import NO_EXPIRIES, Expiries, as_of, time_boxed
from reconciler.core.records import RecordedWorkspace, Records
from reconciler.core.users import UserDirectory, resolve_references
from reconciler.kinds import user as kinds_user
from reconciler.model import DesiredSite, LiveUser, LiveWorkspace
from reconciler.spec import PERMISSION_KEYS


@dataclass(frozen=True, slots=True)
class DeclaredAccess:
    """What the manifest declares about access on its day (``core/expiry.as_of``), by user
    ID (references resolved against the users read; a reference to nobody read cannot be
    anyone in the report); ``ends``: when its time-boxed grants end, ``ended``: the grants
    whose day has come."""

    access: frozenset[tuple[int, str]]  # (user ID, workspace key)
    administrators: frozenset[int]  # declared in users: with admin: true
    named: frozenset[int]  # every user the manifest names anywhere
    ends: Expiries = NO_EXPIRIES
    ended: Expiries = NO_EXPIRIES

    @classmethod
    def of(cls, manifest: DesiredSite, users: Iterable[LiveUser], day: date) -> DeclaredAccess:
        known = tuple(users)
        directory = UserDirectory.of(known)
        dated = as_of(manifest, day)
        desired = dated.site
        resolution = resolve_references(desired, directory)
        ended = Expiries.of(dated.expired, directory)
        access = {
            (user, workspace_key(ws.name))
            for ws in desired.workspaces
            for user in resolution.ids_of(ws.users)
            if isinstance(user, int)
        }
        by_name = {person_key(u.username): u.id for u in known}
        declared = {
            by_name[person_key(u.username)]: u
            for u in desired.users
            if person_key(u.username) in by_name
        }
        admins = frozenset(i for i, u in declared.items() if u.admin)
        named = frozenset(resolution.ids.values()) | frozenset(declared) | ended.people()
        ends = Expiries.of(time_boxed(desired), directory)
        return cls(frozenset(access), admins, named, ends, ended)


@dataclass(frozen=True, slots=True)
class Effective:
    """The report's three tables, sorted: workspaces by name, people and entries by person."""

    workspaces: tuple[WorkspaceFacts, ...]
    people: tuple[Person, ...]
    entries: tuple[Access, ...]


def effective_access(
    read: SiteRead, records: Records, declared: DeclaredAccess | None
) -> Effective:
    recorded = {rec.id: rec for rec in records.workspaces.values()}
    users = {user.id: user for user in read.users}
    admins = frozenset(user.id for user in read.users if user.admin)
    order: dict[int, tuple[str, int]] = {}  # each person's sort key, worked out once

    def person(user_id: int) -> LiveUser:
        return users.get(user_id) or LiveUser(user_id, f"#{user_id}", "", None)

    def rank(user_id: int) -> tuple[str, int]:
        if user_id not in order:
            order[user_id] = (person_key(person(user_id).username), user_id)
        return order[user_id]

    facts: list[WorkspaceFacts] = []
    entries: list[Access] = []
    for ws in sorted(read.workspaces, key=lambda w: (workspace_key(w.name), w.id)):
        fact = _facts(ws, recorded.get(ws.id))
        facts.append(fact)
        members = ws.users or frozenset()
        reach = members | admins
        if read.people is not None:
            reach &= read.people
        for user_id in sorted(reach, key=rank):
            entries.append(_entry(read, fact, person(user_id), user_id in members, declared))
    people = [_person(person(i), declared) for i in sorted(order, key=rank)]
    return Effective(tuple(facts), tuple(people), tuple(entries))


def _facts(ws: LiveWorkspace, record: RecordedWorkspace | None) -> WorkspaceFacts:
    return WorkspaceFacts.of(ws, record.settings if record is not None else None)


def _entry(
    read: SiteRead,
    ws: WorkspaceFacts,
    person: LiveUser,
    member: bool,
    declared: DeclaredAccess | None,
) -> Access:
    admin = bool(person.admin)
    own = read.own.get(person.id)
    everything: Flags = (PERMISSION_KEYS, "administrator")
    permissions, p_from = _effective(
        ws, ws.permissions, own.permissions if own else None, everything if admin else None
    )
    nothing: Flags = (None, "not a member")
    notifications, n_from = _effective(
        ws, ws.notifications, own.notifications if own else None, None if member else nothing
    )
    settings: dict[str, Any] = ws.access_settings()  # ACCESS_SETTINGS, each a bool or None
    entry = Access(
        workspace=ws.name,
        workspace_id=ws.id,
        person=person.username,
        user_id=person.id,
        email=person.email,
        active=person.active,
        member=member,
        administrator=admin,
        permissions=permissions,
        permissions_from=p_from,
        notifications=notifications,
        notifications_from=n_from,
        **settings,
        manifest=_declared(declared, person.id, ws.name, member, admin),
    )
    ends = _ends(declared, entry)
    return entry if ends is None else replace(entry, expires=ends)


Flags = tuple[frozenset[str] | None, Origin]


def _effective(
    ws: WorkspaceFacts,
    override: frozenset[str] | None,
    own: frozenset[str] | None,
    first: Flags | None,
) -> Flags:
    """The workspace's override when it has one, else the person's own settings (None: not
    read); ``first`` comes before both (an administrator has every permission, and someone
    who is not a member gets no notifications)."""
    if first is not None:
        return first
    if not ws.observed:
        return None, "unknown"
    if override is not None:
        return override, "workspace"
    return own, "user"


def _declared(
    declared: DeclaredAccess | None, user_id: int, workspace: str, member: bool, admin: bool
) -> Declared | None:
    if declared is None:
        return None
    if user_id not in declared.named:
        return "unmanaged user"
    if (member and (user_id, workspace_key(workspace)) in declared.access) or (
        admin and user_id in declared.administrators
    ):
        return "declared"
    if member and declared.ended.member("workspace", workspace, user_id) is not None:
        return "expired"
    return "not declared"


def _ends(declared: DeclaredAccess | None, entry: Access) -> date | None:
    """When the manifest's grant of ``entry`` ends (time-boxed) or ended (expired): a
    member's by its entry or account, an administrator's by the account."""
    if declared is None or entry.manifest not in ("declared", "expired"):
        return None
    of = declared.ended if entry.manifest == "expired" else declared.ends
    if entry.member and (day := of.member("workspace", entry.workspace, entry.user_id)):
        return day
    return of.account(entry.user_id) if entry.administrator else None


def _person(user: LiveUser, declared: DeclaredAccess | None) -> Person:
    name = kinds_user.display_name(user)
    return Person(
        user.id,
        user.username,
        user.email,
        name,
        user.admin,
        user.active,
        None if declared is None else user.id in declared.named,
    )
