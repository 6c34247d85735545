"""The emulated site's state in SQLite: one connection, small queries, one transaction per write.

Why SQLite and one connection: the state must survive a restart (``--db PATH``) and stay
consistent under concurrent calls. Every handler runs on the event loop without awaiting
between its reads and its writes, so a single connection serialises calls for free, and
``with self._conn`` makes each write all-or-nothing. IDs use ``AUTOINCREMENT`` so a deleted
workspace's or group's ID is never handed out again, as on a real site: a recorded ID that
comes back pointing at another object would mislead a reconciler.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reconciler.identity import username_key
from reconciler.sandbox.rows import (
    GroupRow,
    ListedUser,
    NewGroup,
    NewUserRow,
    NewWorkspace,
    UserRow,
    WorkspaceRow,
    encode_flags,
)
from reconciler.sandbox.schema import (
    LISTED_USER_COLUMNS,
    USER_COLUMNS,
    WORKSPACE_COLUMNS,
    connect,
    user_row,
    workspace_row,
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


_INSERT_USER = (
    f"INSERT INTO users ({USER_COLUMNS}, api_key, signing_key) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _user_values(u: NewUserRow, now: int) -> tuple[object, ...]:
    """The values of ``_INSERT_USER`` for one new user, created and modified ``now``."""
    return (
        u.id, u.username, u.email, u.first_name, u.last_name, u.organization, u.phone,
        u.phone_ext, int(u.admin), int(u.active), int(u.reset_password),
        encode_flags(u.permissions), encode_flags(u.notifications), now, now, u.api_key,
        u.signing_key,
    )  # fmt: skip


def _marks(count: int) -> str:
    return ",".join("?" * count)


class Store:
    """All reads and writes of the sandbox's state. Not thread-safe: use it from one loop."""

    def __init__(self, path: str | None = None) -> None:
        self._conn = connect(path)

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
        self, users: Iterable[NewUserRow], workspaces: Iterable[NewWorkspace],
        groups: Iterable[NewGroup], now: int,
    ) -> None:  # fmt: skip
        """Insert a whole seed in one transaction with ``executemany`` (fast for big sites)."""
        with self._conn:
            self._conn.executemany(_INSERT_USER, (_user_values(user, now) for user in users))
            self._insert_workspaces(list(workspaces), now)
            self._insert_groups(list(groups), now)
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('seeded', '1')")

    # ---- users -----------------------------------------------------------------------

    def credentials(self, api_key: str) -> tuple[UserRow, str] | None:
        """The user owning ``api_key`` and the key their signatures are made with."""
        row = self._conn.execute(
            f"SELECT signing_key, {USER_COLUMNS} FROM users WHERE api_key = ?", (api_key,)
        ).fetchone()
        return None if row is None else (user_row(row[1:]), str(row[0]))

    def user(self, user_id: int) -> UserRow | None:
        row = self._conn.execute(
            f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", (user_id,)
        ).fetchone()
        return None if row is None else user_row(row)

    def users(self) -> list[UserRow]:
        rows = self._conn.execute(f"SELECT {USER_COLUMNS} FROM users ORDER BY id")
        return [user_row(row) for row in rows]

    def holder_of(self, *, username: str, email: str) -> tuple[UserRow | None, UserRow | None]:
        """The users already holding ``username`` and ``email``, each compared as the site
        compares them (``username_key``: without regard to case or width).

        ``NOCASE`` folds ASCII letters only: it finds the ASCII holders fast, and the few
        values with other characters (a seed's) are compared in full.
        """
        found: list[UserRow | None] = []
        for column, value in (("username", username), ("email", email)):
            row = self._conn.execute(
                f"SELECT {USER_COLUMNS} FROM users WHERE {column} = ? COLLATE NOCASE "
                f"OR {column} GLOB '*[^ -~]*' ORDER BY id",
                (value,),
            )
            holders = (user_row(r) for r in row)
            key = username_key(value)
            found.append(
                next((u for u in holders if username_key(getattr(u, column)) == key), None)
            )
        return found[0], found[1]

    def add_user(self, user: NewUserRow, now: int) -> int:
        """Insert one user; its new ID (never one a deleted user had)."""
        with self._conn:
            cursor = self._conn.execute(_INSERT_USER, _user_values(user, now))
        return int(cursor.lastrowid or 0)

    def edit_user(self, user_id: int, changes: dict[str, object], now: int) -> bool:
        """What an administrator changes in the web app (no API method does): a username,
        the administrator or active flag. False when there is no such user."""
        allowed = {"username": str, "email": str, "admin": bool, "active": bool}
        for column, value in changes.items():
            if column not in allowed or type(value) is not allowed[column]:
                raise ValueError(f"{column}={value!r} cannot be edited")
        with self._conn:
            for column, value in changes.items():
                self._conn.execute(f"UPDATE users SET {column} = ? WHERE id = ?", (value, user_id))
            cursor = self._conn.execute(
                "UPDATE users SET modified = ? WHERE id = ?", (now, user_id)
            )
        return cursor.rowcount == 1

    def delete_user(self, user_id: int, now: int) -> None:
        """Remove a user from every workspace (touching them) and group, then the user."""
        with self._conn:
            self._conn.execute(
                "UPDATE workspaces SET modified = ? WHERE id IN "
                "(SELECT workspace_id FROM workspace_members WHERE user_id = ?)",
                (now, user_id),
            )
            self._conn.execute("DELETE FROM workspace_members WHERE user_id = ?", (user_id,))
            self._conn.execute("DELETE FROM group_members WHERE user_id = ?", (user_id,))
            self._conn.execute("DELETE FROM users WHERE id = ?", (user_id,))

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
            f"SELECT {USER_COLUMNS} FROM users WHERE {clause} "
            f"ORDER BY {order} COLLATE NOCASE {direction}, id {direction} LIMIT ? OFFSET ?",
            (*(value for _, value in where), limit, offset),
        )
        return [user_row(row) for row in rows]

    # ---- workspaces ------------------------------------------------------------------

    def workspace(self, workspace_id: int) -> WorkspaceRow | None:
        row = self._conn.execute(
            f"SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
        ).fetchone()
        return None if row is None else workspace_row(row)

    def workspaces(self) -> list[WorkspaceRow]:
        """Every workspace with all its settings, in ID order (the state dump)."""
        rows = self._conn.execute(f"SELECT {WORKSPACE_COLUMNS} FROM workspaces ORDER BY id")
        return [workspace_row(row) for row in rows]

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
            f"SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE path IN ({_marks(len(wanted))}) "
            "ORDER BY id",
            wanted,
        )
        return [workspace_row(row) for row in rows]

    def listed_users(self, workspace_ids: Sequence[int] | None = None) -> list[ListedUser]:
        """Every user (None), or the users joined to any of ``workspace_ids``, each once, in
        ID order: only the fields a listing shows (``ListedUser``)."""
        if workspace_ids is None:
            rows = self._conn.execute(f"SELECT {LISTED_USER_COLUMNS} FROM users ORDER BY id")
        else:
            rows = self._conn.execute(
                f"SELECT {LISTED_USER_COLUMNS} FROM users WHERE id IN (SELECT user_id FROM "
                f"workspace_members WHERE workspace_id IN ({_marks(len(workspace_ids))})) "
                "ORDER BY id",
                tuple(workspace_ids),
            )
        return list(map(ListedUser._make, rows))

    def add_workspaces(self, workspaces: Sequence[NewWorkspace], now: int) -> list[int]:
        with self._conn:
            return self._insert_workspaces(workspaces, now)

    def _insert_workspaces(self, workspaces: Sequence[NewWorkspace], now: int) -> list[int]:
        ids = []
        for ws in workspaces:
            cursor = self._conn.execute(
                f"INSERT INTO workspaces ({WORKSPACE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
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

    def group_ids_of(self, user_id: int) -> list[int]:
        """The user groups ``user_id`` is a member of, by ID."""
        rows = self._conn.execute(
            "SELECT group_id FROM group_members WHERE user_id = ? ORDER BY 1", (user_id,)
        )
        return [int(group_id) for (group_id,) in rows]

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
