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
from dataclasses import dataclass
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
        access: set[tuple[int, str]] = set()
        for ws in desired.workspaces:
            key = workspace_key(ws.name)
            access.update(
                (user, key) for user in resolution.ids_of(ws.users) if isinstance(user, int)
            )
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
    """Every access, each worked out from what its workspace and its person hold; what all
    accesses to one workspace share (``_Place``) and each person's place in the order are
    worked out once, not once an access: a large site has tens of thousands of them."""
    recorded = {rec.id: rec for rec in records.workspaces.values()}
    users = {user.id: user for user in read.users}
    admins = frozenset(user.id for user in read.users if user.admin)

    def person(user_id: int) -> LiveUser:
        return users.get(user_id) or LiveUser(user_id, f"#{user_id}", "", None)

    places: list[tuple[_Place, frozenset[int], frozenset[int]]] = []
    for ws in sorted(read.workspaces, key=lambda w: (workspace_key(w.name), w.id)):
        members = ws.users or frozenset()
        reach = members | admins
        if read.people is not None:
            reach &= read.people
        places.append((_Place.of(ws, recorded.get(ws.id), read, declared), members, reach))
    who = {user_id: person(user_id) for user_id in set[int]().union(*(r for _, _, r in places))}
    ranked = sorted(who, key=lambda i: (person_key(who[i].username), i))
    position = {user_id: n for n, user_id in enumerate(ranked)}.__getitem__
    entries = [
        place.access(who[user_id], user_id in members)
        for place, members, reach in places
        for user_id in sorted(reach, key=position)
    ]
    people = [_person(who[i], declared) for i in ranked]
    facts = tuple(place.facts for place, _, _ in places)
    return Effective(facts, tuple(people), tuple(entries))


@dataclass(frozen=True, slots=True)
class _Place:
    """A workspace as each access to it sees it: its facts, its settings that decide access,
    its key in the manifest's declarations."""

    facts: WorkspaceFacts
    settings: dict[str, Any]  # ACCESS_SETTINGS, each a bool or None
    key: str  # workspace_key of its name
    read: SiteRead
    declared: DeclaredAccess | None

    @classmethod
    def of(
        cls,
        ws: LiveWorkspace,
        record: RecordedWorkspace | None,
        read: SiteRead,
        declared: DeclaredAccess | None,
    ) -> _Place:
        facts = WorkspaceFacts.of(ws, record.settings if record is not None else None)
        return cls(facts, facts.access_settings(), workspace_key(ws.name), read, declared)

    def access(self, person: LiveUser, member: bool) -> Access:
        """``person``'s access here, a member or (``member`` false) an administrator."""
        ws, declared = self.facts, self.declared
        admin = bool(person.admin)
        own = self.read.own.get(person.id)
        permissions, p_from = _effective(
            ws, ws.permissions, own.permissions if own else None, _EVERYTHING if admin else None
        )
        notifications, n_from = _effective(
            ws, ws.notifications, own.notifications if own else None, None if member else _NOTHING
        )
        manifest = _declared(declared, person.id, self.key, ws.name, member, admin)
        return Access(
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
            **self.settings,
            manifest=manifest,
            expires=_ends(declared, manifest, ws.name, person.id, member, admin),
        )


Flags = tuple[frozenset[str] | None, Origin]
_EVERYTHING: Flags = (PERMISSION_KEYS, "administrator")
_NOTHING: Flags = (None, "not a member")


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
    declared: DeclaredAccess | None,
    user_id: int,
    key: str,
    workspace: str,
    member: bool,
    admin: bool,
) -> Declared | None:
    """Whether the manifest declares the access of ``user_id`` to ``workspace`` (``key``: its
    ``workspace_key``)."""
    if declared is None:
        return None
    if user_id not in declared.named:
        return "unmanaged user"
    if (member and (user_id, key) in declared.access) or (
        admin and user_id in declared.administrators
    ):
        return "declared"
    if member and declared.ended.member("workspace", workspace, user_id) is not None:
        return "expired"
    return "not declared"


def _ends(
    declared: DeclaredAccess | None,
    manifest: Declared | None,
    workspace: str,
    user_id: int,
    member: bool,
    admin: bool,
) -> date | None:
    """When the manifest's grant of an access (``manifest``: how it declares it) ends
    (time-boxed) or ended (expired): a member's by its entry or account, an administrator's
    by the account."""
    if declared is None or manifest not in ("declared", "expired"):
        return None
    of = declared.ended if manifest == "expired" else declared.ends
    if member and (day := of.member("workspace", workspace, user_id)):
        return day
    return of.account(user_id) if admin else None


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
