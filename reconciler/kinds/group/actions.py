"""``user_group_add`` and ``user_group_delete``.

A group's ID is known only from the ``user_group_add`` answer, or from
``users_location_access`` at ``/`` on a site that lists groups there. On a site that does not,
a creation whose answer was lost cannot be checked: the group is recorded as *uncertain* and
never created twice.

A creation whose answer was lost is settled by ID, not by name: it is sent (and journaled)
with the IDs of every group the site listed or the records held before it
(``GroupCreate.groups_before``), and only a group of its name with an ID outside that set can
be the one it made. An older group of the same name -- one still being deleted, or a late
arrival of an earlier apply -- is never taken for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Self

from reconciler import codec
from reconciler.core.actions import (
    NO_RESULT,
    Deletion,
    Done,
    KnownIds,
    Phase,
    Result,
    Settlement,
    Unsettled,
    UserKey,
    WriteAction,
    bind_users,
    user_ids,
)
from reconciler.core.memberships import MembershipChange, Place
from reconciler.core.records import Event, Forgotten, RecordedGroup, Records, Tables

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient
    from reconciler.model import LiveSite


async def listed_groups(client: SiteClient) -> list[tuple[int, str]]:
    """``(id, name)`` of every group ``users_location_access /`` reports (maybe none)."""
    return [(loc.id, loc.name) for loc in await client.users_location_access("/") if loc.is_group]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupCreate(WriteAction):
    """Create a user group with its members in one call."""

    method = "user_group_add"
    late_landing_matters = True
    default_phase = Phase.CREATE_GROUPS

    name: str
    members: tuple[UserKey, ...]
    groups_before: frozenset[int] = frozenset()  # group IDs known before it was sent

    @property
    def key(self) -> str:
        return self.name

    def summary(self) -> str:
        return f'create user group "{self.name}" with {len(self.members)} member(s)'

    def creates(self) -> Iterable[tuple[str, str]]:
        return [("group", self.name)]

    def as_sent(self, known: KnownIds) -> Self:
        return replace(self, groups_before=known.group_ids)

    def _made(self, groups: Iterable[tuple[int, str]]) -> list[int]:
        """The IDs of the listed groups that can be the one this call made: of its name, and
        not known before it was sent."""
        return [gid for gid, name in groups if name == self.name and gid not in self.groups_before]

    def touches(self) -> Iterable[tuple[str, str]]:
        return [("group", self.name)]

    def named_users(self) -> Iterable[UserKey]:
        return self.members

    def bind(self, new_ids: Mapping[str, int]) -> Self:
        return replace(self, members=bind_users(self.members, new_ids))

    async def call(self, client: SiteClient) -> Result:
        created = await client.user_group_add(self.name, sorted(user_ids(self.members)))
        return Result((created.id,))

    async def settle(self, client: SiteClient) -> Settlement:
        groups = await listed_groups(client)
        found = self._made(groups)
        if len(found) == 1:
            return Settlement(applied=self, result=Result((found[0],)))
        if found:
            return Settlement(
                cannot_tell=True,
                reason=f'the site lists {len(found)} new user groups named "{self.name}", so '
                "the tool cannot tell which one it created; it will not create another",
            )
        if groups:
            return Settlement(remaining=self)
        return Settlement(
            cannot_tell=True,
            reason="the site does not list user groups, so the tool cannot check whether "
            f'"{self.name}" was created; it will not create it again',
        )

    def settle_from_live(self, live: LiveSite, records: Records) -> tuple[list[str], list[Event]]:
        """After a crash: the one group of this name that was not there before is ours; on a
        site that does not list groups, the group stays *uncertain* so that it is never
        created twice."""
        record = records.groups.get(self.name)
        found = self._made((group.id, group.name) for group in live.groups)
        if record is not None and record.id is not None and (record.id in found or not found):
            return [], []  # recorded already, or a group the records knew before: not this one
        if len(found) == 1:
            learnt = f'user group "{self.name}" was created by an interrupted apply'
            return [learnt], [Done(self, Result((found[0],)))]
        if not live.groups_listed:
            learnt = f'user group "{self.name}" may have been created by an interrupted apply'
            return [learnt], [Unsettled(self)]
        if record is not None and record.uncertain:
            return [], [Forgotten("group", self.name)]  # the site lists groups: it is not there
        return [], []

    def fold(self, tables: Tables, result: Result) -> None:
        if len(result.ids) != 1:
            return
        previous = tables.groups.get(self.name)
        tables.groups[self.name] = RecordedGroup(
            id=result.ids[0],
            managed=True,
            origin="created",
            members=user_ids(self.members),
            members_known=True,
            source=None if previous is None else previous.source,
        )

    def fold_unknown(self, tables: Tables) -> None:
        """Remember the attempt, so that no later plan creates the group a second time."""
        if self.name not in tables.groups:
            tables.groups[self.name] = RecordedGroup(
                id=None,
                managed=True,
                origin="created",
                members=user_ids(self.members),
                members_known=True,
                uncertain=True,
            )


codec.rename(GroupCreate, omit_defaults=True, members="member_ids")  # plans: no groups_before


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupDelete(WriteAction):
    """Delete a user group the tool manages (prune)."""

    method = "user_group_delete"
    late_landing_matters = True
    default_phase = Phase.DELETE

    group_id: int
    name: str

    @property
    def key(self) -> str:
        return str(self.group_id)

    def summary(self) -> str:
        return f'delete user group "{self.name}"'

    def touches(self) -> Iterable[tuple[str, str]]:
        return [("group", self.name)]

    def deletion(self) -> Deletion:
        return Deletion("group", self.name, self.group_id)

    async def call(self, client: SiteClient) -> Result:
        await client.user_group_delete(self.group_id)
        return NO_RESULT

    async def settle(self, client: SiteClient) -> Settlement:
        groups = await listed_groups(client)
        gone = bool(groups) and all(group_id != self.group_id for group_id, _ in groups)
        return Settlement(applied=self) if gone else Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        record = tables.groups.get(self.name)
        if record is not None and record.id == self.group_id:
            del tables.groups[self.name]


class _GroupMembership(MembershipChange):
    __slots__ = ()
    kind = "group"

    def _fold_one(self, tables: Tables, target: Place) -> None:
        record = tables.groups.get(target.name)
        if record is None or record.id != target.id:
            record = RecordedGroup(id=target.id)
        members = record.members | {self.user_id} if self.adds else record.members - {self.user_id}
        unsure = record.unsure - {self.user_id}  # certain again
        tables.groups[target.name] = replace(
            record, members=members, uncertain=False, unsure=unsure
        )

    def fold_unknown(self, tables: Tables) -> None:
        """The change may or may not have happened, and the site cannot say: the user's
        membership is *unsure* until a later change of it is done (``RecordedGroup.unsure``).
        Left as recorded, a change that did land would never be undone by a manifest that
        wants the opposite."""
        if not isinstance(self.user, int):
            return
        for target in self.targets:
            record = tables.groups.get(target.name)
            if record is not None and record.id == target.id:
                tables.groups[target.name] = replace(record, unsure=record.unsure | {self.user})


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupJoin(_GroupMembership):
    method = "add_to_user_group"
    default_phase = Phase.ADD_TO_GROUPS
    adds = True


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupLeave(_GroupMembership):
    method = "remove_from_user_group"
    default_phase = Phase.REMOVE_FROM_GROUPS
    adds = False


for _kind in (GroupJoin, GroupLeave):
    codec.rename(_kind, user="user_id", user_label="user")

ACTIONS = (GroupCreate, GroupJoin, GroupLeave, GroupDelete)
"""The group kind's writes (``kinds/registry.py``)."""
