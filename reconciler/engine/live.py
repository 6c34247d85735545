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
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from reconciler.api.client import SiteClient
from reconciler.api.errors import InvalidRequest, NotFound, PermissionDenied
from reconciler.api.records import LocationEntry, UserSummary, WorkspaceEntry, WorkspaceInfo
from reconciler.api.spec import USER_LIST_PAGE_SIZE
from reconciler.model import LiveGroup, LiveSite, LiveUser, LiveWorkspace

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

    async def _counted(self, call: Awaitable[T], calls: int = 1) -> T:
        result = await call
        self.progress.advance(calls)
        return result

    async def read(
        self,
        detail_names: Iterable[str] | None,
        fallback_users: Callable[[tuple[LiveUser, ...]], Iterable[int]] = lambda users: (),
    ) -> LiveSite:
        """The live site.

        ``detail_names`` are the workspaces whose details are read (None: every one).
        ``fallback_users`` picks, from the site's users, those whose workspaces are read with
        ``user_info`` when the site refuses ``workspace_info``.
        """
        self.progress.expect(2)
        wanted = None if detail_names is None else set(detail_names)
        (entries, details), (locations, notes, summaries) = await asyncio.gather(
            self._read_workspaces(wanted), self._read_users_and_groups()
        )
        users = tuple(LiveUser(s.id, s.username, s.email, bool(s.admin)) for s in summaries)
        if details is None:
            notes.append(
                "This site refuses workspace_info: workspace members were read with user_info "
                "for the users the manifest and the records name, and permission and "
                "notification overrides could not be observed."
            )
            workspaces = await self._fallback_members(entries, fallback_users(users))
        else:
            workspaces = _workspaces(entries, details)
        groups = tuple(LiveGroup(loc.id, loc.name) for loc in locations if loc.is_group)
        # A site that omits groups at / cannot be told apart from one with no groups, so an
        # answer without any group is not trusted to prove that a recorded group is gone.
        return LiveSite(users, workspaces, groups, groups_listed=bool(groups), notes=tuple(notes))

    async def _read_workspaces(
        self, wanted: set[str] | None
    ) -> tuple[list[WorkspaceEntry], dict[int, WorkspaceInfo] | None]:
        """``workspace_list``, then the details of the wanted workspaces: they need its IDs
        and nothing else, so they go out while ``users_location_access`` -- the slowest
        answer of a large site -- is still on its way."""
        entries = await self._counted(self.client.workspace_list())
        details_for = [e for e in entries if wanted is None or e.name in wanted]
        self.progress.expect(len(details_for))
        return entries, await self._read_details(details_for)

    async def _read_users_and_groups(
        self,
    ) -> tuple[list[LocationEntry], list[str], list[UserSummary]]:
        """``users_location_access`` at ``/`` (groups, and the number of users, which lets
        the ``user_list`` pages load at once), then the pages."""
        locations, notes = await self._read_locations()
        user_count = sum(1 for loc in locations if not loc.is_group) if locations else None
        pages = (user_count // USER_LIST_PAGE_SIZE + 1) if user_count is not None else 1
        self.progress.expect(pages)
        summaries = await self._counted(self.client.user_list(expected_total=user_count), pages)
        return locations, notes, summaries

    async def _read_locations(self) -> tuple[list[LocationEntry], list[str]]:
        try:
            locations = await self._counted(self.client.users_location_access("/"))
        except REFUSALS:
            return [], [
                "This site refuses users_location_access at /: user groups made outside the "
                "tool cannot be discovered; only the groups the tool recorded are known."
            ]
        return locations, []

    async def _read_details(self, entries: list[WorkspaceEntry]) -> dict[int, WorkspaceInfo] | None:
        """``workspace_info`` of each entry; ``None`` when the site refuses the method."""
        if not entries:
            return {}
        first, rest = entries[0], entries[1:]
        try:
            probe = await self._counted(self.client.workspace_info(first.id))
        except REFUSALS:
            return None
        infos = await asyncio.gather(
            *(self._counted(self.client.workspace_info(entry.id)) for entry in rest)
        )
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


def _workspaces(
    entries: list[WorkspaceEntry], details: dict[int, WorkspaceInfo]
) -> tuple[LiveWorkspace, ...]:
    result = []
    for entry in entries:
        info = details.get(entry.id)
        if info is None:
            result.append(LiveWorkspace(entry.id, entry.name, entry.path))
        else:
            result.append(
                LiveWorkspace(
                    entry.id,
                    entry.name,
                    entry.path,
                    users=frozenset(user.id for user in info.users),
                    permissions=info.permissions,
                    notifications=info.notifications,
                    details_observed=True,
                )
            )
    return tuple(result)
