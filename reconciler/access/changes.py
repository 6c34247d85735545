"""Who gains and who loses access with a plan: the access delta of its actions.

Computed from the actions the plan will run (the source of truth for what happens), the
plan's changes (a replacement's settings before and after) and the live read (who is a
member now, who is an administrator). Only workspace access is concerned: the API gives
user groups no access to workspaces. An administrator reaches every workspace, so a
membership added or removed for one changes nothing and is not listed; a workspace created or
deleted is gained or lost by every administrator too.

A plan does not read people's own permissions (``user_info``), so where a replacement turns
an override on or off, the change is said as "permissions: (no override) -> ..." rather than
flag by flag.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import ACCESS_SETTINGS, AccessChange, Cause, Effect
from reconciler.engine.actions import (
    AfterApply,
    UserAdd,
    UserDelete,
    UserKey,
    WorkspaceAdd,
    WorkspaceDelete,
    WorkspaceJoin,
    WorkspaceLeave,
    WriteAction,
)
from reconciler.engine.changes import Change, FieldChange
from reconciler.engine.plan import value_text
from reconciler.engine.users import UserDirectory
from reconciler.model import LiveSite, LiveWorkspace

EFFECT_ORDER = {"loses": 0, "gains": 1, "changes": 2}


@dataclass(frozen=True, slots=True)
class _Site:
    """What the delta is judged against: the live read, and the plan's own new users."""

    live: LiveSite
    directory: UserDirectory
    new_admins: frozenset[str]  # usernames this plan creates as administrators

    def admin(self, user: UserKey) -> bool:
        if isinstance(user, AfterApply):
            return user.username in self.new_admins
        found = self.directory.by_id.get(user)
        return bool(found and found.admin)

    def admins(self) -> list[int]:
        return sorted(u.id for u in self.live.users if u.admin)

    def workspace(self, workspace_id: int) -> LiveWorkspace | None:
        return next((ws for ws in self.live.workspaces if ws.id == workspace_id), None)


def plan_access(
    actions: Sequence[WriteAction],
    changes: Iterable[Change],
    live: LiveSite,
    directory: UserDirectory,
) -> tuple[AccessChange, ...]:
    """Every access the plan gives or takes, sorted by person, then workspace."""
    new_admins = frozenset(
        a.username for a in actions if isinstance(a, UserAdd) and a.settings.admin
    )
    site = _Site(live, directory, new_admins)
    replaced = {
        a.name: a.workspace_id
        for a in actions
        if isinstance(a, WorkspaceDelete) and a.reason == "replace"
    }
    fields = {
        c.name: c.changed_values for c in changes if c.kind == "workspace" and c.action == "replace"
    }
    found: dict[tuple[str, str, str, str], AccessChange] = {}
    for action in actions:
        for change in _of(action, site, replaced, fields):
            key = (change.person, change.workspace or "", change.effect, change.what)
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
    label = site.directory.label
    if isinstance(action, WorkspaceJoin | WorkspaceLeave) and not site.admin(action.user):
        effect: Effect = "gains" if action.adds else "loses"
        cause: Cause = "member added" if action.adds else "member removed"
        for target in action.targets:
            yield AccessChange(label(action.user), target.name, effect, "access", "member", cause)
    elif isinstance(action, WorkspaceAdd):
        for name in action.names:
            before = site.workspace(replaced[name]) if name in replaced else None
            if before is None:
                yield from _created(name, action.users, site)
            else:
                yield from _replaced(name, before, action.users, fields.get(name, ()), site)
    elif isinstance(action, WorkspaceDelete) and action.reason == "prune":
        ws = site.workspace(action.workspace_id)
        members = sorted(ws.users or ()) if ws is not None else []
        yield from _everyone(action.name, members, site, "loses", "workspace deleted")
    elif isinstance(action, UserAdd) and action.settings.admin:
        person = label(AfterApply(action.username))
        yield AccessChange(
            person, None, "gains", "access", "administrator", "administrator created"
        )
    elif isinstance(action, UserDelete):
        yield from _deleted_user(action.user_id, site)


def _everyone(
    name: str, members: Iterable[UserKey], site: _Site, effect: Effect, cause: Cause
) -> Iterator[AccessChange]:
    """Members and every administrator, for a workspace that appears or disappears."""
    label = site.directory.label
    for user in members:
        if not site.admin(user):
            yield AccessChange(label(user), name, effect, "access", "member", cause)
    for admin in site.admins():
        yield AccessChange(label(admin), name, effect, "access", "administrator", cause)


def _created(name: str, users: Iterable[UserKey], site: _Site) -> Iterator[AccessChange]:
    return _everyone(name, users, site, "gains", "workspace created")


def _replaced(
    name: str,
    before: LiveWorkspace,
    after: Iterable[UserKey],
    fields: Iterable[FieldChange],
    site: _Site,
) -> Iterator[AccessChange]:
    """Deleted and created again: members joining and leaving, and the settings of those who
    stay (administrators keep reaching it with every permission)."""
    label = site.directory.label
    old, new = set(before.users or ()), set(after)
    cause: Cause = "workspace replaced"
    for user in sorted(new - old, key=label):
        if not site.admin(user):
            yield AccessChange(label(user), name, "gains", "access", "member", cause)
    for user in sorted(old - new):
        if not site.admin(user):
            yield AccessChange(label(user), name, "loses", "access", "member", cause)
    staying = [u for u in old & new if not site.admin(u)]
    for field in fields:
        for user in staying:
            yield from _setting(label(user), name, field)


def _setting(person: str, name: str, field: FieldChange) -> Iterator[AccessChange]:
    if field.field in ACCESS_SETTINGS:
        effect: Effect = "gains" if field.after else "loses"
        yield AccessChange(person, name, effect, field.field, "member", "workspace replaced")
        return
    cause: Cause = "override changed"
    if field.field not in ("permissions", "notifications"):
        return
    if not (isinstance(field.before, tuple) and isinstance(field.after, tuple)):
        detail = f"{value_text(field.before)} -> {value_text(field.after)}"  # turned on or off
        yield AccessChange(person, name, "changes", field.field, "member", cause, detail)
        return
    before, after = set(field.before), set(field.after)
    for flag in sorted(after - before):
        yield AccessChange(person, name, "gains", flag, "member", cause)
    for flag in sorted(before - after):
        yield AccessChange(person, name, "loses", flag, "member", cause)


def _deleted_user(user_id: int, site: _Site) -> Iterator[AccessChange]:
    person = site.directory.label(user_id)
    if site.admin(user_id):
        yield AccessChange(person, None, "loses", "access", "administrator", "user deleted")
        return
    for ws in site.live.workspaces:
        if user_id in (ws.users or ()):
            yield AccessChange(person, ws.name, "loses", "access", "member", "user deleted")
