"""Connections to the PostgreSQL state database, and its errors in words a user can act on.

Connections are plain psycopg 3 connections in autocommit mode, and every piece of work runs
in an explicit ``BEGIN … COMMIT`` (``transaction``), with ``prepare_threshold=None``: nothing
is kept in the session between transactions (no prepared statements, ``SET``, temporary
tables or session advisory locks), so the backend works through a pooler in transaction mode
(PgBouncer, RDS Proxy, Supavisor) as well as directly.

The password is libpq's business: in the URL, ``PGPASSWORD``, ``~/.pgpass`` or a service file.
It never appears in a message: ``display`` is the URL without it, and libpq's own error text
is scrubbed of any password the tool could know of before it is shown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from reconciler.api.config import MASK
from reconciler.errors import StateError
from reconciler.state.backend import StateLocation
from reconciler.state.leases import say
from reconciler.state.postgres_schema import ensure_schema, installed_version

Connection = psycopg.Connection[tuple[Any, ...]]

DEFAULT_SCHEMA = "reconciler"
CONNECTION_DEFAULTS = {
    "connect_timeout": "10",
    # A holder whose network vanished notices within ~25 s instead of the kernel's hours.
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "application_name": "site-reconciler",
}
IDLE_IN_TRANSACTION_SECONDS = 15
TRANSACTION_SETTINGS = sql.SQL(
    "SELECT set_config('idle_in_transaction_session_timeout', "
    f"'{IDLE_IN_TRANSACTION_SECONDS}s', true), set_config('synchronous_commit', 'on', true)"
)
"""Two settings for each transaction only (``is_local``: safe behind a pooler):

* A runner that vanishes in the middle of a transaction would hold its row locks (the lease
  row among them) until the server's TCP keepalive noticed, hours later by default; the
  server ends such a session after this long instead.
* ``synchronous_commit = on``: a server configured with it off acknowledges a commit before
  it is on disk, and a crash a moment later loses it. A journal entry lost that way is a
  write the next apply does not know it may have made (a group created twice); a lost save,
  records that forget what they created. The tool's commits are few and small: it asks for
  durable ones whatever the server's default."""
CONNECTION_HINT = (
    "Check the URL, that the server runs and accepts connections from here, and the "
    "credentials (PGPASSWORD, ~/.pgpass or a service file)."
)


