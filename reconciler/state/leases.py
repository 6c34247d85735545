"""What both backends' locks share: waiting for a lock, the refusal, and the heartbeat.

A lease lives only while its holder keeps renewing it. The renewal runs on a small daemon
thread (``Heartbeat``), every third of the lease, so a holder busy for minutes in one API call
keeps its lock, and a holder that dies, freezes or loses its connection loses it within one
lease. The thread only renews: it never writes records; the writes check the lease themselves
(fencing), so a holder whose heartbeat failed is refused even if it does not know yet.

The site has no fencing tokens: a write to the site cannot be refused by the site. So a holder
also asks, just before each write leaves for the site, whether its lease still holds by its
own monotonic clock (``Heartbeat.in_time``, through ``Lease.check_in_time``).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from reconciler.errors import ConfigError
from reconciler.state.backend import Holder, Lease, LockHeld, LockLost

log = structlog.get_logger("reconciler.state")

MIN_LEASE_SECONDS = 0.3
"""Shorter leases could not be renewed reliably (the heartbeat runs every third of one)."""


def check_lease_seconds(value: float) -> float:
    """``value`` when it is a usable lease length, else a ``ConfigError``."""
    if not value >= MIN_LEASE_SECONDS:  # also refuses NaN
        raise ConfigError(
            f"A lock lease of {value} seconds is too short.",
            hint=f"Give at least {MIN_LEASE_SECONDS} seconds (the default is 30).",
        )
    return value


@dataclass(frozen=True, slots=True)
class Refusal:
    """The lock is held by someone else on a lease of ``lease_seconds``, renewed as it
    works."""

    holder: Holder
    lease_seconds: float


def lock_held(site: str, refusal: Refusal) -> LockHeld:
    """The refusal a user sees: who holds the lock, and what happens if they are gone."""
    return LockHeld(
        f"The records of {site} are locked by {refusal.holder.describe()}.",
        holder=refusal.holder,
        hint="Wait for that command to finish and run this one again. If it is gone for "
        f"good, its lock lapses by itself {refusal.lease_seconds:g} seconds after its last "
        "renewal.",
    )


def lock_lost(site: str, token: int) -> LockLost:
    return LockLost(
        f"This command lost the lock of {site}'s records (lease {token} expired or was "
        "taken over), so it may no longer change them.",
        hint="Another command may be changing the site now: run `plan` again when it is done.",
    )


PROGRESS_SECONDS = 10.0
"""How often a runner waiting for the lock says it is still waiting."""


def say(line: str) -> None:
    """A notice for the person or CI log watching (stderr: never mixed into JSON output)."""
    print(line, file=sys.stderr, flush=True)


def wait_for_lock(
    attempt: Callable[[], Lease | Refusal],
    *,
    site: str,
    wait_seconds: float,
    poll_seconds: float,
    notify: Callable[[str], None] = say,
    progress_seconds: float = PROGRESS_SECONDS,
) -> Lease:
    """``attempt`` until it gives a lease, for ``wait_seconds`` at most; then ``LockHeld``.

    A runner that waits says whom it waits for, once, and then every ``progress_seconds``
    that it still does (naming the holder again if the lock changed hands): a CI job that
    sits silent for minutes looks hung.
    """
    started = time.monotonic()
    deadline = started + max(0.0, wait_seconds)
    waiting_for: Holder | None = None
    next_progress = started + progress_seconds
    while True:
        outcome = attempt()
        if isinstance(outcome, Lease):
            return outcome
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            raise lock_held(site, outcome)
        if outcome.holder != waiting_for:
            waiting_for = outcome.holder
            notify(
                f"Waiting for the lock of {site}'s records, held by "
                f"{outcome.holder.describe()} (up to {wait_seconds:g} s)..."
            )
        elif now >= next_progress:
            next_progress = now + progress_seconds
            notify(f"Still waiting for the lock ({now - started:.0f} of {wait_seconds:g} s)...")
        time.sleep(min(poll_seconds, left))


SAFE_SHARE = 0.75
"""How much of a lease, counted from its last renewal on this process's own clock, a holder
trusts: a quarter is left as the margin for a renewal that is late, a write that takes a
moment to leave, and clocks that drift apart."""


class Heartbeat:
    """Renews a lease every third of it, until stopped or until ``renew`` returns False; and
    tells its holder whether the lease still holds (``in_time``).

    ``renew`` returns False when the lease is gone (then renewing stops for good); an
    exception is logged and the next beat tries again: the lease lapses by itself if none
    of them succeeds in time.

    ``in_time`` needs no I/O: it counts on the monotonic clock from the moment the last
    successful renewal was *asked for* (the lease was extended after that moment, never
    before it). A process frozen (SIGSTOP, a paused VM) past its lease knows it the instant
    it runs again, before its heartbeat thread has had a chance to find out.
    """

    def __init__(
        self, renew: Callable[[], bool], lease_seconds: float, *, name: str, taken_at: float
    ) -> None:
        self._renew = renew
        self._interval = lease_seconds / 3
        self._trusted = lease_seconds * SAFE_SHARE
        self._renewed_at = taken_at  # time.monotonic() before the lock was taken
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def in_time(self) -> bool:
        """Whether the lease certainly still holds, by this process's own monotonic clock."""
        return not self.lost.is_set() and time.monotonic() < self._renewed_at + self._trusted

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            asked = time.monotonic()
            try:
                held = self._renew()
            except Exception as exc:  # the lease lapses by itself; keep trying until then
                log.warning("lock_renewal_failed", thread=self._thread.name, error=str(exc))
                continue
            if not held:
                self.lost.set()
                log.warning("lock_lost", thread=self._thread.name)
                return
            self._renewed_at = asked
