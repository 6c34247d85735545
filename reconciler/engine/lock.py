"""One apply at a time per state: a lock file that names its holder.

The lock is a file created with ``O_EXCL`` holding the holder's PID, host and start time. A
lock left by a process that no longer runs on this host (killed, crashed) is taken over with
a notice; any other held lock is refused with a message naming the holder.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType

import structlog

from reconciler.engine.state import private_directory
from reconciler.errors import StateError

log = structlog.get_logger("reconciler.engine")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ApplyLock:
    """``with ApplyLock(path, command):`` holds the lock for the block."""

    def __init__(self, path: Path, command: str) -> None:
        self.path = path
        self.command = command
        self.took_over_from: str | None = None

    def __enter__(self) -> ApplyLock:
        private_directory(self.path.parent)
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": self.command,
        }
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                self._take_over_if_abandoned()
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(holder, handle)
            return self
        raise StateError(f"Cannot take the apply lock {self.path}.")

    def _take_over_if_abandoned(self) -> None:
        try:
            holder = json.loads(self.path.read_text(encoding="utf-8"))
            pid, host = int(holder["pid"]), str(holder["host"])
        except (OSError, ValueError, KeyError, TypeError):
            holder, pid, host = {}, -1, ""
        if host == socket.gethostname() and pid > 0 and not _alive(pid):
            self.took_over_from = (
                f"process {pid} (started {holder.get('started')}), which has ended"
            )
            log.warning("apply_lock_taken_over", lock=str(self.path), holder=self.took_over_from)
            self.path.unlink(missing_ok=True)
            return
        who = (
            f"process {pid} on {host}, started {holder.get('started')} ({holder.get('command')})"
            if pid > 0
            else "an unknown process"
        )
        raise StateError(
            f"Another apply is running for this site: the lock {self.path} is held by {who}.",
            hint="Wait for it to finish. If that process is gone for good, delete the lock file.",
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.path.unlink(missing_ok=True)
