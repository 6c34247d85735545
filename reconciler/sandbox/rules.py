"""The reference's rules for workspaces, shared by ``workspace_add`` and the seed loader.

A seed describes a site that already exists, and that site could only have been built through
the same rules, so the seed is held to them too.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.sandbox.params import has_control_characters
from reconciler.spec import MAX_WORKSPACE_NAME_LENGTH, NAME_LIST_SEPARATOR, with_implied_flags

NO_PERMISSION_FLAG = (
    "workspace_override_permissions is 1, so at least one workspace_override_* permission "
    "flag must be 1."
)


def name_problem(name: str) -> str | None:
    """Why ``name`` (already stripped) cannot be a workspace name, or None if it can."""
    if not name:
        return "A workspace name is empty."
    if len(name) > MAX_WORKSPACE_NAME_LENGTH:
        return (
            f"The workspace name {name!r} has {len(name)} characters; at most "
            f"{MAX_WORKSPACE_NAME_LENGTH} are allowed."
        )
    if NAME_LIST_SEPARATOR in name:
        return f"The workspace name {name!r} contains a comma, which separates names."
    if has_control_characters(name):
        return f"The workspace name {name!r} contains control characters."
    return None


def stored_overrides(
    override_permissions: bool,
    permissions: Iterable[str],
    override_notifications: bool,
    notifications: Iterable[str],
) -> tuple[frozenset[str], frozenset[str]]:
    """The flags the site stores: batch flags force their base flag on, and a flag without
    its override switch has no effect (stored as off)."""
    stored_permissions = (
        with_implied_flags(frozenset(permissions)) if override_permissions else frozenset()
    )
    stored_notifications = frozenset(notifications) if override_notifications else frozenset()
    return stored_permissions, stored_notifications
