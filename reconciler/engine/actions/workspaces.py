"""``workspace_add`` and ``workspace_delete``: creating workspaces, and destroying them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Self

from reconciler.api.answers import WorkspaceSettings
from reconciler.engine.actions.base import (
    NO_RESULT,
    AfterApply,
    Deletion,
    Done,
    Phase,
    Result,
    Settlement,
    Unbound,
    UserKey,
    WriteAction,
)
from reconciler.engine.records import AccessEnd, Event, RecordedWorkspace, Records, Tables
from reconciler.kinds.change import spread
from reconciler.kinds.workspace import MEMBERS_AT, RecordedSettings, WorkspaceSpec

if TYPE_CHECKING:
    from reconciler.api.client import SiteClient
    from reconciler.model import LiveSite

DESTROYS_FILES = "destroys all files in the workspace"


def bind_users(users: tuple[UserKey, ...], new_ids: Mapping[str, int]) -> tuple[UserKey, ...]:
    """``users`` with every user created in this apply replaced by its new ID."""
    bound: list[UserKey] = []
    for user in users:
        if isinstance(user, AfterApply):
            if user.username not in new_ids:
                raise Unbound(user.username)
            bound.append(new_ids[user.username])
        else:
            bound.append(user)
    return tuple(bound)


def user_ids(users: Iterable[UserKey]) -> frozenset[int]:
    """The users that have IDs (a bound action has only those)."""
    return frozenset(user for user in users if isinstance(user, int))


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
