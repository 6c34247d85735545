"""The sandbox's records as read from SQLite: plain frozen values the handlers shape into answers.

Flags are kept as sets of manifest flag keys (``reconciler.spec``) so that the rules of the
reference (implied flags, override switches) are written in one vocabulary; only the codec
layer turns them into the API's camel-case 0/1 fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

DEFAULT_USER_PERMISSIONS: frozenset[str] = frozenset({"upload_files", "download_files"})
"""Base permissions of a user whose seed entry gives none (a sandbox choice, see README)."""


@dataclass(frozen=True, slots=True)
class UserRow:
    """A site user. The signing key is deliberately absent: only ``auth`` ever reads it."""

    id: int
    username: str
    email: str
    first_name: str
    last_name: str
    organization: str | None
    phone: str
    phone_ext: str | None
    admin: bool
    active: bool
    reset_password: bool  # created without a password: the site set a temporary one
    permissions: frozenset[str]
    notifications: frozenset[str]
    created: int
    modified: int


class ListedUser(NamedTuple):
    """The fields a listing shows of a user: ``workspace_info``'s members and
    ``users_location_access``'s entries.

    Read alone, not as a whole ``UserRow``: ``users_location_access /`` lists every user of
    the site (5,000 on the large benchmark site), and building whole rows took two thirds of
    that call's 48 ms, on the one event loop every other call waits for.
    """

    id: int
    username: str
    email: str
    first_name: str
    last_name: str
    organization: str | None
    admin: int  # 0 or 1, as stored


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    """A workspace with its settings; overrides are empty sets when their switch is off."""

    id: int
    name: str
    path: str
    root_access: bool
    override_permissions: bool
    override_notifications: bool
    permissions: frozenset[str]
    notifications: frozenset[str]
    created: int
    modified: int


@dataclass(frozen=True, slots=True)
class GroupRow:
    """A user group: the reference knows nothing of it beyond ID, name and members."""

    id: int
    name: str


@dataclass(frozen=True, slots=True)
class NewUserRow:
    """A user to insert (from a seed or ``user_add``); ``id`` None lets SQLite number it."""

    id: int | None
    username: str
    email: str
    first_name: str
    last_name: str
    organization: str | None
    phone: str
    phone_ext: str | None
    admin: bool
    active: bool
    reset_password: bool
    permissions: frozenset[str]
    notifications: frozenset[str]
    api_key: str | None
    signing_key: str | None  # hex SHA-1 of the API secret; the secret itself is never stored


@dataclass(frozen=True, slots=True)
class NewWorkspace:
    """A workspace to insert, with its members (user IDs, in order)."""

    id: int | None
    name: str
    path: str
    root_access: bool
    override_permissions: bool
    override_notifications: bool
    permissions: frozenset[str]
    notifications: frozenset[str]
    members: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NewGroup:
    """A user group to insert, with its members (user IDs, in order)."""

    id: int | None
    name: str
    members: tuple[int, ...]


def encode_flags(flags: frozenset[str]) -> str:
    """Flags as stored: sorted, comma-separated keys (readable in the sqlite3 shell)."""
    return ",".join(sorted(flags))


def decode_flags(text: str) -> frozenset[str]:
    """The inverse of ``encode_flags``."""
    return frozenset(text.split(",")) if text else frozenset()
