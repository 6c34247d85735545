"""Read what an access report needs from the site, and never more than a plan would read.

By what the report covers:

* **the whole site**: exactly a full plan's read (``LiveReader.read`` of every workspace):
  ``workspace_list``, ``users_location_access /``, the ``user_list`` pages and one
  ``workspace_info`` per workspace. No ``user_info``: a person's own permissions (which
  apply where a workspace has no override) would cost one call per user -- more than the
  whole plan on a large site -- so the report says where they apply and that it did not read
  them; ``--user`` and ``--workspace`` do.
* ``--workspace``: ``workspace_list``; ``workspace_info`` of the chosen workspaces;
  ``users_location_access /`` (every user's e-mail and administrator flag, one call; where
  refused, the user list); ``user_list`` with ``active=0`` (the deactivated accounts); and
  ``user_info`` of the members whose own settings apply there.
* ``--user``: the site's search for each name; ``user_info`` of each person (their own
  settings and their workspaces); ``workspace_info`` of those workspaces (their overrides);
  ``workspace_list`` when one is an administrator (they reach every workspace); and
  ``users_location_access /`` for the site's usual e-mail domains.

Compared with an earlier report (``--since``, ``Earlier``), a narrowed read also covers the
accounts and workspaces its names and patterns meant then and mean no longer, under their
names now: with ``--user``, the ``user_info`` of each that ``users_location_access /`` still
lists (and ``user_list`` with ``active=0`` for their ``active``); with ``--workspace``, the
``workspace_info`` of each that ``workspace_list`` still lists. A name or pattern that meant
someone or something then may mean nothing now (a deleted account or workspace: every
access of theirs was lost).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from reconciler.access.model import ReportScope
from reconciler.api.answers import UserInfo, UserSummary
from reconciler.api.client import SiteClient
from reconciler.core.users import Ambiguity, UserDirectory
from reconciler.engine.read.live import REFUSALS, LiveReader, NoProgress, Progress
from reconciler.engine.read.targets import Selection
from reconciler.errors import ReconcilerError
from reconciler.model import LiveSite, LiveUser, LiveWorkspace, Source, UserRef, live_user
from reconciler.spec import workspace_path

T = TypeVar("T")


class NothingSelected(ReconcilerError):
    """A ``--user`` or ``--workspace`` that names nothing, or more than one user."""


@dataclass(frozen=True, slots=True)
class Earlier:
    """What the scope's names meant in an earlier report (``since.earlier_scope``), so that a
    report compared with it covers the same accounts and workspaces: the IDs its ``--user``
    names and ``--workspace`` patterns matched then, and those names and patterns, which
    need match nothing on the site now."""

    user_ids: frozenset[int] = frozenset()
    workspace_ids: frozenset[int] = frozenset()
    names: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class OwnSettings:
    """A person's own permissions and notifications (``user_info``): what applies in a
    workspace without an override."""

    permissions: frozenset[str]
    notifications: frozenset[str]


@dataclass(frozen=True, slots=True)
class SiteRead:
    """What the report read: the people it may name and the workspaces it covers.

    ``people`` narrows the report to some users (``--user``); in a ``--user`` read a
    workspace's ``users`` may hold only those. ``emails`` are every site user's, for the
    site's usual e-mail domains.
    """

    users: tuple[LiveUser, ...]
    workspaces: tuple[LiveWorkspace, ...]
    own: Mapping[int, OwnSettings] = field(default_factory=dict)
    people: frozenset[int] | None = None
    emails: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


async def read_site(
    client: SiteClient,
    scope: ReportScope,
    progress: Progress | None = None,
    earlier: Earlier | None = None,
    whole_site_reader: LiveReader | None = None,
) -> SiteRead:
    """The read for ``scope`` (see the module doc), and what it meant ``earlier``;
    ``whole_site_reader``: the reader of a whole site's read, whose lists may already be on
    their way (``LiveReader.head_start``)."""
    reader = _Reader(client, progress or NoProgress(), earlier or Earlier())
    if scope.workspaces:
        return await reader.workspaces(scope.workspaces, scope.users)
    if scope.users:
        return await reader.people(scope.users)
    live = await (whole_site_reader or LiveReader(client, progress)).read(None)
    return SiteRead(live.users, live.workspaces, emails=_emails(live.users), notes=live.notes)


@dataclass(frozen=True, slots=True)
class _Reader:
    client: SiteClient
    progress: Progress
    earlier: Earlier

    async def _counted(self, call: Awaitable[T]) -> T:
        self.progress.expect(1)
        result = await call
        self.progress.advance()
        return result

    async def workspaces(self, patterns: Collection[str], names: Collection[str]) -> SiteRead:
        """``--workspace`` (and perhaps ``--user``): the chosen workspaces, their members."""
        entries = await self._counted(self.client.workspace_list())
        selection = Selection(tuple(f"workspace:{p}" for p in patterns))
        then = self.earlier.workspace_ids
        chosen = [e for e in entries if selection.holds("workspace", e.name) or e.id in then]
        base = LiveSite((), tuple(LiveWorkspace(e.id, e.name, e.path) for e in chosen), (), False)
        names_now = [ws.name for ws in base.workspaces]
        unknown_then = [p for p in patterns if p not in self.earlier.patterns]
        _check_matches(unknown_then, names_now, "workspace")
        reader = LiveReader(self.client, self.progress)
        live, (everyone, active_known) = await asyncio.gather(
            reader.with_details(base, {ws.name for ws in base.workspaces}), self._everyone()
        )
        people = self._resolve(names, everyone) | self.earlier.user_ids if names else None
        admins = {u.id for u in everyone if u.admin}
        wanted = sorted(
            {
                member
                for ws in live.workspaces
                for member in ws.users or ()
                if (people is None or member in people) and _needs_own(ws, member in admins)
            }
        )
        infos, users = await asyncio.gather(
            self._infos(wanted),
            self._active(everyone) if not active_known else _same(everyone),
        )
        notes = [
            f'This site refuses workspace_info: the members of "{ws.name}" could not be read.'
            for ws in live.workspaces
            if not ws.details_observed
        ]
        return SiteRead(
            users,
            live.workspaces,
            _own(infos),
            frozenset(people) if people is not None else None,
            _emails(everyone),
            tuple(notes),
        )

    async def people(self, names: Collection[str]) -> SiteRead:
        """``--user`` alone: each person's own settings and workspaces, and their overrides."""
        reader = LiveReader(self.client, self.progress)
        found = await reader.look_up(names)
        chosen = self._resolve(names, found)
        (everyone, _), infos = await asyncio.gather(self._everyone(), self._infos(chosen))
        renamed = await self._renamed(everyone, chosen)
        by_id = {user.id: user for user in found}
        users = tuple(replace(by_id[i], admin=infos[i].admin) for i in sorted(chosen))
        users += await self._still_here(renamed)
        infos |= renamed
        ids = sorted(infos)
        if any(info.admin for info in infos.values()):
            entries = await self._counted(self.client.workspace_list())
            workspaces = tuple(LiveWorkspace(e.id, e.name, e.path) for e in entries)
        else:
            refs = {ref.id: ref.name for info in infos.values() for ref in info.workspaces}
            workspaces = tuple(
                LiveWorkspace(i, name, workspace_path(name)) for i, name in sorted(refs.items())
            )
        member_of = {i: {ref.id for ref in info.workspaces} for i, info in infos.items()}
        names_read = {ref.name for info in infos.values() for ref in info.workspaces}
        live = await reader.with_details(LiveSite((), workspaces, (), False), names_read)
        return SiteRead(
            users,
            tuple(_members_from_user_info(ws, member_of) for ws in live.workspaces),
            _own(infos),
            frozenset(ids),
            _emails(everyone),
        )

    async def _everyone(self) -> tuple[tuple[LiveUser, ...], bool]:
        """Every site user with e-mail and administrator flag: ``users_location_access /``
        (one call); where the site refuses it, the user list (which also says who is active:
        the second value)."""
        try:
            entries = await self._counted(self.client.users_location_access("/"))
        except REFUSALS:
            summaries = await self._counted(self.client.user_list())
            return tuple(live_user(s) for s in summaries), True
        users = (LiveUser(e.id, e.name, e.email or "", e.admin) for e in entries if not e.is_group)
        return tuple(users), False

    async def _active(self, users: tuple[LiveUser, ...]) -> tuple[LiveUser, ...]:
        answer = await self._counted(self.client.deactivated_users())
        return with_active(users, answer)

    async def _infos(self, ids: Iterable[int]) -> dict[int, UserInfo]:
        wanted = sorted(ids)
        self.progress.expect(len(wanted))
        infos = await asyncio.gather(*(self.client.user_info(i) for i in wanted))
        self.progress.advance(len(wanted))
        return {info.id: info for info in infos}

    async def _renamed(
        self, everyone: Iterable[LiveUser], chosen: frozenset[int]
    ) -> dict[int, UserInfo]:
        """The accounts an earlier report's names meant and mean no longer that are still on
        the site (``everyone``): renamed. The others were deleted, and are not asked for: a
        site may answer an unknown ID with a failure that does not say so."""
        here = {user.id for user in everyone}
        return await self._infos((self.earlier.user_ids - chosen) & here)

    async def _still_here(self, infos: Mapping[int, UserInfo]) -> tuple[LiveUser, ...]:
        """The renamed accounts as users, with ``active`` (which ``user_info`` does not say)."""
        if not infos:
            return ()
        return await self._active(tuple(live_user(infos[i].summary()) for i in sorted(infos)))

    def _resolve(self, names: Collection[str], users: Iterable[LiveUser]) -> frozenset[int]:
        return _resolve(names, users, gone=self.earlier.names)


