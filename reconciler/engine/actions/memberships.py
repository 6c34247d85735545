"""Users joining and leaving workspaces and groups: one call per user, naming every target.

Memberships are sets: sending a change again can never duplicate anything, so a change whose
answer was lost is checked where the site can tell (a workspace's members) and otherwise simply
sent again. Group members cannot be read back at all; what the tool applied is recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from reconciler import codec
from reconciler.api.errors import InvalidRequest, NotFound, PermissionDenied
from reconciler.engine.actions.base import (
    NO_RESULT,
    AfterApply,
    Phase,
    Result,
    Settlement,
    UserKey,
    WriteAction,
)
from reconciler.engine.actions.workspaces import bind_users
from reconciler.engine.records import AccessEnd, RecordedGroup, RecordedWorkspace, Tables

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient


@dataclass(frozen=True, slots=True)
class Place:
    """A workspace or group a membership change names: its ID, and its name for the records."""

    id: int
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MembershipChange(WriteAction):
    """One user joins (``adds``) or leaves several workspaces or groups in one call."""

    kind: ClassVar[Literal["workspace", "group"]]
    adds: ClassVar[bool]

    user: UserKey
    user_label: str  # how reports name the user (the username, or #ID)
    targets: tuple[Place, ...]

    @property
    def key(self) -> str:
        return f"new:{self.user.username}" if isinstance(self.user, AfterApply) else str(self.user)

    def summary(self) -> str:
        verb = "joins" if self.adds else "leaves"
        names = ", ".join(f'"{t.name}"' for t in self.targets)
        return f"{self.user_label} {verb} {self.kind} {names}"

    def touches(self) -> Iterable[tuple[str, str]]:
        return ((self.kind, target.name) for target in self.targets)

    def named_users(self) -> Iterable[UserKey]:
        return [self.user]

    def removals(self) -> int:
        return 0 if self.adds else len(self.targets)

    def __post_init__(self) -> None:
        if not self.targets:
            raise ValueError(f"a {self.method} names no {self.kind}")

    def bind(self, new_ids: Mapping[str, int]) -> Self:
        (user,) = bind_users((self.user,), new_ids)
        return replace(self, user=user)

    def with_targets(self, targets: Iterable[Place]) -> Self | None:
        chosen = tuple(targets)
        return replace(self, targets=chosen) if chosen else None

    @property
    def user_id(self) -> int:
        if isinstance(self.user, AfterApply):
            raise ValueError(f'user "{self.user.username}" is not bound to an ID yet')
        return self.user

    async def call(self, client: SiteClient) -> Result:
        """The client method of the API method's name: ``client.add_to_workspace(user, ids)``."""
        send = getattr(client, self.method)
        await send(self.user_id, [target.id for target in self.targets])
        return NO_RESULT

    async def settle(self, client: SiteClient) -> Settlement:
        """Group members cannot be read: the change is simply sent again (it is a set)."""
        return Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        for target in self.targets:
            self._fold_one(tables, target)

    def _fold_one(self, tables: Tables, target: Place) -> None:
        raise NotImplementedError


class _WorkspaceMembership(MembershipChange):
    __slots__ = ()
    kind = "workspace"

    async def settle(self, client: SiteClient) -> Settlement:
        """Read each workspace's members: done where the user is (or is not) there now."""
        done: list[Place] = []
        todo: list[Place] = []
        for target in self.targets:
            try:
                info = await client.workspace_info(target.id)
            except (PermissionDenied, InvalidRequest, NotFound):
                todo.append(target)  # cannot look: membership is a set, send again
                continue
            member = any(u.id == self.user_id for u in info.users)
            (done if member == self.adds else todo).append(target)
        return Settlement(applied=self.with_targets(done), remaining=self.with_targets(todo))

    def _fold_one(self, tables: Tables, target: Place) -> None:
        record = tables.workspaces.get(target.name)
        if record is None or record.id != target.id:
            record = RecordedWorkspace(id=target.id)
        members = record.members | {self.user_id} if self.adds else record.members - {self.user_id}
        tables.workspaces[target.name] = replace(record, members=members)


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
class WorkspaceJoin(_WorkspaceMembership):
    method = "add_to_workspace"
    default_phase = Phase.WORKSPACE_MEMBERS
    adds = True


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceLeave(_WorkspaceMembership):
    method = "remove_from_workspace"
    default_phase = Phase.WORKSPACE_MEMBERS
    adds = False

    def ended_access(self) -> Iterable[AccessEnd]:
        return [(self.user_id, target.id) for target in self.targets]


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


for _kind in (WorkspaceJoin, WorkspaceLeave, GroupJoin, GroupLeave):
    codec.rename(_kind, user="user_id", user_label="user")


def legacy_params(kind: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A membership change as releases before the one codec wrote it (parallel lists of
    target IDs and names): journals and pending writes of an older release are still read."""
    ids, names = params.get(f"{kind}_ids"), params.get("names")
    if "targets" in params or not isinstance(ids, list) or not isinstance(names, list):
        return params
    if len(ids) != len(names):
        raise ValueError("the target IDs and names do not match")
    targets = [{"id": i, "name": n} for i, n in zip(ids, names, strict=True)]
    return {"user_id": params.get("user_id"), "user": params.get("user"), "targets": targets}
