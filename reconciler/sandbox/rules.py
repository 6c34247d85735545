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


def name_problem(name: str, *, length_in_bytes: bool = False) -> str | None:
    """Why ``name`` cannot be a workspace name, or None if it can.

    The 40 of the reference are counted in characters unless ``length_in_bytes`` (the
    ``name_length_in_bytes`` switch: a site that counts UTF-8 bytes, as a byte-sized column
    would).
    """
    if not name.strip():
        return "A workspace name is empty."
    length = len(name.encode("utf-8")) if length_in_bytes else len(name)
    if length > MAX_WORKSPACE_NAME_LENGTH:
        unit = "bytes (UTF-8)" if length_in_bytes else "characters"
        return (
            f"The workspace name {name!r} has {length} {unit}; at most "
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
