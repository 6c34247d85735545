"""What the workspace kind's writes do to access (``WriteAction.access_effects``): members
joining and leaving, a workspace created, deleted or replaced -- replaced being what an access
report then observes: everyone who reached the old workspace (its ID; its files are destroyed)
loses it, everyone who reaches the new one gains it, and those who stay members see its
settings change. A plan does not read people's own permissions (``user_info``), so where a
replacement turns an override on or off, the change is said as
"permissions: (no override) -> ..." rather than flag by flag."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reconciler.access.model import ACCESS_SETTINGS, AccessChange, Cause, Effect
from reconciler.core.actions import AccessView, UserKey
from reconciler.core.changes import FieldChange, value_text


def everyone(
    view: AccessView,
    name: str,
    workspace_id: int | None,
    members: Iterable[UserKey],
    effect: Effect,
    cause: Cause,
) -> Iterator[AccessChange]:
    """Members and every administrator, for a workspace that appears or disappears."""
    for user in members:
        if not view.admin(user):
            yield view.change(user, name, workspace_id, effect, cause)
    for admin in view.admins():
        yield view.change(admin, name, workspace_id, effect, cause, via="administrator")


def replaced(
    view: AccessView,
    name: str,
    old_id: int,
    after: Iterable[UserKey],
    fields: Iterable[FieldChange],
) -> Iterator[AccessChange]:
    """Deleted and created again: the old one lost, the new one gained, by everyone who
    reaches it; the settings of those who stay members."""
    cause: Cause = "workspace replaced"
    before = view.members(old_id)
    yield from everyone(view, name, old_id, before, "loses", cause)
    yield from everyone(view, name, None, after, "gains", cause)
    staying = sorted(u for u in set(before) & set(after) if not view.admin(u))
    for field in fields:
        for user in staying:
            yield from _setting(view, user, name, field)


def _setting(
    view: AccessView, user: UserKey, name: str, field: FieldChange
) -> Iterator[AccessChange]:
    if field.field in ACCESS_SETTINGS:
        effect: Effect = "gains" if field.after else "loses"
        yield view.change(user, name, None, effect, "workspace replaced", what=field.field)
        return
    if field.field not in ("permissions", "notifications"):
        return
    cause: Cause = "override changed"
    if not (isinstance(field.before, tuple) and isinstance(field.after, tuple)):
        detail = f"{value_text(field.before)} -> {value_text(field.after)}"  # turned on or off
        yield view.change(user, name, None, "changes", cause, what=field.field, detail=detail)
        return
    before, after = set(field.before), set(field.after)
    for flag in sorted(after - before):
        yield view.change(user, name, None, "gains", cause, what=flag)
    for flag in sorted(before - after):
        yield view.change(user, name, None, "loses", cause, what=flag)
