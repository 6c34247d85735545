"""The workspace kind's writes: ``workspace_add`` and ``workspace_delete`` (creating workspaces,
and destroying them with their files), ``add_to_workspace`` and ``remove_from_workspace``
(one user joining or leaving several workspaces in one call)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Self

from reconciler import codec
from reconciler.access.model import AccessChange, Cause, Effect
from reconciler.api.answers import WorkspaceSettings
from reconciler.api.errors import InvalidRequest, NotFound, PermissionDenied
from reconciler.core.actions import (
    NO_RESULT,
    AccessView,
    Deletion,
    Done,
    Phase,
    Result,
    Settlement,
    UserKey,
    WriteAction,
    bind_users,
    user_ids,
)
from reconciler.core.memberships import MembershipChange, Place
from reconciler.core.records import AccessEnd, Event, RecordedWorkspace, Records, Tables
from reconciler.kinds.change import spread
from reconciler.kinds.workspace import MEMBERS_AT, RecordedSettings, WorkspaceSpec, access

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient
    from reconciler.model import LiveSite

DESTROYS_FILES = "destroys all files in the workspace"


@spread(WorkspaceSpec, "settings", among="users", at=MEMBERS_AT, users="user_ids")
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceAdd(WriteAction):
    """Create workspaces that share every setting: one call, as the API allows. A plan file
    writes the settings as parameters of their own, among the users (as the API takes them)."""

    method = "workspace_add"
    late_landing_matters = True
    default_phase = Phase.CREATE_WORKSPACES

    names: tuple[str, ...]
    settings: WorkspaceSpec
    users: tuple[UserKey, ...]

    @property
    def key(self) -> str:
        return "+".join(self.names)

    def summary(self) -> str:
        names = ", ".join(f'"{n}"' for n in self.names)
        return f"create workspace {names} with {len(self.users)} user(s)"

    def touches(self) -> Iterable[tuple[str, str]]:
        return (("workspace", name) for name in self.names)

    def named_users(self) -> Iterable[UserKey]:
        return self.users

    def creates(self) -> Iterable[tuple[str, str]]:
        return (("workspace", name) for name in self.names)

    def access_effects(self, view: AccessView) -> Iterator[AccessChange]:
        """Each workspace gained by its members and every administrator; one that replaces a
        workspace of its name (``--replace``) is said as ``access.replaced``."""
        old_ids = view.memo("replaced workspaces' IDs", lambda: _replaced_ids(view))
        fields = view.memo("replaced workspaces' settings", lambda: _replaced_fields(view))
        for name in self.names:
            if name in old_ids:
                yield from access.replaced(
                    view, name, old_ids[name], self.users, fields.get(name, ())
                )
            else:
                yield from access.everyone(
                    view, name, None, self.users, "gains", "workspace created"
                )

    def __post_init__(self) -> None:
        if not self.names:
            raise ValueError("workspace_add without names")

    def bind(self, new_ids: Mapping[str, int]) -> Self:
        return replace(self, users=bind_users(self.users, new_ids))

    async def call(self, client: SiteClient) -> Result:
        settings = WorkspaceSettings(self.settings, tuple(sorted(user_ids(self.users))))
        return Result(tuple(await client.workspace_add(list(self.names), settings)))

    async def settle(self, client: SiteClient) -> Settlement:
        """A workspace of each name now on the site is this call's: the newest of that name."""
        newest: dict[str, int] = {}
        for entry in await client.workspace_list():
            newest[entry.name] = max(entry.id, newest.get(entry.name, 0))
        done = tuple(name for name in self.names if name in newest)
        todo = tuple(name for name in self.names if name not in newest)
        return Settlement(
            applied=replace(self, names=done) if done else None,
            result=Result(tuple(newest[name] for name in done)),
            remaining=replace(self, names=todo) if todo else None,
        )

    def settle_from_live(self, live: LiveSite, records: Records) -> tuple[list[str], list[Event]]:
        """After a crash: a workspace of one of these names that the records do not know by its
        ID is this call's -- also when they still hold one of that name that is gone (this
        call was its re-creation): by name alone it would stay unmanaged for good."""
        on_site = {ws.name: ws.id for ws in live.workspaces}
        found = tuple(
            n
            for n in self.names
            if n in on_site
            and (n not in records.workspaces or records.workspaces[n].id != on_site[n])
        )
        if not found:
            return [], []
        learnt = [f'workspace "{n}" was created by an interrupted apply' for n in found]
        done = replace(self, names=found)
        return learnt, [Done(done, Result(tuple(on_site[n] for n in found)))]

    def fold(self, tables: Tables, result: Result) -> None:
        if len(result.ids) != len(self.names):
            return  # an answer that does not cover every name proves nothing: record nothing
        for name, workspace_id in zip(self.names, result.ids, strict=True):
            tables.workspaces[name] = RecordedWorkspace(
                id=workspace_id,
                managed=True,
                origin="created",
                settings=RecordedSettings.of(self.settings),
                members=user_ids(self.users),
                source=_source_of(tables.workspaces.get(name)),
            )


