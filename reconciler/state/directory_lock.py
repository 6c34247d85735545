"""The directory backend's site lock: a kernel lock for liveness, a lease for everything else.

Three files in the site's directory:

* ``lock``: the holder keeps an exclusive ``flock`` on it for as long as it holds the lease.
  The kernel drops that lock the instant the process dies, however it dies, so a killed
  holder's lock is free at once. Each new lease gets a fresh ``lock`` file (a new inode),
  so a frozen holder whose lease was taken over cannot keep the next one's lock busy.
* ``lease.json``: the holder (``Holder.to_data()``), the fencing token and the moment the lease
  lapses unless renewed (wall clock, seconds since the epoch; runners sharing a disk need
  synchronised clocks, as NTP gives). The token only grows: the file outlives its leases.
* ``gate``: an ``flock`` held for the few microseconds of each decision (take, renew, check
  and write, release), so that deciding and acting are one step for every process.

A lock is free when ``lease.json`` says released, when its holder's kernel lock is gone (the
process died), or when its lease lapsed (the holder froze or its machine vanished from the
shared disk). Every write of records or journal runs inside ``fenced(lease)``: under the gate,
after checking that ``lease.json`` still names this lease's token and has not lapsed. The
previous design read the lock file and unlinked it, so two processes could both take over
the same dead holder; here every decision is made under the gate.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from reconciler.errors import StateError
from reconciler.state.backend import Holder, Lease, LockLost
from reconciler.state.documents import dump_stored, parse_stored, utc_stamp
from reconciler.state.files import (
    file_errors,
    fsync_directory,
    private_directory,
    read_file,
    replace_file,
)
from reconciler.state.leases import Heartbeat, Refusal, lock_lost, wait_for_lock

GATE_TIMEOUT_SECONDS = 10.0
POLL_SECONDS = 0.1


class DirectoryLease(Lease):
    """A held lease; the open ``lock`` file keeps the kernel lock for as long as it lives."""

    def __init__(self, site_lock: SiteLock, token: int, holder: Holder, lock_fd: int) -> None:
        self._site_lock = site_lock
        self.token = token
        self.holder = holder
        self._lock_fd: int | None = lock_fd
        self._heartbeat: Heartbeat | None = None

    def _start_renewing(self, lease_seconds: float, taken_at: float) -> None:
        self._heartbeat = Heartbeat(
            lambda: self._site_lock.renew(self.token, lease_seconds),
            lease_seconds,
            name=f"lease-{self.token}",
            taken_at=taken_at,
        )
        self._heartbeat.start()

    def check(self) -> None:
        with self._site_lock.gate():
            self._site_lock.check_held(self.token)

    def check_in_time(self) -> None:
        if self._heartbeat is None or not self._heartbeat.in_time():
            raise lock_lost(self._site_lock.site, self.token)

    def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        fd, self._lock_fd = self._lock_fd, None
        if fd is None:
            return
        try:
            with self._site_lock.gate():
                self._site_lock.mark_released(self.token)
                os.close(fd)  # under the gate: nobody sees "released" but still locked
                fd = None
        finally:
            if fd is not None:
                os.close(fd)


class SiteLock:
    """The lock files of one site's directory."""

    def __init__(self, directory: Path, site: str) -> None:
        self.directory = directory
        self.site = site
        self.lock_path = directory / "lock"
        self.lease_path = directory / "lease.json"
        self.gate_path = directory / "gate"

    @contextmanager
    def gate(self) -> Iterator[None]:
        """Hold the gate for the block: one decision at a time across every process."""
        with file_errors("lock the records", self.directory):
            private_directory(self.directory)
            fd = os.open(self.gate_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + GATE_TIMEOUT_SECONDS
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StateError(
                            f"The lock gate {self.gate_path} stayed busy for "
                            f"{GATE_TIMEOUT_SECONDS:g} seconds.",
                            hint="A process holding it is frozen: find it (fuser "
                            f"{self.gate_path}) and end or resume it.",
                        ) from None
                    time.sleep(0.002)
            yield
        finally:
            os.close(fd)

    def _read(self) -> dict[str, Any] | None:
        with file_errors("read the lock", self.lease_path):
            text = read_file(self.lease_path)
        if text is None:
            return None
        lease = parse_stored(text, str(self.lease_path))
        if not isinstance(lease.get("token"), int) or not isinstance(
            lease.get("expires_at"), int | float
        ):
            raise StateError(
                f"The lock file {self.lease_path} is damaged.",
                hint="If no command is working on this site, remove that file.",
            )
        return lease

    def _write(self, lease: dict[str, Any]) -> None:
        with file_errors("write the lock", self.lease_path):
            replace_file(self.lease_path, dump_stored(lease).encode())

    def _holder_alive(self) -> bool:
        """Whether a process still holds the kernel lock on the current ``lock`` file."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def _fresh_lock_file(self) -> int:
        """A new ``lock`` inode, kernel-locked by this process before anyone can see it."""
        temp = self.directory / f".lock-{os.getpid()}-{time.monotonic_ns()}"
        fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.replace(temp, self.lock_path)
        fsync_directory(self.directory)
        return fd

    def _try_take(self, holder: Holder, lease_seconds: float) -> DirectoryLease | Refusal:
        asked = time.monotonic()  # the lease runs from a moment after this one
        with self.gate():
            current = self._read()
            took_over_from = None
            if current is not None and not current.get("released"):
                previous = Holder.from_data(current.get("holder") or {})
                live = float(current["expires_at"]) > time.time()
                with file_errors("lock the records", self.lock_path):
                    alive = live and self._holder_alive()
                if alive:
                    return Refusal(previous, float(current.get("lease_seconds") or 0))
                took_over_from = previous
            token = (current["token"] if current else 0) + 1
            holder = replace(holder, since=utc_stamp())
            with file_errors("lock the records", self.lock_path):
                fd = self._fresh_lock_file()
            try:
                self._write(
                    {
                        "token": token,
                        "holder": holder.to_data(),
                        "expires_at": time.time() + lease_seconds,
                        "lease_seconds": lease_seconds,
                        "released": False,
                    }
                )
            except BaseException:
                os.close(fd)
                raise
        lease = DirectoryLease(self, token, holder, fd)
        lease.took_over_from = took_over_from
        lease._start_renewing(lease_seconds, asked)
        return lease

    def acquire(self, holder: Holder, *, wait_seconds: float, lease_seconds: float) -> Lease:
        return wait_for_lock(
            lambda: self._try_take(holder, lease_seconds),
            site=self.site,
            wait_seconds=wait_seconds,
            poll_seconds=POLL_SECONDS,
        )

    def check_held(self, token: int) -> dict[str, Any]:
        """The lease file's content if lease ``token`` is the current, unexpired one, else
        ``LockLost``. Under the gate."""
        current = self._read()
        if (
            current is None
            or current["token"] != token
            or current.get("released")
            or float(current["expires_at"]) <= time.time()
        ):
            raise lock_lost(self.site, token)
        return current

    def renew(self, token: int, lease_seconds: float) -> bool:
        with self.gate():
            try:
                current = self.check_held(token)
            except LockLost:
                return False
            self._write({**current, "expires_at": time.time() + lease_seconds})
        return True

    def mark_released(self, token: int) -> None:
        """Under the gate: give the lease up, unless it is already someone else's."""
        current = self._read()
        if current is not None and current["token"] == token and not current.get("released"):
            self._write({**current, "released": True})

    @contextmanager
    def fenced(self, lease: Lease) -> Iterator[None]:
        """The block runs under the gate, only while ``lease`` is this site's live lease."""
        if not isinstance(lease, DirectoryLease) or lease._site_lock.directory != self.directory:
            raise lock_lost(self.site, lease.token)
        with self.gate():
            self.check_held(lease.token)
            yield