async def _same(users: tuple[LiveUser, ...]) -> tuple[LiveUser, ...]:
    return users


def with_active(users: Iterable[LiveUser], answer: Iterable[UserSummary]) -> tuple[LiveUser, ...]:
    """``users`` with ``active`` from the answer to ``user_list active=0``: the inactive ones
    it names are inactive; the others are active when the answer reports the flag for every
    entry (an empty answer: nobody is deactivated), else not known."""
    listed = list(answer)
    inactive = {u.id for u in listed if u.active is False}
    told = all(u.active is not None for u in listed)
    return tuple(
        replace(u, active=False if u.id in inactive else (True if told else None)) for u in users
    )


def _needs_own(ws: LiveWorkspace, admin: bool) -> bool:
    """Whether a member's own settings apply in ``ws``: no permission override (and not an
    administrator, who has every permission), or no notification override seen."""
    return (not ws.permissions and not admin) or not ws.notifications


def _own(infos: Mapping[int, UserInfo]) -> dict[int, OwnSettings]:
    return {i: OwnSettings(info.permissions, info.notifications) for i, info in infos.items()}


def _members_from_user_info(ws: LiveWorkspace, member_of: Mapping[int, set[int]]) -> LiveWorkspace:
    """Where ``workspace_info`` did not answer, the members ``user_info`` named."""
    if ws.details_observed:
        return ws
    return replace(ws, users=frozenset(i for i, wss in member_of.items() if ws.id in wss))


