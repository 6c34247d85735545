"""The live model made of what the read calls answered: the workspaces from their list entry
and details, and the users a read named in passing (``LiveReader``'s)."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.api.answers import LocationEntry, WorkspaceEntry, WorkspaceInfo
from reconciler.model import LiveUser, LiveWorkspace


def with_named_users(
    users: tuple[LiveUser, ...],
    locations: Iterable[LocationEntry],
    details: Iterable[WorkspaceInfo],
) -> tuple[LiveUser, ...]:
    """``users`` and every other user a read named: the users ``users_location_access``
    listed and the members ``workspace_info`` listed, each with the username and e-mail it
    gave. A scoped plan resolves references from them without a search (``core/users.py``,
    ``UserDirectory.names``); what these reads do not say (whether a member is an
    administrator, or active) stays unknown. ``users`` win over a read's partial entry."""
    named: dict[int, LiveUser] = {}
    for loc in locations:
        if not loc.is_group:
            named[loc.id] = LiveUser(loc.id, loc.name, loc.email or "", admin=loc.admin)
    for info in details:
        for member in info.users:
            if member.id not in named:
                named[member.id] = LiveUser(
                    member.id, member.username or "", member.email or "", admin=None
                )
    known = {user.id for user in users}
    return users + tuple(user for user_id, user in named.items() if user_id not in known)


def live_workspaces(
    entries: list[WorkspaceEntry], details: dict[int, WorkspaceInfo]
) -> tuple[LiveWorkspace, ...]:
    """Each listed workspace, with its members and overrides where its details were read."""
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
