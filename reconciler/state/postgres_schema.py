"""The PostgreSQL backend's tables, created by the tool itself inside one schema.

One database can serve many teams: each location names its schema (``?schema=NAME``, default
``reconciler``), and every statement names its tables with that schema explicitly, never
through ``search_path`` (a ``SET`` would be session state, which a pooler in transaction mode
does not keep). ``schema_version`` holds the layout's version so that a later release can
migrate it; ``MIGRATIONS[n]`` takes a schema from version n to n+1.

Creation is safe when many runners start at once: it runs in one transaction under a
transaction-scoped advisory lock (``pg_advisory_xact_lock``), which PostgreSQL drops at commit,
so it works through a pooler and never outlives the transaction.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from reconciler.errors import StateError

SCHEMA_VERSION = 1

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS {s}.versions (
            site text NOT NULL,
            version integer NOT NULL CHECK (version > 0),
            saved_at timestamptz NOT NULL,
            saved_by text NOT NULL,
            summary text NOT NULL,
            plan text,
            records jsonb NOT NULL,
            PRIMARY KEY (site, version)
        )""",
        """CREATE TABLE IF NOT EXISTS {s}.journal (
            site text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            entry jsonb NOT NULL,
            PRIMARY KEY (site, seq)
        )""",
        """CREATE TABLE IF NOT EXISTS {s}.leases (
            site text PRIMARY KEY,
            token bigint NOT NULL,
            holder jsonb NOT NULL,
            lease_seconds double precision NOT NULL,
            expires_at timestamptz NOT NULL,
            released boolean NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS {s}.plan_keys (
            site text PRIMARY KEY,
            key bytea NOT NULL
        )""",
    ),
)
"""``MIGRATIONS[0]`` creates version 1. ``leases`` keeps one row per site for good: its
``token`` is the fencing counter and only grows."""


def _statement(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


def installed_version(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> int:
    table = sql.Identifier(schema).as_string(conn) + ".schema_version"
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [table]).fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute(_statement("SELECT max(version) FROM {s}.schema_version", schema))
    version = (found.fetchone() or (None,))[0]
    return int(version) if isinstance(version, int) else 0


def schema_exists(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> bool:
    """Whether ``schema`` is there. ``CREATE SCHEMA IF NOT EXISTS`` is not asked when it is:
    PostgreSQL checks ``CREATE`` on the database before it looks, so a writer whose schema a
    DBA made for it (docs/ci.md) was refused "permission denied for database" (issue 42)."""
    found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema]).fetchone()
    return found is not None


CREATION_RACES = (
    psycopg.errors.UniqueViolation,
    psycopg.errors.DuplicateObject,
    psycopg.errors.DuplicateSchema,
    psycopg.errors.DuplicateTable,
)
"""What a runner that waited on the advisory lock may still meet: the lock does not make it
re-read the catalogue, so a schema another runner just created can look absent for one more
statement. Trying again sees it."""


def ensure_schema(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> None:
    """Create or migrate ``schema`` to ``SCHEMA_VERSION``; at most one runner does the work."""
    for attempt in range(3):
        try:
            _ensure_schema(conn, schema)
            return
        except CREATION_RACES:
            if attempt == 2:
                raise


def _ensure_schema(conn: psycopg.Connection[tuple[object, ...]], schema: str) -> None:
    with conn.transaction():
        installed = installed_version(conn, schema)
    if installed == SCHEMA_VERSION:
        return
    with conn.transaction():
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"site-reconciler schema {schema}"],
        )
        if not schema_exists(conn, schema):
            conn.execute(_statement("CREATE SCHEMA IF NOT EXISTS {s}", schema))
        conn.execute(
            _statement("CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer)", schema)
        )
        installed = installed_version(conn, schema)  # another runner may have done it
        if installed > SCHEMA_VERSION:
            raise StateError(
                f"The records in schema {schema!r} were laid out by a newer release of the "
                f"tool (layout {installed}; this one knows {SCHEMA_VERSION}).",
                hint="Upgrade site-reconciler on this runner.",
            )
        for steps in MIGRATIONS[installed:]:
            for step in steps:
                conn.execute(_statement(step, schema))
        if installed < SCHEMA_VERSION:
            conn.execute(_statement("DELETE FROM {s}.schema_version", schema))
            conn.execute(
                _statement("INSERT INTO {s}.schema_version (version) VALUES (%s)", schema),
                [SCHEMA_VERSION],
            )