def _emails(users: Iterable[LiveUser]) -> tuple[str, ...]:
    return tuple(u.email for u in users if u.email)


def _check_matches(patterns: Collection[str], names: list[str], kind: str) -> None:
    for pattern in patterns:
        if not any(Selection((f"{kind}:{pattern}",)).holds(kind, name) for name in names):
            raise NothingSelected(
                f'--{kind} "{pattern}" names no {kind} on the site.',
                hint="Give a workspace's name (case and width aside), or a glob.",
            )


def _resolve(
    names: Collection[str], users: Iterable[LiveUser], gone: Collection[str] = ()
) -> frozenset[int]:
    """The user each ``--user`` NAME means (username, e-mail or ID, as the manifest names
    users); a name that means nobody or several people is an error, except that one of
    ``gone`` (an earlier report's, ``Earlier.names``) may mean nobody now."""
    directory = UserDirectory.of(users)
    chosen: set[int] = set()
    for name in names:
        ref = UserRef(name, Source("--user"))
        found = directory.candidates(ref)
        if not found and name in gone:
            continue
        if not found:
            raise NothingSelected(
                f'--user "{name}" names no user on the site.',
                hint="Give one user's username, e-mail address or numeric ID.",
            )
        if len(found) > 1:
            ambiguity = Ambiguity(ref, tuple(found))
            raise NothingSelected(
                f'--user "{name}" names {len(found)} users on the site: '
                + "; ".join(ambiguity.meanings())
                + ".",
                hint=ambiguity.remedy()[0].upper() + ambiguity.remedy()[1:] + ".",
            )
        chosen.add(found[0].id)
    return frozenset(chosen)