class Database:
    """Where the records live in PostgreSQL: the connection string, schema and statements."""

    def __init__(self, location: StateLocation) -> None:
        self.display = location.display
        self.schema = location.schema or DEFAULT_SCHEMA
        try:
            given = conninfo_to_dict(location.target)
        except psycopg.ProgrammingError as exc:
            raise StateError(
                f"The PostgreSQL location {self.display} is not a valid connection URL.",
                hint="Write it as postgresql://USER@HOST:PORT/DATABASE?schema=NAME.",
            ) from exc
        defaults = {k: v for k, v in CONNECTION_DEFAULTS.items() if k not in given}
        self._conninfo = make_conninfo(location.target, **defaults)
        self._secrets = [
            str(value)
            for value in (given.get("password"), os.environ.get("PGPASSWORD"))
            if value and len(str(value)) >= 3
        ]
        self._statements: dict[str, sql.Composed] = {}
        self._schema_ready = False
        self.no_tables: StateError | None = None
        """Set when the tables do not exist yet and this role may not create them (a
        read-only reviewer before the first apply): what a write then says."""

    def q(self, text: str) -> sql.Composed:
        """``text`` with ``{s}`` standing for the schema, quoted as an identifier."""
        statement = self._statements.get(text)
        if statement is None:
            statement = sql.SQL(text).format(s=sql.Identifier(self.schema))
            self._statements[text] = statement
        return statement

    def scrub(self, text: str) -> str:
        """``text`` without any password the tool knows of."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def error(self, exc: psycopg.Error, action: str, *, hint: str | None = None) -> StateError:
        """One message for a database failure met while trying to ``action`` (``hint``: what
        to do, when the caller knows better than the kind of failure)."""
        detail = self.scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else "")
        detail = detail or type(exc).__name__
        if isinstance(exc, psycopg.OperationalError):
            return StateError(
                f"Cannot {action}: the PostgreSQL state database {self.display} could not be "
                f"reached ({detail}).",
                hint=CONNECTION_HINT + " A save cut short may or may not have happened: "
                "run the command again, it starts from the newest records.",
            )
        if hint is None and isinstance(exc, psycopg.errors.InsufficientPrivilege):
            hint = (
                f"This database role may not change the records in schema {self.schema!r} "
                "(a reviewer's read-only role, docs/ci.md, reads them only): run the command "
                "with the writer's role, or have the DBA grant this one what it lacks."
            )
        return StateError(
            f"Cannot {action}: the PostgreSQL state database {self.display} refused ({detail}).",
            hint=hint or "The database server's log says more.",
        )

    def connect(self) -> Connection:
        """A new connection with the schema in place; ``StateError`` when it cannot be had."""
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True, prepare_threshold=None)
        except psycopg.Error as exc:
            raise self.error(exc, "open the records") from None
        if not self._schema_ready:
            try:
                ensure_schema(conn, self.schema)
            except psycopg.errors.InsufficientPrivilege as exc:
                hint = _creation_hint(conn, self.schema)
                if _layout_of(conn, self.schema) != 0:
                    conn.close()
                    raise self.error(exc, "prepare the records' tables", hint=hint) from None
                # Nothing was ever saved here: there are no records to read, and a reviewer's
                # read-only role is right not to create them. A write says why it cannot.
                self.no_tables = self.error(exc, "create the records' tables", hint=hint)
                say(
                    f"The records' tables do not exist yet in schema {self.schema!r} of "
                    f"{self.display}, and this database role may not create them: reading "
                    "them as empty (the first apply, with the writer's role, creates them)."
                )
            except psycopg.Error as exc:
                conn.close()
                raise self.error(exc, "prepare the records' tables") from None
            except BaseException:
                conn.close()
                raise
            self._schema_ready = True
        return conn

    @contextmanager
    def transaction(self, conn: Connection, action: str) -> Iterator[Connection]:
        """One ``BEGIN … COMMIT``; a database error rolls it back and becomes ``StateError``."""
        try:
            with conn.transaction():
                conn.execute(TRANSACTION_SETTINGS)
                yield conn
        except psycopg.Error as exc:
            raise self.error(exc, action) from None

    def execute_alone(
        self, conn: Connection, action: str, query: sql.Composed, params: list[Any]
    ) -> int:
        """One statement in a transaction of its own; the number of rows it touched."""
        try:
            return conn.execute(query, params).rowcount
        except psycopg.Error as exc:
            raise self.error(exc, action) from None


def _creation_hint(conn: Connection, schema: str) -> str:
    """What to ask for when this role may not make the records' tables: the schema made for
    it when there is none; when there is one, its owner's role (creating it again, the DBA's
    step that is done, would change nothing)."""
    try:
        row = conn.execute(
            "SELECT pg_get_userbyid(nspowner), current_user FROM pg_namespace WHERE nspname = %s",
            [schema],
        ).fetchone()
    except psycopg.Error:
        row = None
    if row is None:
        return (
            f"Let the database role create and use the schema {schema!r}, or have it created "
            f"for it: CREATE SCHEMA {schema} AUTHORIZATION <role>."
        )
    owner, role = row
    return (
        f"The schema {schema!r} belongs to {owner}, and {role} may not create tables in it: "
        f"the first run with {owner}'s credentials creates them (docs/ci.md: the writer's "
        f"role), or the DBA lets {role} do it: GRANT CREATE ON SCHEMA {schema} TO {role}."
    )


def _layout_of(conn: Connection, schema: str) -> int | None:
    """The records' layout version in ``schema``: 0 when nothing was ever saved there, None
    when this role cannot even tell."""
    try:
        return installed_version(conn, schema)
    except psycopg.Error:
        return None
