"""The PostgreSQL backend's site lock: one lease row per site, renewed on the database's clock.

Terraform's pg backend takes one session advisory lock for the whole database, so one apply
blocks every unrelated state (hashicorp/terraform#22833, opentofu/opentofu#2218), the lock
dies with the session (it cannot work through a pooler) and a refusal shows the asker as the
holder (terraform#32075). Here:

* the lock is a row of ``leases`` per site: locking one site never waits on another;
* the row names the real holder (host, process, user, CI job, command, since when);
* it lapses ``lease_seconds`` after its last renewal by the *database's* clock, so runners'
  clocks do not matter; a heartbeat thread with its own connection renews it every third of
  the lease, so a holder that dies, freezes or is cut off loses it within one lease;
* every write under a lease runs ``fence`` first, in its own transaction: ``SELECT … FOR SHARE``
  of the row still holding this token and unexpired, else ``LockLost``. The share lock keeps a
  takeover (``FOR UPDATE``) waiting until that write commits, so a write is never accepted
  after the lock went to someone else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import structlog

from reconciler.errors import StateError
from reconciler.state.backend import Holder, Lease
from reconciler.state.documents import dump_stored, parse_stored, utc_stamp
from reconciler.state.leases import Heartbeat, Refusal, lock_lost
from reconciler.state.postgres_db import Connection, Database

log = structlog.get_logger("reconciler.state")


def fence(db: Database, conn: Connection, site: str, token: int) -> None:
    """Inside a transaction: ``LockLost`` unless lease ``token`` holds ``site`` right now."""
    row = conn.execute(
        db.q(
            "SELECT 1 FROM {s}.leases WHERE site = %s AND token = %s AND NOT released "
            "AND expires_at > clock_timestamp() FOR SHARE"
        ),
        [site, token],
    ).fetchone()
    if row is None:
        raise lock_lost(site, token)


def take(
    db: Database, conn: Connection, site: str, holder: Holder, lease_seconds: float
) -> tuple[int, Holder, Holder | None] | Refusal:
    """One attempt, in one transaction: the new token, the holder as stored and whom the lock
    was taken over from; or a ``Refusal`` naming the live holder."""
    with db.transaction(conn, "lock the records"):
        conn.execute(
            db.q(
                "INSERT INTO {s}.leases (site, token, holder, lease_seconds, expires_at, "
                "released) VALUES (%s, 0, jsonb_build_object(), 0, clock_timestamp(), true) "
                "ON CONFLICT (site) DO NOTHING"
            ),
            [site],
        )
        row = conn.execute(
            db.q(
                "SELECT token, holder::text, released, expires_at > clock_timestamp(), "
                "lease_seconds, clock_timestamp() FROM {s}.leases WHERE site = %s FOR UPDATE"
            ),
            [site],
        ).fetchone()
        if row is None:  # the row inserted above: only a concurrent DELETE by hand gets here
            raise StateError(f"The lock of {site} in {db.display} vanished while taken.")
        token, stored, released, live, held_for, now = row
        previous = Holder.from_data(parse_stored(stored, f"{db.display} (lease of {site})"))
        if not released and live:
            return Refusal(previous, float(held_for))
        holder = replace(holder, since=utc_stamp(now))
        conn.execute(
            db.q(
                "UPDATE {s}.leases SET token = token + 1, holder = %s::jsonb, "
                "lease_seconds = %s, expires_at = %s + make_interval(secs => %s), "
                "released = false WHERE site = %s"
            ),
            [dump_stored(holder.to_data()), lease_seconds, now, lease_seconds, site],
        )
        return int(token) + 1, holder, None if released else previous


class PostgresLease(Lease):
    """A held lease; its heartbeat renews it over a connection of its own."""

    def __init__(
        self,
        db: Database,
        connection: Callable[[], Connection],
        site: str,
        token: int,
        holder: Holder,
    ) -> None:
        self._db = db
        self._connection = connection  # the records' connection (for check and release)
        self.site = site
        self.token = token
        self.holder = holder
        self._beat_conn: Connection | None = None
        self._heartbeat: Heartbeat | None = None
        self._released = False

    def holds(self, db: Database, site: str) -> bool:
        """Whether this is a lease of ``site`` in the same database and schema."""
        return (self.site, self._db.display, self._db.schema) == (site, db.display, db.schema)

    def start_renewing(self, lease_seconds: float, taken_at: float) -> None:
        """Renew from now on; ``taken_at``: ``time.monotonic()`` before the lock was asked for."""
        self._heartbeat = Heartbeat(
            self._renew, lease_seconds, name=f"lease-{self.token}", taken_at=taken_at
        )
        self._heartbeat.start()

    def _renew(self) -> bool:
        """One beat: True while the row still holds this token (and has not lapsed)."""
        if self._beat_conn is None or self._beat_conn.closed:
            self._beat_conn = self._db.connect()
        renewed = self._db.execute_alone(  # one statement: never idle holding the row
            self._beat_conn,
            "renew the lock",
            self._db.q(
                "UPDATE {s}.leases SET expires_at = clock_timestamp() + "
                "make_interval(secs => lease_seconds) WHERE site = %s AND token = %s "
                "AND NOT released AND expires_at > clock_timestamp()"
            ),
            [self.site, self.token],
        )
        return renewed == 1

    def check(self) -> None:
        with self._db.transaction(self._connection(), "check the lock") as conn:
            fence(self._db, conn, self.site, self.token)

    def check_in_time(self) -> None:
        if self._heartbeat is None or not self._heartbeat.in_time():
            raise lock_lost(self.site, self.token)

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        if self._heartbeat is not None:
            self._heartbeat.stop()
        try:
            with self._db.transaction(self._connection(), "release the lock") as conn:
                conn.execute(
                    self._db.q(
                        "UPDATE {s}.leases SET released = true WHERE site = %s AND token = %s"
                    ),
                    [self.site, self.token],
                )
        except StateError as exc:  # unreachable: the lease lapses by itself
            log.warning("lock_release_failed", site=self.site, error=exc.message)
        finally:
            if self._beat_conn is not None:
                self._beat_conn.close()
