"""The PostgreSQL backend: every site's records in tables of one schema, for teams and CI.

Tables (``postgres_schema``): ``versions`` (every saved version with what history keeps),
``journal`` (apply journal entries in order), ``leases`` (the site lock, ``postgres_lock``) and
``plan_keys``. A save is one transaction: the fence, the compare-and-swap (the newest version
must be the one loaded, and the primary key refuses a second version N+1), the insert and, when
asked, the journal's deletion. So either all of it happened or none did.

psycopg is imported by this module and its siblings only: the directory backend never loads
it. How connections are made (and kept free of session state for poolers) is in
``postgres_db``.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from typing import Any

from reconciler.errors import StateError
from reconciler.state.backend import (
    DEFAULT_LEASE_SECONDS,
    BackendKind,
    ConflictingUpdate,
    Holder,
    Lease,
    RecordStore,
    SaveInfo,
    Snapshot,
    StateLocation,
    VersionInfo,
)
from reconciler.state.documents import (
    check_site,
    dump_stored,
    parse_stamp,
    parse_stored,
    utc_stamp,
)
from reconciler.state.leases import Refusal, check_lease_seconds, lock_lost, wait_for_lock
from reconciler.state.postgres_db import Connection, Database
from reconciler.state.postgres_keys import key_exposure
from reconciler.state.postgres_lock import PostgresLease, fence, take

PLAN_KEY_BYTES = 32
POLL_SECONDS = 0.25


class PostgresRecords(RecordStore):
    """One site's records in a PostgreSQL schema. One connection, opened on first use."""

    kind: BackendKind = "postgresql"

    def __init__(
        self, location: StateLocation, site: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> None:
        self.site = site
        self.location = location.display
        self.lease_seconds = lease_seconds
        self._db = Database(location)
        self._conn: Connection | None = None

    def __repr__(self) -> str:
        return f"PostgresRecords({self.location!r}, {self.site!r})"

    def _connection(self) -> Connection:
        if self._conn is None or self._conn.closed:
            self._conn = self._db.connect()
        return self._conn

    def _nothing_saved(self) -> bool:
        """Whether the tables do not exist yet (and this role may not make them): a reader
        then finds no records, as on a new site."""
        self._connection()
        return self._db.no_tables is not None

    def _writable(self) -> Connection:
        """The connection, for a write; the reason it cannot be, when the tables are missing
        and this role may not create them."""
        conn = self._connection()
        if self._db.no_tables is not None:
            raise self._db.no_tables
        return conn

    def _where(self, version: int | None = None) -> str:
        suffix = f" version {version}" if version is not None else ""
        return f"{self.location} (schema {self._db.schema}, site {self.site}{suffix})"

    def _snapshot(self, row: tuple[Any, ...] | None) -> Snapshot:
        if row is None:
            return Snapshot(0, None)
        version, text = row
        data = parse_stored(text, self._where(version))
        return Snapshot(int(version), check_site(data, self.site, f"at {self._where(version)}"))

    def load(self) -> Snapshot:
        if self._nothing_saved():
            return Snapshot(0, None)
        with self._db.transaction(self._connection(), "read the records") as conn:
            row = conn.execute(
                self._db.q(
                    "SELECT version, records::text FROM {s}.versions WHERE site = %s "
                    "ORDER BY version DESC LIMIT 1"
                ),
                [self.site],
            ).fetchone()
        return self._snapshot(row)

    def load_version(self, version: int) -> Snapshot:
        row = None if self._nothing_saved() else self._version_row(version)
        if row is None:
            raise StateError(
                f"There is no version {version} of the records of {self.site} in {self.location}.",
                hint="The site's history lists the versions there are.",
            )
        return self._snapshot(row)

    def _version_row(self, version: int) -> tuple[Any, ...] | None:
        with self._db.transaction(self._connection(), "read the records") as conn:
            return conn.execute(
                self._db.q(
                    "SELECT version, records::text FROM {s}.versions "
                    "WHERE site = %s AND version = %s"
                ),
                [self.site, version],
            ).fetchone()

    def history(self) -> list[VersionInfo]:
        if self._nothing_saved():
            return []
        with self._db.transaction(self._connection(), "read the records' history") as conn:
            rows = conn.execute(
                self._db.q(
                    "SELECT version, saved_at, saved_by, summary, plan FROM {s}.versions "
                    "WHERE site = %s ORDER BY version"
                ),
                [self.site],
            ).fetchall()
        return [
            VersionInfo(int(version), _stamp(saved_at), saved_by, summary, plan)
            for version, saved_at, saved_by, summary, plan in rows
        ]

    def save(
        self,
        data: dict[str, Any],
        *,
        expected_version: int,
        info: SaveInfo,
        lease: Lease,
        clear_journal: bool = False,
    ) -> int:
        check_site(data, self.site, "given to save")
        text = dump_stored(data)
        version = expected_version + 1
        with self._db.transaction(self._writable(), "save the records") as conn:
            fence(self._db, conn, self.site, self._token_of(lease))
            newest = self._newest(conn)
            if newest != expected_version:
                raise self._conflict(expected_version, newest)
            inserted = conn.execute(
                self._db.q(
                    "INSERT INTO {s}.versions (site, version, saved_at, saved_by, summary, "
                    "plan, records) VALUES (%s, %s, clock_timestamp(), %s, %s, %s, %s::jsonb) "
                    "ON CONFLICT (site, version) DO NOTHING"
                ),
                [self.site, version, info.saved_by, info.summary, info.plan, text],
            )
            if inserted.rowcount != 1:  # a concurrent save took that number first
                raise self._conflict(expected_version, version)
            if clear_journal:
                conn.execute(self._db.q("DELETE FROM {s}.journal WHERE site = %s"), [self.site])
        return version

    def _token_of(self, lease: Lease) -> int:
        """The fencing token of ``lease`` if it is a lease of these records, else ``LockLost``
        (tokens count per site: another site's lease could carry the same number)."""
        if not (isinstance(lease, PostgresLease) and lease.holds(self._db, self.site)):
            raise lock_lost(self.site, lease.token)
        return lease.token

    def _newest(self, conn: Connection) -> int:
        row = conn.execute(
            self._db.q("SELECT coalesce(max(version), 0) FROM {s}.versions WHERE site = %s"),
            [self.site],
        ).fetchone()
        return int(row[0]) if row else 0

    def _conflict(self, expected: int, newest: int) -> ConflictingUpdate:
        return ConflictingUpdate(
            f"The records of {self.site} changed since this command read them (version "
            f"{expected} then, {newest} now): saving would lose that update.",
            hint="Run the command again: it starts from the newest records.",
        )

    def lock(
        self,
        holder: Holder,
        *,
        wait_seconds: float = 0.0,
        lease_seconds: float | None = None,
    ) -> Lease:
        seconds = check_lease_seconds(
            self.lease_seconds if lease_seconds is None else lease_seconds
        )

        def attempt() -> Lease | Refusal:
            asked = time.monotonic()  # the lease runs from a moment after this one
            taken = take(self._db, self._writable(), self.site, holder, seconds)
            if isinstance(taken, Refusal):
                return taken
            token, stored, took_over_from = taken
            lease = PostgresLease(self._db, self._connection, self.site, token, stored)
            lease.took_over_from = took_over_from
            lease.start_renewing(seconds, asked)
            return lease

        return wait_for_lock(
            attempt, site=self.site, wait_seconds=wait_seconds, poll_seconds=POLL_SECONDS
        )

    def journal_append(self, lease: Lease, entry: dict[str, Any]) -> None:
        self.journal_append_many(lease, [entry])

    def journal_append_many(self, lease: Lease, entries: list[dict[str, Any]]) -> None:
        rows = [(self.site, dump_stored(entry)) for entry in entries]
        with self._db.transaction(self._writable(), "write the journal") as conn:
            fence(self._db, conn, self.site, self._token_of(lease))
            with conn.cursor() as cursor:  # one statement per row, in order (seq follows)
                cursor.executemany(
                    self._db.q("INSERT INTO {s}.journal (site, entry) VALUES (%s, %s::jsonb)"),
                    rows,
                )

    def journal_entries(self) -> list[dict[str, Any]]:
        if self._nothing_saved():
            return []
        with self._db.transaction(self._connection(), "read the journal") as conn:
            rows = conn.execute(
                self._db.q("SELECT seq, entry::text FROM {s}.journal WHERE site = %s ORDER BY seq"),
                [self.site],
            ).fetchall()
        return [parse_stored(text, f"{self._where()} journal {seq}") for seq, text in rows]

    def plan_key(self, *, create: bool = True) -> bytes | None:
        if not create and self._nothing_saved():
            return None
        row = None
        with self._db.transaction(self._writable(), "read the plan key") as conn:
            exposure = key_exposure(self._db, conn, self.site)  # before any key is stored
            if exposure is None:
                if create:
                    conn.execute(
                        self._db.q(
                            "INSERT INTO {s}.plan_keys (site, key) VALUES (%s, %s) "
                            "ON CONFLICT (site) DO NOTHING"
                        ),
                        [self.site, os.urandom(PLAN_KEY_BYTES)],
                    )
                row = conn.execute(
                    self._db.q("SELECT key FROM {s}.plan_keys WHERE site = %s"), [self.site]
                ).fetchone()
        if exposure is not None:
            raise exposure.refusal(self._where())  # after the commit: a discarded key stays so
        if row is None and not create:
            return None
        key = bytes(row[0]) if row else b""
        if len(key) != PLAN_KEY_BYTES:
            raise StateError(f"The plan key of {self._where()} is damaged.")
        return key

    def import_site(
        self, versions: list[tuple[VersionInfo, dict[str, Any]]], key: bytes, *, lease: Lease
    ) -> str | None:
        rows = [
            (
                self.site,
                info.version,
                parse_stamp(info.saved_at),
                info.saved_by,
                info.summary,
                info.plan,
                dump_stored(check_site(data, self.site, "given to import")),
            )
            for info, data in versions
        ]
        with self._db.transaction(self._writable(), "import the records") as conn:
            fence(self._db, conn, self.site, self._token_of(lease))
            conn.execute(self._db.q("DELETE FROM {s}.versions WHERE site = %s"), [self.site])
            with conn.cursor() as cursor:
                cursor.executemany(
                    self._db.q(
                        "INSERT INTO {s}.versions (site, version, saved_at, saved_by, summary, "
                        "plan, records) VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb)"
                    ),
                    rows,
                )
            exposure = key_exposure(self._db, conn, self.site)
            if exposure is None:
                conn.execute(
                    self._db.q(
                        "INSERT INTO {s}.plan_keys (site, key) VALUES (%s, %s) "
                        "ON CONFLICT (site) DO UPDATE SET key = excluded.key"
                    ),
                    [self.site, key],
                )
        return None if exposure is None else exposure.refusal(self._where()).message

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _stamp(value: Any) -> str:
    return utc_stamp(value) if isinstance(value, datetime) else str(value)
