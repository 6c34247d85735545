"""Read the live site through the client, with as few calls and round trips as the API allows.

Read calls: one ``workspace_list``, one ``users_location_access`` at ``/`` (groups, and the
number of users, which lets ``user_list`` fetch its pages at once), the ``user_list`` pages,
and one ``workspace_info`` per workspace whose details matter (declared and on the site).
Each call goes out as soon as what it needs has arrived -- the details after the workspace
list, the pages after the user count -- through the client's shared concurrency limit, so the
wall time approaches ``calls x latency / concurrency``.

Where a site refuses ``workspace_info``, membership falls back to ``user_info`` of the users
the manifest and the records name, and the result says overrides could not be observed.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from reconciler.api.answers import LocationEntry, UserSummary, WorkspaceEntry, WorkspaceInfo
from reconciler.api.client import SiteClient
from reconciler.api.errors import InvalidRequest, NotFound, PermissionDenied, ServerError
from reconciler.engine.read.answered import live_workspaces, with_named_users
from reconciler.identity import NameSet
from reconciler.model import LiveGroup, LiveSite, LiveUser, LiveWorkspace, live_user
from reconciler.spec import USER_LIST_PAGE_SIZE

T = TypeVar("T")

REFUSALS = (PermissionDenied, InvalidRequest, NotFound)
"""Answers that mean "this site will not tell", as opposed to a failure worth reporting."""


class Progress(Protocol):
    """Told how many read calls are expected and how many are done (a progress bar)."""

    def expect(self, calls: int) -> None: ...

    def advance(self, calls: int = 1) -> None: ...


class NoProgress:
    def expect(self, calls: int) -> None:
        pass

    def advance(self, calls: int = 1) -> None:
        pass


class LiveReader:
    """Reads one site; ``detail_names`` are the workspaces whose members and overrides matter."""

    def __init__(self, client: SiteClient, progress: Progress | None = None) -> None:
        self.client = client
        self.progress = progress or NoProgress()
        self._listed: asyncio.Future[list[UserSummary]] | None = None
        self._head: dict[str, asyncio.Future[Any]] = {}  # the lists sent ahead (head_start)

    def head_start(self) -> None:
        """Send the whole site's two lists now, before ``read`` is asked for: they need
        nothing from the manifest or the records, and ``users_location_access`` is the
        slowest answer of a large site (some 0.1 s), so the caller reads its records while
        they travel (``ledger.read_meanwhile``). ``read`` takes them as its own first calls;
        a caller that does not read drops them (``drop_head_start``)."""
        self._head = {
            "workspace_list": asyncio.ensure_future(self.client.workspace_list()),
            "users_location_access": asyncio.ensure_future(self.client.users_location_access("/")),
        }

    async def drop_head_start(self) -> None:
        """Forget the lists sent ahead and not read (their answers or errors retrieved): a
        read after a wait for writes to land must not see the site as it was before."""
        head, self._head = list(self._head.values()), {}
        await _dropped(head)

    def _ahead(self, method: str, call: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """The call sent ahead for ``method``, once; else ``call()`` made now."""
        sent: Awaitable[T] | None = self._head.pop(method, None)
        return sent if sent is not None else call()

    async def _counted(self, call: Awaitable[T], calls: int = 1) -> T:
        result = await call
        self.progress.advance(calls)
        return result

    async def read(
        self,
        detail_names: Iterable[str] | None,
        fallback_users: Callable[[tuple[LiveUser, ...]], Iterable[int]] = lambda users: (),
        *,
        who_am_i: bool = False,
        memberships_of: Collection[int] = (),
    ) -> LiveSite:
        """The live site.

        ``detail_names`` are the workspaces whose details are read (None: every one).
        ``fallback_users`` picks, from the site's users, those whose workspaces are read with
        ``user_info`` when the site refuses ``workspace_info``. ``who_am_i`` also reads which
        user the API key belongs to (the guard that never deletes the caller needs it).
        ``memberships_of``: users whose every workspace is read (``user_info``), the users a
        plan may delete (``LiveSite.memberships``).
        """
        self.progress.expect(2 + who_am_i)
        wanted = None if detail_names is None else NameSet("workspace", detail_names)
        (
            (entries, details),
            (locations, notes, summaries, memberships),
            caller,
        ) = await asyncio.gather(
            self._read_workspaces(wanted),
            self._read_users_and_groups(memberships_of),
            self._read_caller() if who_am_i else _nothing(),
        )
        users = tuple(live_user(s) for s in summaries)
        if details is None:
            notes.append(
                "This site refuses workspace_info: workspace members were read with user_info "
                "for the users the manifest and the records name, and permission and "
                "notification overrides could not be observed."
            )
            workspaces = await self._fallback_members(entries, fallback_users(users))
        else:
            workspaces = live_workspaces(entries, details)
        groups = tuple(LiveGroup(loc.id, loc.name) for loc in locations if loc.is_group)
        # A site that omits groups at / cannot be told apart from one with no groups, so an
        # answer without any group is not trusted to prove that a recorded group is gone.
        return LiveSite(
            users,
            workspaces,
            groups,
            bool(groups),
            notes=tuple(notes),
            caller_id=caller,
            users_complete=True,  # user_list read to its last page
            memberships=memberships,
        )

    async def read_scoped(
        self,
        detail_names: Collection[str],
        known_users: tuple[LiveUser, ...],
        *,
        locations: bool = False,
        all_users: bool = False,
        who_am_i: bool = False,
        memberships_of: Collection[int] = (),
    ) -> LiveSite:
        """The part of the site a change-scoped plan needs (``engine/read/scope.py``).

        ``workspace_list`` always (every workspace's existence, ID and name), the details of
        ``detail_names`` only, ``users_location_access /`` only with ``locations``; the users
        are ``known_users`` (resolved before), every user with ``all_users``, and the users
        those reads named (``with_named_users``); ``memberships_of`` as for ``read``.
        """
        self.progress.expect(1 + locations + who_am_i)
        entries, (found, notes), caller = await asyncio.gather(
            self._counted(self.client.workspace_list()),
            self._read_locations() if locations else _no_locations(),
            self._read_caller() if who_am_i else _nothing(),
        )
        wanted = NameSet("workspace", detail_names)
        details_for = [e for e in entries if e.name in wanted]
        self.progress.expect(len(details_for) + all_users)
        details, users = await asyncio.gather(
            self._read_details(details_for),
            self._counted(self.client.user_list()) if all_users else _no_users(),
        )
        searched = known_users + tuple(live_user(s) for s in users)
        live_users = with_named_users(searched, found, (details or {}).values())
        memberships = await self._read_memberships(memberships_of, {u.id for u in searched})
        if details is None:
            notes.append(
                "This site refuses workspace_info: workspace members were read with user_info "
                "and overrides could not be observed."
            )
            members = {u.id for u in live_users}
            read = await self._fallback_members(details_for, members)
            by_id = {ws.id: ws for ws in read}
            workspaces = tuple(
                by_id.get(e.id) or LiveWorkspace(e.id, e.name, e.path) for e in entries
            )
        else:
            workspaces = live_workspaces(entries, details)
        groups = tuple(LiveGroup(loc.id, loc.name) for loc in found if loc.is_group)
        return LiveSite(
            live_users,
            workspaces,
            groups,
            bool(groups),
            notes=tuple(notes),
            caller_id=caller,
            memberships=memberships,
        )

    async def _search(self, texts: Collection[str]) -> list[UserSummary]:
        """The users each text may name: the site's search, or ``user_info`` for an ID."""
        results = await asyncio.gather(*(self._counted(self._look_up(t)) for t in sorted(texts)))
        return [user for result in results for user in result]

    async def with_details(self, live: LiveSite, names: Collection[str]) -> LiveSite:
        """``live`` with the details of the workspaces ``names`` the site has (a scoped plan
        widened to them): their members are then compared as a full plan compares them."""
        wanted = NameSet("workspace", names)
        entries = [
            WorkspaceEntry(ws.id, ws.name, ws.path)
            for ws in live.workspaces
            if ws.name in wanted and not ws.details_observed
        ]
        self.progress.expect(len(entries))
        details = await self._read_details(entries)
        if not details:
            return live
        read = {ws.id: ws for ws in live_workspaces(entries, details)}
        return replace(
            live,
            users=with_named_users(live.users, (), details.values()),
            workspaces=tuple(read.get(ws.id, ws) for ws in live.workspaces),
        )

    async def look_up(self, texts: Collection[str]) -> tuple[LiveUser, ...]:
        """Every user each of ``texts`` may name, read fresh from the site."""
        self.progress.expect(len(texts))
        return tuple(live_user(s) for s in await self._search(texts))

    async def every_user(self) -> tuple[LiveUser, ...]:
        """Every user of the site, from the whole user list (cheaper than many look-ups)."""
        self.progress.expect(1)
        return tuple(live_user(s) for s in await self._counted(self.client.user_list()))

    async def _look_up(self, text: str) -> list[UserSummary]:
        """Every user ``text`` may name: for digits, the user of that ID *and* whoever has
        it as a username (the ambiguity check needs both). A site that answers ``user_info`` of
        an ID nobody has with a failure, not a 404 (the published one), is asked its user list
        instead: whether the ID is someone's is never guessed."""
        found = await self.client.user_search(text)
        if text.isascii() and text.isdigit() and len(text) <= 18:
            try:
                info = await self.client.user_info(int(text))
            except NotFound:
                return found
            except ServerError:
                if self._listed is None:  # read once, for every look-up that needs it
                    self._listed = asyncio.ensure_future(self.client.user_list())
                return found + [u for u in await self._listed if u.id == int(text)]
            found.append(info.summary())
        return found

    async def _read_memberships(
        self, user_ids: Collection[int], listed: Collection[int]
    ) -> dict[int, frozenset[int]]:
        """Every workspace each user belongs to (``user_info``), for the users a plan may
        delete: only those the site lists (``listed``; a site may answer ``user_info`` of a
        deleted ID with a failure, not a 404), and one that will not tell is left out."""
        ids = sorted(set(user_ids) & set(listed))
        self.progress.expect(len(ids))

        async def workspaces_of(user_id: int) -> tuple[int, frozenset[int]] | None:
            try:
                info = await self._counted(self.client.user_info(user_id))
            except REFUSALS:
                return None
            return user_id, frozenset(ref.id for ref in info.workspaces)

        found = await asyncio.gather(*(workspaces_of(user_id) for user_id in ids))
        return dict(pair for pair in found if pair is not None)

    async def _read_caller(self) -> int | None:
        """The user ID the API key belongs to (``user_permissions_location`` reports it)."""
        try:
            return (await self._counted(self.client.user_permissions_location("/"))).user_id
        except REFUSALS:
            return None

    async def _read_workspaces(
        self, wanted: NameSet | None
    ) -> tuple[list[WorkspaceEntry], dict[int, WorkspaceInfo] | None]:
        """``workspace_list``, then the details of the wanted workspaces: they need its IDs
        and nothing else, so they go out while ``users_location_access`` -- the slowest
        answer of a large site -- is still on its way."""
        entries = await self._counted(self._ahead("workspace_list", self.client.workspace_list))
        details_for = [e for e in entries if wanted is None or e.name in wanted]
        self.progress.expect(len(details_for))
        return entries, await self._read_details(details_for)

    async def _read_users_and_groups(
        self, memberships_of: Collection[int]
    ) -> tuple[list[LocationEntry], list[str], list[UserSummary], dict[int, frozenset[int]]]:
        """``users_location_access`` at ``/`` (groups, and the number of users, which lets
        the ``user_list`` pages load at once), then the pages, then the workspaces of each of
        ``memberships_of`` the pages list (``_read_memberships``)."""
        locations, notes = await self._read_locations()
        user_count = sum(1 for loc in locations if not loc.is_group) if locations else None
        pages = (user_count // USER_LIST_PAGE_SIZE + 1) if user_count is not None else 1
        self.progress.expect(pages)
        summaries = await self._counted(self.client.user_list(expected_total=user_count), pages)
        memberships = await self._read_memberships(memberships_of, {s.id for s in summaries})
        return locations, notes, summaries, memberships

    async def _read_locations(self) -> tuple[list[LocationEntry], list[str]]:
        try:
            at_root = self._ahead(
                "users_location_access", lambda: self.client.users_location_access("/")
            )
            locations = await self._counted(at_root)
        except REFUSALS:
            return [], [
                "This site refuses users_location_access at /: user groups made outside the "
                "tool cannot be discovered; only the groups the tool recorded are known."
            ]
        return locations, []

    async def _read_details(self, entries: list[WorkspaceEntry]) -> dict[int, WorkspaceInfo] | None:
        """``workspace_info`` of each entry; ``None`` when the site refuses the method.

        The first entry's answer says whether the site tells at all, but the others do not
        wait for it: that round trip, behind ``users_location_access`` on a large site, held
        the read's seven other slots idle for some 40 ms. A site that refuses gets at most twice
        the client's concurrency of refused calls (those under way when the first refusal is
        read, and each one that took the slot an answer freed before that answer was read:
        ``Caller.call``); the calls still waiting for a slot are dropped.
        """
        if not entries:
            return {}
        calls = [
            asyncio.ensure_future(self._counted(self.client.workspace_info(entry.id)))
            for entry in entries
        ]
        first, rest = calls[0], calls[1:]
        try:
            probe = await first
        except REFUSALS:
            await _dropped(rest)
            return None
        except BaseException:
            await _dropped(rest)
            raise
        try:
            infos = await asyncio.gather(*rest)
        except BaseException:
            await _dropped(rest)
            raise
        return {info.id: info for info in (probe, *infos)}

    async def _fallback_members(
        self, entries: list[WorkspaceEntry], user_ids: Iterable[int]
    ) -> tuple[LiveWorkspace, ...]:
        ids = sorted(set(user_ids))
        self.progress.expect(len(ids))
        infos = await asyncio.gather(*(self._counted(self.client.user_info(uid)) for uid in ids))
        members: dict[int, set[int]] = defaultdict(set)
        for info in infos:
            for ref in info.workspaces:
                members[ref.id].add(info.id)
        return tuple(
            LiveWorkspace(e.id, e.name, e.path, users=frozenset(members.get(e.id, ())))
            for e in entries
        )


async def _nothing() -> None:
    return None


async def _no_users() -> list[UserSummary]:
    return []


async def _no_locations() -> tuple[list[LocationEntry], list[str]]:
    return [], []


async def _dropped(calls: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel ``calls`` and wait until they are done (sent ones answer or stop; their errors
    are retrieved, not left for asyncio to report)."""
    for call in calls:
        call.cancel()
    await asyncio.gather(*calls, return_exceptions=True)
