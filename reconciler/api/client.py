"""``SiteClient``: the one way the reconciler talks to a site.

One typed method per API method; each says only what it sends (and, for ``user_list`` and
``users_location_access``, how pages and the old method name are handled). The verb,
success keys and decoder of each are its row in ``reconciler.api.methods``; sending,
limits, errors and retries are the one path of ``reconciler.api.caller``.
"""

from __future__ import annotations

import asyncio
import copy
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from reconciler import spec
from reconciler.api import answers, methods
from reconciler.api.caller import Caller, ClientStats, SendGuard
from reconciler.api.config import ClientConfig
from reconciler.api.errors import PROTOCOL_HINT, NotFound, ProtocolError, SiteError
from reconciler.api.methods import ApiMethod, id_list, workspace_add_params

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")

__all__ = ["ClientStats", "SiteClient"]

PAGE_SLACK = 20
"""Pages read beyond twice the count the site reported before ``user_list`` gives up: users
may be added while the list is read, and the count may leave some users out."""


class SiteClient:
    """Async client of one site; use as ``async with SiteClient(config) as client:``.

    ``transport`` is the seam for tests (the sandbox in-process, or a loopback server);
    ``clock``, ``sleep`` and ``jitter`` make timestamps and waits injectable, ``monotonic``
    the clock ``--rate-limit`` spaces calls by (its waits are ``sleep``'s too).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._caller = Caller(
            config,
            transport=transport,
            clock=clock,
            sleep=sleep,
            jitter=jitter,
            monotonic=monotonic,
        )
        self.stats: ClientStats = self._caller.stats
        self._location_method: ApiMethod[tuple[answers.LocationEntry, ...]] | None = None
        self._location_probe = asyncio.Lock()
        self._before_send: SendGuard | None = None

    def guarded(self, before_send: SendGuard) -> SiteClient:
        """This client (the same connections, limits and counters), calling ``before_send``
        just before each write leaves (``caller.SendGuard``): the executor's check that its
        lock still holds, and its journal entry with the moment the write left."""
        view = copy.copy(self)
        view._before_send = before_send
        return view

    async def __aenter__(self) -> SiteClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._caller.aclose()

    def __repr__(self) -> str:
        return f"SiteClient({self.config.site_url!r}, api_key={self.config.masked_key!r})"

    # --- reads ----------------------------------------------------------------------------

    async def user_info(self, user_id: int) -> answers.UserInfo:
        return await self._call(methods.USER_INFO, {"user_id": str(user_id)})

    async def user_list(self, *, expected_total: int | None = None) -> list[answers.UserSummary]:
        """Every user, all pages. ``expected_total`` (the site's own count) lets the pages load
        concurrently and bounds how many are read.

        Reading goes on while the last page is full, so a low count costs time, never users --
        up to twice the pages the count implies (plus ``PAGE_SLACK``), or
        ``max_user_pages`` without a count: a site that never answers a short page is
        reported, not read forever.
        """
        size = spec.USER_LIST_PAGE_SIZE
        expected = None if expected_total is None else max(expected_total, 0) // size + 1
        limit = self.config.max_user_pages if expected is None else 2 * expected + PAGE_SLACK
        first = min(expected or 1, limit)
        loaded = await asyncio.gather(
            *(self._user_page(n) for n in range(1, first + 1)), return_exceptions=True
        )
        pages = [_raise_if_error(page) for page in loaded]
        seen = {user.id for page in pages for user in page}
        while len(pages[-1]) >= size:
            if len(pages) >= limit:
                raise _endless_list(limit, expected_total)
            page = await self._user_page(len(pages) + 1)
            if page and {user.id for user in page} <= seen:
                raise _repeated_page(len(pages) + 1)
            seen.update(user.id for user in page)
            pages.append(page)
        unique = {user.id: user for page in pages for user in page}
        return list(unique.values())

    async def _user_page(self, number: int, **filters: str) -> tuple[answers.UserSummary, ...]:
        params = {"current_page": str(number), **{k: v for k, v in filters.items() if v}}
        return await self._call(methods.USER_LIST, params)

    async def user_search(self, text: str) -> list[answers.UserSummary]:
        """The users whose names, e-mail, username or organisation contain ``text`` (the
        site's own search), every page of them -- a look-up that costs one call, not the
        whole user list."""
        return await self._filtered_users(search=text)

    async def deactivated_users(self) -> list[answers.UserSummary]:
        """The users ``user_list`` gives for ``active=0``, every page: the few deactivated
        accounts for a call or two, not the whole user list. A site that ignores the filter
        answers every user; callers keep those it reports inactive."""
        return await self._filtered_users(active="0")

    async def _filtered_users(self, **filters: str) -> list[answers.UserSummary]:
        size = spec.USER_LIST_PAGE_SIZE
        pages = [await self._user_page(1, **filters)]
        while len(pages[-1]) >= size:
            if len(pages) >= self.config.max_user_pages:
                raise _endless_list(len(pages), None)
            pages.append(await self._user_page(len(pages) + 1, **filters))
        return list({user.id: user for page in pages for user in page}.values())

    async def users_location_access(
        self, path: str = "/", *, non_admins_only: bool = False
    ) -> list[answers.LocationEntry]:
        """Users and groups with access to ``path``.

        Older (FileGenius-era) sites call the method ``user_location_access``: when the site
        says it has no method of the documented name, the old name is tried, once per client,
        and whichever name works is used from then on.
        """
        params = {"path": path, **({"type": "nonAdminsOnly"} if non_admins_only else {})}
        if self._location_method is None:
            async with self._location_probe:
                if self._location_method is None:
                    return list(await self._probe_location_method(params, path))
        return list(await self._call(self._location_method, params))

    async def _probe_location_method(
        self, params: Mapping[str, str], path: str
    ) -> tuple[answers.LocationEntry, ...]:
        current, legacy = methods.USERS_LOCATION_ACCESS, methods.USER_LOCATION_ACCESS
        try:
            entries = await self._call(current, params)
        except SiteError as error:
            if not _method_missing(error, path):
                raise
            try:
                entries = await self._call(legacy, params)
            except SiteError as legacy_error:
                if _method_missing(legacy_error, path):
                    self._location_method = current  # neither exists: do not probe again
                    raise error from None
                self._location_method = legacy  # it exists; this call was refused
                raise
            self._location_method = legacy
            return entries
        self._location_method = current
        return entries

    async def user_permissions_location(self, path: str) -> answers.LocationPermissions:
        """The caller's permissions at ``path``; its ``user_id`` is the caller's own user ID."""
        return await self._call(methods.USER_PERMISSIONS_LOCATION, {"path": path})

    async def workspace_list(self) -> list[answers.WorkspaceEntry]:
        return list(await self._call(methods.WORKSPACE_LIST, {}))

    async def workspace_info(self, workspace_id: int) -> answers.WorkspaceInfo:
        return await self._call(methods.WORKSPACE_INFO, {"workspace_id": str(workspace_id)})

    # --- writes ---------------------------------------------------------------------------

    async def workspace_add(
        self, names: Sequence[str], settings: answers.WorkspaceSettings
    ) -> list[int]:
        """Create workspaces sharing ``settings``; their IDs in the order of ``names``."""
        params = workspace_add_params(names, settings)
        return list(await self._call(methods.WORKSPACE_ADD, params))

    async def workspace_delete(self, workspace_id: int) -> int:
        """Delete a workspace **and every file in it**; the engine guards the decision."""
        return await self._call(methods.WORKSPACE_DELETE, {"workspace_id": str(workspace_id)})

    async def user_add(self, user: answers.NewUser) -> int:
        """Create a user; the new user's ID. No password is sent: the site e-mails the login."""
        return await self._call(methods.USER_ADD, methods.user_add_params(user))

    async def user_delete(self, user_id: int) -> int:
        """Delete a user; the deleted user's ID."""
        return await self._call(methods.USER_DELETE, {"user_id": str(user_id)})

    async def user_group_add(self, name: str, member_ids: Sequence[int]) -> answers.GroupCreated:
        params = {"name": name, **({"group_users": id_list(member_ids)} if member_ids else {})}
        return await self._call(methods.USER_GROUP_ADD, params)

    async def user_group_delete(self, group_id: int) -> int:
        return await self._call(methods.USER_GROUP_DELETE, {"user_group_id": str(group_id)})

    async def add_to_user_group(
        self, user_id: int, group_ids: Sequence[int]
    ) -> answers.MembershipAnswer:
        return await self._membership(
            methods.ADD_TO_USER_GROUP, "user_group_ids", user_id, group_ids
        )

    async def remove_from_user_group(
        self, user_id: int, group_ids: Sequence[int]
    ) -> answers.MembershipAnswer:
        return await self._membership(
            methods.REMOVE_FROM_USER_GROUP, "user_group_ids", user_id, group_ids
        )

    async def add_to_workspace(
        self, user_id: int, workspace_ids: Sequence[int]
    ) -> answers.MembershipAnswer:
        return await self._membership(
            methods.ADD_TO_WORKSPACE, "user_workspace_ids", user_id, workspace_ids
        )

    async def remove_from_workspace(
        self, user_id: int, workspace_ids: Sequence[int]
    ) -> answers.MembershipAnswer:
        return await self._membership(
            methods.REMOVE_FROM_WORKSPACE, "user_workspace_ids", user_id, workspace_ids
        )

    async def _membership(
        self,
        method: ApiMethod[answers.MembershipAnswer],
        ids_param: str,
        user_id: int,
        target_ids: Sequence[int],
    ) -> answers.MembershipAnswer:
        return await self._call(method, {"user_id": str(user_id), ids_param: id_list(target_ids)})

    async def _call(self, method: ApiMethod[T], params: Mapping[str, str]) -> T:
        return await self._caller.call(method, params, self._before_send)


def _method_missing(error: SiteError, path: str) -> bool:
    """Whether ``error`` says the site has no such *method* (not: no such location).

    A 404 page that is not an API body, or a NotFound at ``/`` (which always exists) or one
    whose title names a method (the sandbox's "Unknown Method").
    """
    if isinstance(error, ProtocolError):
        return error.status == 404
    return isinstance(error, NotFound) and (path == "/" or "method" in (error.title or "").lower())


def _raise_if_error(result: T | BaseException) -> T:
    if isinstance(result, BaseException):
        raise result
    return result


def _repeated_page(number: int) -> ProtocolError:
    return ProtocolError(
        f"user_list: page {number} repeated users of earlier pages; the site seems to ignore "
        "current_page, so the list cannot be read to its end.",
        method=methods.USER_LIST.name,
        hint=PROTOCOL_HINT,
    )


def _endless_list(limit: int, expected_total: int | None) -> ProtocolError:
    reported = (
        "without a user count from the site"
        if expected_total is None
        else f"although the site reported {expected_total} users"
    )
    return ProtocolError(
        f"user_list: page {limit} was still full {reported}; reading stopped after {limit} "
        f"pages ({limit * spec.USER_LIST_PAGE_SIZE} users).",
        method=methods.USER_LIST.name,
        hint="The site keeps answering full pages. " + PROTOCOL_HINT,
    )
