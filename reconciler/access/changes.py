"""Who gains and who loses access with a plan: the access delta of its actions.

Computed from the actions the plan will run (the source of truth for what happens), the
plan's changes (a replacement's settings before and after), the live read (who is a member
now, who is an administrator, which workspaces a user the plan deletes belongs to) and the
records (the members of a workspace the read did not list). Only workspace access is
concerned: the API gives user groups no access to workspaces. An administrator reaches every
workspace, so a membership added or removed for one changes nothing and is not listed; a
workspace created or deleted is gained or lost by every administrator too.

Each change names the workspace and the person by the identities an access report keys them by
(``since.py``): the workspace's ID where it exists before the apply, the user's ID where the
user exists. So a replacement -- the workspace deleted and created again, its files destroyed
-- is what an access report then observes: everyone who could reach the old workspace (its ID)
loses it, everyone who can reach the new one gains it; ``tests/test_access_oracles.py`` holds
the two to each other.

A plan does not read people's own permissions (``user_info``), so where a replacement turns
an override on or off, the change is said as "permissions: (no override) -> ..." rather than
flag by flag.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import ACCESS_SETTINGS, AccessChange, Cause, Effect
from reconciler.core.actions import AfterApply, UserKey, WriteAction
from reconciler.core.changes import Change, FieldChange, site_spelling
from reconciler.core.records import Records
from reconciler.core.users import UserDirectory
from reconciler.engine.plan import value_text
from reconciler.kinds.user.actions import UserAdd, UserDelete
from reconciler.kinds.workspace.actions import (
    WorkspaceAdd,
    WorkspaceDelete,
    WorkspaceJoin,
    WorkspaceLeave,
)
from reconciler.model import LiveSite, LiveWorkspace

EFFECT_ORDER = {"loses": 0, "gains": 1, "changes": 2}
Via = Literal["member", "administrator"]


@dataclass(frozen=True, slots=True)
class _Site:
    """What the delta is judged against: the live read, the records, the plan's new users."""

    live: LiveSite
    directory: UserDirectory
    records: Records
    new_admins: frozenset[str]  # usernames this plan creates as administrators
    deleted: frozenset[int]  # users this plan deletes: they gain nothing

    def admin(self, user: UserKey) -> bool:
        if isinstance(user, AfterApply):
            return user.username in self.new_admins
        found = self.directory.by_id.get(user)
        return bool(found and found.admin)

    def admins(self) -> list[int]:
        """The administrators who reach every workspace after the apply."""
        return sorted(u.id for u in self.live.users if u.admin and u.id not in self.deleted)

    def workspace(self, workspace_id: int) -> LiveWorkspace | None:
        return next((ws for ws in self.live.workspaces if ws.id == workspace_id), None)

    def members(self, workspace_id: int) -> list[int]:
        """Who is a member of the workspace now: as read, else as the records hold it."""
        ws = self.workspace(workspace_id)
        if ws is not None and ws.users is not None:
            return sorted(ws.users)
        recorded = next((r for r in self.records.workspaces.values() if r.id == workspace_id), None)
        return sorted(recorded.members) if recorded is not None else []

    def change(
        self,
        user: UserKey,
        name: str | None,
        workspace_id: int | None,
        effect: Effect,
        cause: Cause,
        *,
        what: str = "access",
        via: Via = "member",
        detail: str | None = None,
    ) -> AccessChange:
        """One access change, with the identities a report keys it by and the site's
        spelling of the workspace where the manifest's differs."""
        ws = self.workspace(workspace_id) if workspace_id is not None else None
        return AccessChange(
            self.directory.label(user),
            name,
            effect,
            what,
            via,
            cause,
            detail,
            workspace_id=workspace_id,
            user_id=None if isinstance(user, AfterApply) else user,
            site_name=site_spelling(name, ws.name) if ws is not None and name else None,
        )


def plan_access(
    actions: Sequence[WriteAction],
    changes: Iterable[Change],
    live: LiveSite,
    directory: UserDirectory,
    records: Records,
) -> tuple[AccessChange, ...]:
    """Every access the plan gives or takes, sorted by person, then workspace."""
    new_admins = frozenset(
        a.username for a in actions if isinstance(a, UserAdd) and a.settings.admin
    )
    deleted = frozenset(a.user_id for a in actions if isinstance(a, UserDelete))
    site = _Site(live, directory, records, new_admins, deleted)
    replaced = {
        a.name: a.workspace_id
        for a in actions
        if isinstance(a, WorkspaceDelete) and a.reason == "replace"
    }
    fields = {
        c.name: c.changed_values for c in changes if c.kind == "workspace" and c.action == "replace"
    }
    found: dict[tuple[Any, ...], AccessChange] = {}
    for action in actions:
        for change in _of(action, site, replaced, fields):
            key = (change.person, change.workspace_id, change.workspace, change.effect, change.what)
            found.setdefault(key, change)
    return tuple(sorted(found.values(), key=_order))