def _source_of(record: RecordedWorkspace | None) -> str | None:
    return None if record is None else record.source


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceDelete(WriteAction):
    """Delete a workspace **and every file in it**: prune, or the first half of a replacement."""

    method = "workspace_delete"
    late_landing_matters = True
    default_phase = Phase.DELETE

    workspace_id: int
    name: str
    reason: Literal["prune", "replace"] = "prune"

    @property
    def key(self) -> str:
        return str(self.workspace_id)

    def summary(self) -> str:
        why = " to re-create it" if self.reason == "replace" else ""
        return f'delete workspace "{self.name}"{why} ({DESTROYS_FILES})'

    def touches(self) -> Iterable[tuple[str, str]]:
        return [("workspace", self.name)]

    def deletion(self) -> Deletion:
        return Deletion("workspace", self.name, self.workspace_id, self.reason)

    def ended_access(self) -> Iterable[AccessEnd]:
        return [(None, self.workspace_id)]  # every member loses it, and every administrator

    def access_effects(self, view: AccessView) -> Iterator[AccessChange]:
        """A pruned workspace is lost by its members and every administrator (a replaced
        one: by its ``WorkspaceAdd``, which knows what follows)."""
        if self.reason == "prune":
            members = view.members(self.workspace_id)
            yield from access.everyone(
                view, self.name, self.workspace_id, members, "loses", "workspace deleted"
            )

    @property
    def phase(self) -> Phase:
        """A replacement's delete comes before the re-creation; a prune's comes last."""
        return Phase.REPLACE_WORKSPACES if self.reason == "replace" else Phase.DELETE

    async def call(self, client: SiteClient) -> Result:
        await client.workspace_delete(self.workspace_id)
        return NO_RESULT

    async def settle(self, client: SiteClient) -> Settlement:
        ids = {entry.id for entry in await client.workspace_list()}
        if self.workspace_id not in ids:
            return Settlement(applied=self)
        return Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        record = tables.workspaces.get(self.name)
        if record is not None and record.id == self.workspace_id:
            del tables.workspaces[self.name]


def _replaced_ids(view: AccessView) -> dict[str, int]:
    """The workspaces the plan deletes to create again (``--replace``): old ID by name."""
    return {
        a.name: a.workspace_id
        for a in view.actions
        if isinstance(a, WorkspaceDelete) and a.reason == "replace"
    }


def _replaced_fields(view: AccessView) -> dict[str, Any]:
    """The settings each replacement changes, by workspace name."""
    return {
        c.name: c.changed_values
        for c in view.changes
        if c.kind == "workspace" and c.action == "replace"
    }


class _WorkspaceMembership(MembershipChange):
    __slots__ = ()
    kind = "workspace"

    def access_effects(self, view: AccessView) -> Iterator[AccessChange]:
        """The user gains or loses each workspace (not an administrator: they reach it
        anyway)."""
        if view.admin(self.user):
            return
        effect: Effect = "gains" if self.adds else "loses"
        cause: Cause = "member added" if self.adds else "member removed"
        for target in self.targets:
            yield view.change(self.user, target.name, target.id, effect, cause)

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


for _kind in (WorkspaceJoin, WorkspaceLeave):
    codec.rename(_kind, user="user_id", user_label="user")

ACTIONS = (WorkspaceDelete, WorkspaceAdd, WorkspaceJoin, WorkspaceLeave)
"""The workspace kind's writes (``kinds/registry.py``)."""
