"""The emulated site's state in SQLite: one connection, small queries, one transaction per write.

Why SQLite and one connection: the state must survive a restart (``--db PATH``) and stay
consistent under concurrent calls. Every handler runs on the event loop without awaiting
between its reads and its writes, so a single connection serialises calls for free, and
``with self._conn`` makes each write all-or-nothing. IDs use ``AUTOINCREMENT`` so a deleted
workspace's or group's ID is never handed out again, as on a real site: a recorded ID that
comes back pointing at another object would mislead a reconciler.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from reconciler.sandbox.rows import (
    GroupRow,
    NewGroup,
    NewUser,
    NewWorkspace,
    UserRow,
    WorkspaceRow,
    decode_flags,
    encode_flags,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL UNIQUE, email TEXT NOT NULL,
    first_name TEXT NOT NULL, last_name TEXT NOT NULL, organization TEXT, phone TEXT NOT NULL,
    admin INTEGER NOT NULL, active INTEGER NOT NULL,
    permissions TEXT NOT NULL, notifications TEXT NOT NULL,
    api_key TEXT UNIQUE, signing_key TEXT,
    created INTEGER NOT NULL, modified INTEGER NOT NULL);
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

_USER_COLUMNS = (
    "id, username, email, first_name, last_name, organization, phone, admin, active, "
    "permissions, notifications, created, modified"
)
_WORKSPACE_COLUMNS = (
    "id, name, path, root_access, override_permissions, override_notifications, "
    "permissions, notifications, created, modified"
)
USER_SORT_COLUMNS = {
    "lastName": "last_name",
    "firstName": "first_name",
    "email": "email",
    "username": "username",
    "created": "created",
    "modified": "modified",
}
"""``user_list`` ``sort_by`` field names and the column each one sorts by."""


def _user(row: Sequence[object]) -> UserRow:
    return UserRow(
        id=int(row[0]),  # type: ignore[call-overload]
        username=str(row[1]),
        email=str(row[2]),
        first_name=str(row[3]),
        last_name=str(row[4]),
        organization=None if row[5] is None else str(row[5]),
        phone=str(row[6]),
        admin=bool(row[7]),
        active=bool(row[8]),
        permissions=decode_flags(str(row[9])),
        notifications=decode_flags(str(row[10])),
        created=int(row[11]),  # type: ignore[call-overload]
        modified=int(row[12]),  # type: ignore[call-overload]
    )


def _workspace(row: Sequence[object]) -> WorkspaceRow:
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


def _marks(count: int) -> str:
    return ",".join("?" * count)


class Store:
    """All reads and writes of the sandbox's state. Not thread-safe: use it from one loop."""

    def __init__(self, path: str | None = None) -> None:
        # check_same_thread=False: the app may be built in one thread and served in another;
        # calls are still serialised because each one runs on the single event loop.
        self._conn = sqlite3.connect(path or ":memory:", check_same_thread=False)
        if path:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        self._conn.close()

    # ---- lifecycle -------------------------------------------------------------------

    def is_new(self) -> bool:
        """True until a seed has been applied (or any user exists): seeds apply only then."""
        marker = self._conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone()
        return marker is None and self._count("users") == 0

    def counts(self) -> dict[str, int]:
        return {
            "users": self._count("users"),
            "workspaces": self._count("workspaces"),
            "groups": self._count("user_groups"),
        }

    def _count(self, table: str) -> int:
        return int(self._conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def load(
        self, users: Iterable[NewUser], workspaces: Iterable[NewWorkspace],
        groups: Iterable[NewGroup], now: int,
    ) -> None:  # fmt: skip
        """Insert a whole seed in one transaction with ``executemany`` (fast for big sites)."""
        with self._conn:
            self._conn.executemany(
                f"INSERT INTO users ({_USER_COLUMNS}, api_key, signing_key) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        u.id, u.username, u.email, u.first_name, u.last_name, u.organization,
                        u.phone, int(u.admin), int(u.active), encode_flags(u.permissions),
                        encode_flags(u.notifications), now, now, u.api_key, u.signing_key,
                    )
                    for u in users
                ),
            )  # fmt: skip
            self._insert_workspaces(list(workspaces), now)
            self._insert_groups(list(groups), now)
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('seeded', '1')")

    # ---- users -----------------------------------------------------------------------

    def credentials(self, api_key: str) -> tuple[UserRow, str] | None:
        """The user owning ``api_key`` and the key their signatures are made with."""
        row = self._conn.execute(
            f"SELECT {_USER_COLUMNS}, signing_key FROM users WHERE api_key = ?", (api_key,)
        ).fetchone()
        return None if row is None else (_user(row), str(row[13]))

    def user(self, user_id: int) -> UserRow | None:
        row = self._conn.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,)
        ).fetchone()
        return None if row is None else _user(row)

    def users(self) -> list[UserRow]:
        rows = self._conn.execute(f"SELECT {_USER_COLUMNS} FROM users ORDER BY id")
        return [_user(row) for row in rows]

    def missing(self, kind: str, ids: Sequence[int]) -> list[int]:
        """Those of ``ids`` with no row in ``kind`` ("users", "workspaces" or "user_groups")."""
        if kind not in ("users", "workspaces", "user_groups"):
            raise ValueError(kind)
        found = {
            row[0]
            for row in self._conn.execute(
                f"SELECT id FROM {kind} WHERE id IN ({_marks(len(ids))})", tuple(ids)
            )
        }
        return [i for i in ids if i not in found]

    def user_page(
        self, *, where: Sequence[tuple[str, object]], order: str, descending: bool,
        offset: int, limit: int,
    ) -> list[UserRow]:  # fmt: skip
        """One page of ``user_list``: ``where`` holds trusted SQL snippets with one value each."""
        clause = " AND ".join(sql for sql, _ in where) or "1"
        direction = "DESC" if descending else "ASC"
        rows = self._conn.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE {clause} "
            f"ORDER BY {order} COLLATE NOCASE {direction}, id {direction} LIMIT ? OFFSET ?",
            (*(value for _, value in where), limit, offset),
        )
        return [_user(row) for row in rows]

    # ---- workspaces ------------------------------------------------------------------

    def workspace(self, workspace_id: int) -> WorkspaceRow | None:
        row = self._conn.execute(
            f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
        ).fetchone()
        return None if row is None else _workspace(row)

    def workspaces(self) -> list[WorkspaceRow]:
        """Every workspace with all its settings, in ID order (the state dump)."""
        rows = self._conn.execute(f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces ORDER BY id")
        return [_workspace(row) for row in rows]

    def workspace_names(self, member: int | None = None) -> list[tuple[int, str, str]]:
        """(id, name, path) of every workspace, or of ``member``'s: the cheap form for lists."""
        if member is None:
            rows = self._conn.execute("SELECT id, name, path FROM workspaces ORDER BY id")
        else:
            rows = self._conn.execute(
                "SELECT id, name, path FROM workspaces WHERE id IN "
                "(SELECT workspace_id FROM workspace_members WHERE user_id = ?) ORDER BY id",
                (member,),
            )
        return [(int(row[0]), str(row[1]), str(row[2])) for row in rows]

    def workspaces_at(self, paths: Iterable[str]) -> list[WorkspaceRow]:
        """Workspaces whose path is one of ``paths`` (an index lookup, not a scan)."""
        wanted = tuple(set(paths))
        rows = self._conn.execute(
            f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE path IN ({_marks(len(wanted))}) "
            "ORDER BY id",
            wanted,
        )
        return [_workspace(row) for row in rows]

    def workspace_members(self, workspace_ids: Sequence[int]) -> list[UserRow]:
        """The users joined to any of ``workspace_ids``, each once, in ID order."""
        rows = self._conn.execute(
            f"SELECT {_USER_COLUMNS} FROM users WHERE id IN (SELECT user_id FROM "
            f"workspace_members WHERE workspace_id IN ({_marks(len(workspace_ids))})) ORDER BY id",
            tuple(workspace_ids),
        )
        return [_user(row) for row in rows]

    def add_workspaces(self, workspaces: Sequence[NewWorkspace], now: int) -> list[int]:
        with self._conn:
            return self._insert_workspaces(workspaces, now)

    def _insert_workspaces(self, workspaces: Sequence[NewWorkspace], now: int) -> list[int]:
        ids = []
        for ws in workspaces:
            cursor = self._conn.execute(
                f"INSERT INTO workspaces ({_WORKSPACE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    ws.id, ws.name, ws.path, int(ws.root_access), int(ws.override_permissions),
                    int(ws.override_notifications), encode_flags(ws.permissions),
                    encode_flags(ws.notifications), now, now,
                ),
            )  # fmt: skip
            ids.append(int(cursor.lastrowid or 0))
        self._conn.executemany(
            "INSERT OR IGNORE INTO workspace_members VALUES (?, ?)",
            (
                (ws_id, user)
                for ws_id, ws in zip(ids, workspaces, strict=True)
                for user in ws.members
            ),
        )
        return ids

    def delete_workspace(self, workspace_id: int) -> None:
        """Remove the workspace and its memberships (the files it held are not emulated)."""
        with self._conn:
            self._conn.execute(
                "DELETE FROM workspace_members WHERE workspace_id = ?", (workspace_id,)
            )
            self._conn.execute("DELETE FROM workspaces WHERE id = ?", (workspace_id,))

    def join_workspaces(self, user_id: int, workspace_ids: Sequence[int], now: int) -> None:
        """Join ``user_id`` to each workspace; already joined is no change (``modified`` kept)."""
        with self._conn:
            for ws_id in workspace_ids:
                cursor = self._conn.execute(
                    "INSERT OR IGNORE INTO workspace_members VALUES (?, ?)", (ws_id, user_id)
                )
                if cursor.rowcount:
                    self._touch(ws_id, now)

    def leave_workspaces(self, user_id: int, workspace_ids: Sequence[int], now: int) -> None:
        """Remove ``user_id`` from each workspace; not a member is no change."""
        with self._conn:
            for ws_id in workspace_ids:
                cursor = self._conn.execute(
                    "DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?",
                    (ws_id, user_id),
                )
                if cursor.rowcount:
                    self._touch(ws_id, now)

    def _touch(self, workspace_id: int, now: int) -> None:
        self._conn.execute("UPDATE workspaces SET modified = ? WHERE id = ?", (now, workspace_id))

    # ---- user groups -----------------------------------------------------------------

    def groups(self) -> list[GroupRow]:
        rows = self._conn.execute("SELECT id, name FROM user_groups ORDER BY id")
        return [GroupRow(int(row[0]), str(row[1])) for row in rows]

    def add_group(self, group: NewGroup, now: int) -> int:
        with self._conn:
            return self._insert_groups([group], now)[0]

    def _insert_groups(self, groups: Sequence[NewGroup], now: int) -> list[int]:
        ids = []
        for group in groups:
            cursor = self._conn.execute(
                "INSERT INTO user_groups (id, name, created) VALUES (?, ?, ?)",
                (group.id, group.name, now),
            )
            ids.append(int(cursor.lastrowid or 0))
        self._conn.executemany(
            "INSERT OR IGNORE INTO group_members VALUES (?, ?)",
            ((gid, user) for gid, group in zip(ids, groups, strict=True) for user in group.members),
        )
        return ids

    def delete_group(self, group_id: int) -> None:
        with self._conn:
            self._conn.execute("DELETE FROM group_members WHERE group_id = ?", (group_id,))
            self._conn.execute("DELETE FROM user_groups WHERE id = ?", (group_id,))

    def join_groups(self, user_id: int, group_ids: Sequence[int]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR IGNORE INTO group_members VALUES (?, ?)",
                ((gid, user_id) for gid in group_ids),
            )

    def leave_groups(self, user_id: int, group_ids: Sequence[int]) -> None:
        with self._conn:
            self._conn.executemany(
                "DELETE FROM group_members WHERE group_id = ? AND user_id = ?",
                ((gid, user_id) for gid in group_ids),
            )

    # ---- memberships for the state dump ----------------------------------------------

    def workspace_member_ids(self) -> dict[int, list[int]]:
        return self._pairs("SELECT workspace_id, user_id FROM workspace_members")

    def group_member_ids(self) -> dict[int, list[int]]:
        return self._pairs("SELECT group_id, user_id FROM group_members")

    def _pairs(self, sql: str) -> dict[int, list[int]]:
        result: dict[int, list[int]] = {}
        for owner, user in self._conn.execute(sql + " ORDER BY 1, 2"):
            result.setdefault(int(owner), []).append(int(user))
        return result