def _order(change: AccessChange) -> tuple[Any, ...]:
    place = "" if change.workspace is None else workspace_key(change.workspace)
    return (person_key(change.person), place, EFFECT_ORDER[change.effect], change.what)


def _of(
    action: WriteAction,
    site: _Site,
    replaced: dict[str, int],
    fields: dict[str, tuple[FieldChange, ...]],
) -> Iterator[AccessChange]:
    if isinstance(action, WorkspaceJoin | WorkspaceLeave) and not site.admin(action.user):
        effect: Effect = "gains" if action.adds else "loses"
        cause: Cause = "member added" if action.adds else "member removed"
        for target in action.targets:
            yield site.change(action.user, target.name, target.id, effect, cause)
    elif isinstance(action, WorkspaceAdd):
        for name in action.names:
            if name in replaced:
                yield from _replaced(name, replaced[name], action.users, fields.get(name, ()), site)
            else:
                yield from _everyone(name, None, action.users, site, "gains", "workspace created")
    elif isinstance(action, WorkspaceDelete) and action.reason == "prune":
        members = site.members(action.workspace_id)
        yield from _everyone(
            action.name, action.workspace_id, members, site, "loses", "workspace deleted"
        )
    elif isinstance(action, UserAdd) and action.settings.admin:
        user = AfterApply(action.username)
        yield site.change(user, None, None, "gains", "administrator created", via="administrator")
    elif isinstance(action, UserDelete):
        yield from _deleted_user(action.user_id, site)


def _everyone(
    name: str,
    workspace_id: int | None,
    members: Iterable[UserKey],
    site: _Site,
    effect: Effect,
    cause: Cause,
) -> Iterator[AccessChange]:
    """Members and every administrator, for a workspace that appears or disappears."""
    for user in members:
        if not site.admin(user):
            yield site.change(user, name, workspace_id, effect, cause)
    for admin in site.admins():
        yield site.change(admin, name, workspace_id, effect, cause, via="administrator")


def _replaced(
    name: str,
    old_id: int,
    after: Iterable[UserKey],
    fields: Iterable[FieldChange],
    site: _Site,
) -> Iterator[AccessChange]:
    """Deleted and created again: everyone who reaches the old workspace loses it (its files
    are destroyed), everyone who reaches the new one gains it, and those who stay members
    see its settings change."""
    cause: Cause = "workspace replaced"
    before = site.members(old_id)
    yield from _everyone(name, old_id, before, site, "loses", cause)
    yield from _everyone(name, None, after, site, "gains", cause)
    staying = [u for u in set(before) & set(after) if not site.admin(u)]
    for field in fields:
        for user in sorted(staying):
            yield from _setting(site, user, name, field)


def _setting(site: _Site, user: UserKey, name: str, field: FieldChange) -> Iterator[AccessChange]:
    cause: Cause = "workspace replaced"
    if field.field in ACCESS_SETTINGS:
        effect: Effect = "gains" if field.after else "loses"
        yield site.change(user, name, None, effect, cause, what=field.field)
        return
    if field.field not in ("permissions", "notifications"):
        return
    cause = "override changed"
    if not (isinstance(field.before, tuple) and isinstance(field.after, tuple)):
        detail = f"{value_text(field.before)} -> {value_text(field.after)}"  # turned on or off
        yield site.change(user, name, None, "changes", cause, what=field.field, detail=detail)
        return
    before, after = set(field.before), set(field.after)
    for flag in sorted(after - before):
        yield site.change(user, name, None, "gains", cause, what=flag)
    for flag in sorted(before - after):
        yield site.change(user, name, None, "loses", cause, what=flag)


def _deleted_user(user_id: int, site: _Site) -> Iterator[AccessChange]:
    """Every workspace the user reaches: all of them for an administrator, else those
    ``user_info`` listed (read for every user a plan may delete), or failing that those whose
    members this plan read."""
    cause: Cause = "user deleted"
    if site.admin(user_id):
        yield site.change(user_id, None, None, "loses", cause, via="administrator")
        return
    listed = site.live.memberships.get(user_id)
    detail = None
    if listed is None:
        listed = frozenset(ws.id for ws in site.live.workspaces if user_id in (ws.users or ()))
        detail = "only the workspaces whose members this plan read"
    names = {ws.id: ws.name for ws in site.live.workspaces}
    for workspace_id in sorted(listed):
        name = names.get(workspace_id, f"#{workspace_id}")
        yield site.change(user_id, name, workspace_id, "loses", cause, detail=detail)
