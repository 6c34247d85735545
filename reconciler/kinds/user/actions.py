"""``user_add`` and ``user_delete``: site users as code.

A user this apply creates is "known after apply": the actions that name it carry
``AfterApply(username)`` and are bound to the new ID once ``user_add`` answered. There is no
method to change an existing user, so these two are all there is; and no password ever: the
site e-mails a new user their login.

``user_delete`` deletes a person's account (what becomes of their files is not published):
it runs last, only for users the tool created or adopted, and is checked again when it runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from reconciler.access.model import AccessChange
from reconciler.api.answers import NewUser
from reconciler.api.errors import Contradicted, NotFound, OutcomeUnknown, SiteError
from reconciler.core.actions import (
    NO_RESULT,
    AccessView,
    AfterApply,
    Deletion,
    Done,
    KnownIds,
    Phase,
    Result,
    Settlement,
    WriteAction,
)
from reconciler.core.records import AccessEnd, Event, RecordedUser, Records, Tables
from reconciler.identity import lookup, same_name
from reconciler.kinds.change import spread, values
from reconciler.kinds.user import UserSpec

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient
    from reconciler.model import DesiredUser, LiveSite

DELETES_ACCOUNT = "deletes the user account"
MAX_USER_ID = 2**53 - 1
"""The largest ID a JSON client reads exactly; a new user's ID beyond it is not believed."""


@spread(UserSpec, "settings")
@dataclass(frozen=True, slots=True, kw_only=True)
class UserAdd(WriteAction):
    """Create one site user (a plan file writes its fields as parameters of their own)."""

    method = "user_add"
    late_landing_matters = True
    default_phase = Phase.CREATE_USERS

    username: str
    settings: UserSpec

    @classmethod
    def declared(cls, user: DesiredUser) -> UserAdd:
        """The creation of a user as the manifest declares it."""
        return cls(username=user.username, settings=user.settings)

    @property
    def key(self) -> str:
        return self.username

    def summary(self) -> str:
        role = " (administrator)" if self.settings.admin else ""
        return f'create user "{self.username}" <{self.settings.email}>{role}'

    def touches(self) -> Iterable[tuple[str, str]]:
        return [("user", self.username)]

    def creates(self) -> Iterable[tuple[str, str]]:
        return [("user", self.username)]

    def administrators_made(self) -> Iterable[str]:
        return [self.username] if self.settings.admin else []

    def access_effects(self, view: AccessView) -> Iterator[AccessChange]:
        """An administrator created reaches every workspace. (A user created otherwise gains
        only the workspaces the plan joins them to: those writes say so.)"""
        if self.settings.admin:
            new = AfterApply(self.username)
            yield view.change(
                new, None, None, "gains", "administrator created", via="administrator"
            )

    async def call(self, client: SiteClient) -> Result:
        new = NewUser(username=self.username, **values(self.settings))
        return Result((await client.user_add(new),))

    async def settle(self, client: SiteClient) -> Settlement:
        """A user of this name on the site now is this call's: usernames are unique."""
        found = [u.id for u in await client.user_list() if _same(u.username, self.username)]
        if found:
            return Settlement(applied=self, result=Result((found[0],)))
        return Settlement(remaining=self)

    def settle_from_live(self, live: LiveSite, records: Records) -> tuple[list[str], list[Event]]:
        if lookup(records.users, "user", self.username) is not None:
            return [], []
        found = [u.id for u in live.users if _same(u.username, self.username)]
        if not found:
            return [], []
        learnt = f'user "{self.username}" was created by an interrupted apply'
        return [learnt], [Done(self, Result((found[0],)))]

    def doubt(self, result: Result, known: KnownIds) -> str | None:
        """An ID that is not a plausible site ID, that someone had before this write, or that
        the records hold under another name is not this new user's: believing it would
        record two names on one ID and join someone else wherever the new user belongs."""
        if len(result.ids) != 1:
            return f"user_add answered {len(result.ids)} IDs for one new user"
        new_id = result.ids[0]
        if not 1 <= new_id <= MAX_USER_ID:
            return f"user_add answered the ID {new_id}, which no site user can have"
        if new_id in known.user_ids:
            return f"user_add answered the ID {new_id}, which belonged to another user already"
        holder = known.recorded.get(new_id)
        if holder is not None and not _same(holder, self.username):
            return f'user_add answered the ID {new_id}, which the records hold for "{holder}"'
        twin = next((n for n, i in known.created.items() if i == new_id), None)
        if twin is not None and not _same(twin, self.username):
            return f'user_add answered the ID {new_id}, which this apply gave "{twin}"'
        return None

    async def confirm(self, client: SiteClient, result: Result) -> str | None:
        """The site is asked who the answered ID is: an ID nobody had before can still be wrong
        (a made-up number, a relay's mistake), and everything this apply binds to the new user
        (groups, workspaces) and every later deletion would follow it."""
        new_id = result.ids[0]
        try:
            info = await client.user_info(new_id)
        except NotFound:
            return f"user_add answered the ID {new_id}, which the site does not know"
        except SiteError as exc:
            return f"user_add answered the ID {new_id}, which could not be checked ({exc})"
        if info.id != new_id or not _same(info.username, self.username):
            return (
                f'user_add answered the ID {new_id}, which the site gives to "{info.username}", '
                f'not "{self.username}"'
            )
        return None

    def new_user_ids(self, result: Result) -> dict[str, int]:
        return {self.username: result.ids[0]} if len(result.ids) == 1 else {}

    def fold(self, tables: Tables, result: Result) -> None:
        if len(result.ids) != 1:
            return
        previous = tables.users.get(self.username)
        tables.users[self.username] = RecordedUser(
            id=result.ids[0],
            managed=True,
            origin="created",
            source=None if previous is None else previous.source,
        )


