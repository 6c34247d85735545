"""The sandbox's SQLite schema and the conversion of its rows into ``rows`` values.

Kept apart from ``store`` so that the queries read on their own. ``connect`` also upgrades a
database file written by an older sandbox (``--db`` keeps state across versions): columns
added since are created with their defaults instead of failing every query on the table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from reconciler.sandbox.rows import ListedUser, UserRow, WorkspaceRow, decode_flags

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL UNIQUE, email TEXT NOT NULL,
    first_name TEXT NOT NULL, last_name TEXT NOT NULL, organization TEXT, phone TEXT NOT NULL,
    admin INTEGER NOT NULL, active INTEGER NOT NULL,
    permissions TEXT NOT NULL, notifications TEXT NOT NULL,
    api_key TEXT UNIQUE, signing_key TEXT,
    created INTEGER NOT NULL, modified INTEGER NOT NULL,
    phone_ext TEXT, reset_password INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS workspaces (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL, path TEXT NOT NULL, root_access INTEGER NOT NULL,
    override_permissions INTEGER NOT NULL, override_notifications INTEGER NOT NULL,
    permissions TEXT NOT NULL, notifications TEXT NOT NULL,
    created INTEGER NOT NULL, modified INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS users_by_last_name ON users (last_name COLLATE NOCASE, id);
CREATE INDEX IF NOT EXISTS workspaces_by_path ON workspaces (path);
CREATE TABLE IF NOT EXISTS workspace_members (
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (workspace_id, user_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS workspace_members_by_user ON workspace_members (user_id);
CREATE TABLE IF NOT EXISTS user_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS group_members (
    group_id INTEGER NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users (id),
    PRIMARY KEY (group_id, user_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS group_members_by_user ON group_members (user_id);
"""

_ADDED_USER_COLUMNS = {
    "phone_ext": "phone_ext TEXT",
    "reset_password": "reset_password INTEGER NOT NULL DEFAULT 0",
}
"""Columns of ``users`` newer than the first sandbox release, with their definitions."""

USER_COLUMNS = (
    "id, username, email, first_name, last_name, organization, phone, phone_ext, admin, "
    "active, reset_password, permissions, notifications, created, modified"
)
LISTED_USER_COLUMNS = ", ".join(ListedUser._fields)
"""The columns of ``rows.ListedUser``, in its order (its fields are named as the columns)."""
WORKSPACE_COLUMNS = (
    "id, name, path, root_access, override_permissions, override_notifications, "
    "permissions, notifications, created, modified"
)


def connect(path: str | None) -> sqlite3.Connection:
    """A connection to the database at ``path`` (None: in memory) with the current schema."""
    # check_same_thread=False: the app may be built in one thread and served in another;
    # calls are still serialised because each one runs on the single event loop.
    conn = sqlite3.connect(path or ":memory:", check_same_thread=False)
    if path:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.executescript(SCHEMA)
    present = {str(row[1]) for row in conn.execute("PRAGMA table_info(users)")}
    with conn:
        for column, definition in _ADDED_USER_COLUMNS.items():
            if column not in present:
                conn.execute(f"ALTER TABLE users ADD COLUMN {definition}")
    return conn


def user_row(row: Sequence[object]) -> UserRow:
    """A ``UserRow`` from the values of ``USER_COLUMNS``, in that order."""
    return UserRow(
        id=int(row[0]),  # type: ignore[call-overload]
        username=str(row[1]),
        email=str(row[2]),
        first_name=str(row[3]),
        last_name=str(row[4]),
        organization=None if row[5] is None else str(row[5]),
        phone=str(row[6]),
        phone_ext=None if row[7] is None else str(row[7]),
        admin=bool(row[8]),
        active=bool(row[9]),
        reset_password=bool(row[10]),
        permissions=decode_flags(str(row[11])),
        notifications=decode_flags(str(row[12])),
        created=int(row[13]),  # type: ignore[call-overload]
        modified=int(row[14]),  # type: ignore[call-overload]
    )


def workspace_row(row: Sequence[object]) -> WorkspaceRow:
    """A ``WorkspaceRow`` from the values of ``WORKSPACE_COLUMNS``, in that order."""
    return WorkspaceRow(
        id=int(row[0]),  # type: ignore[call-overload]
        name=str(row[1]),
        path=str(row[2]),
        root_access=bool(row[3]),
        override_permissions=bool(row[4]),
        override_notifications=bool(row[5]),
        permissions=decode_flags(str(row[6])),
        notifications=decode_flags(str(row[7])),
        created=int(row[8]),  # type: ignore[call-overload]
        modified=int(row[9]),  # type: ignore[call-overload]
    )