def _same(a: str, b: str) -> bool:
    return same_name("user", a, b)


@dataclass(frozen=True, slots=True, kw_only=True)
class UserDelete(WriteAction):
    """Delete a site user the tool created or adopted (``policy.prune_users``)."""

    method = "user_delete"
    late_landing_matters = True
    default_phase = Phase.DELETE_USERS

    user_id: int
    username: str

    @property
    def key(self) -> str:
        return str(self.user_id)

    def summary(self) -> str:
        return f'delete user "{self.username}" ({DELETES_ACCOUNT})'

    def touches(self) -> Iterable[tuple[str, str]]:
        return [("user", self.username)]

    def named_users(self) -> Iterable[int]:
        return [self.user_id]

    def deletion(self) -> Deletion:
        return Deletion("user", self.username, self.user_id)

    def users_removed(self) -> Iterable[int]:
        return [self.user_id]

    def ended_access(self) -> Iterable[AccessEnd]:
        return [(self.user_id, None)]  # a deleted user leaves every workspace

    def access_effects(self, view: AccessView) -> Iterator[AccessChange]:
        """Every workspace the user reaches is lost: all of them for an administrator, else
        those ``user_info`` listed (read for every user a plan may delete), or failing that
        those whose members the plan read."""
        if view.admin(self.user_id):
            yield view.change(
                self.user_id, None, None, "loses", "user deleted", via="administrator"
            )
            return
        listed, complete = view.memberships(self.user_id)
        detail = None if complete else "only the workspaces whose members this plan read"
        for workspace_id in sorted(listed):
            name = view.workspace_name(workspace_id) or f"#{workspace_id}"
            yield view.change(
                self.user_id, name, workspace_id, "loses", "user deleted", detail=detail
            )

    async def call(self, client: SiteClient) -> Result:
        """Delete, then confirm from the site's own list: a 404 (which may only mean "Unknown
        Method"), or a success naming another ID, proves nothing by itself."""
        try:
            answered = await client.user_delete(self.user_id)
        except NotFound as refused:
            if await self._still_listed(client):
                raise Contradicted(
                    f"user_delete answered {refused.message!r}, but the site still lists user "
                    f'#{self.user_id} ("{self.username}"): it was not deleted',
                    method=self.method,
                ) from None
            raise  # confirmed: the user is not on the site (already gone)
        if await self._still_listed(client):
            raise Contradicted(
                f"user_delete answered success, but the site still lists user #{self.user_id} "
                f'("{self.username}"): it was not deleted',
                method=self.method,
            )
        if answered != self.user_id:
            return Result(
                note=f"user_delete answered for user #{answered}, not #{self.user_id}; the site "
                f"no longer lists #{self.user_id}, so it is recorded as deleted"
            )
        return NO_RESULT

    async def _still_listed(self, client: SiteClient) -> bool:
        try:
            listed = await client.user_list()
        except SiteError as exc:
            raise OutcomeUnknown(
                f"user_delete: the site's user list could not be read to confirm it ({exc})",
                method=self.method,
            ) from None
        return any(user.id == self.user_id for user in listed)

    async def settle(self, client: SiteClient) -> Settlement:
        ids = {user.id for user in await client.user_list()}
        return Settlement(applied=self) if self.user_id not in ids else Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        """The site removes a deleted user from every workspace and group: so do the records."""
        record = tables.users.get(self.username)
        if record is not None and record.id == self.user_id:
            del tables.users[self.username]
        for name, workspace in list(tables.workspaces.items()):
            if self.user_id in workspace.members:
                tables.workspaces[name] = replace(
                    workspace, members=workspace.members - {self.user_id}
                )
        for name, group in list(tables.groups.items()):
            if self.user_id in group.members:
                tables.groups[name] = replace(group, members=group.members - {self.user_id})


ACTIONS = (UserAdd, UserDelete)
"""The user kind's writes (``kinds/registry.py``)."""
