"""Private, atomic, durable files: the few operations the directory backend is built from.

Every file is first written whole to a temporary file beside its target and fsynced; only then
does it appear under its name, by ``rename`` (replace) or by ``link`` (create only if absent,
which is how two writers can never both publish the same version). The directory is fsynced
after, so the name survives a power cut too. Directories are mode 700 and files mode 600: the
records name the site's users and the plan key authenticates plans.

Operating-system failures become one ``StateError`` that says what could not be done, why in
plain words (read-only file system, disk full, permission denied), and what to do.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reconciler.errors import StateError

_WHY: dict[int, tuple[str, str]] = {
    errno.EROFS: (
        "the file system is read-only",
        "Give a writable state location (--state or site.state), e.g. a shared disk or "
        "a PostgreSQL database.",
    ),
    errno.EACCES: (
        "permission denied",
        "Check that the user running the tool owns the state directory (mode 700).",
    ),
    errno.EPERM: (
        "operation not permitted",
        "Check that the user running the tool owns the state directory (mode 700).",
    ),
    errno.ENOSPC: ("the disk is full", "Free some space on that disk and run the command again."),
    errno.EDQUOT: ("the disk quota is exceeded", "Free some space or raise the quota."),
    errno.EFBIG: ("the file would be too large", "Raise the file size limit (ulimit -f)."),
    errno.ELOOP: (
        "it is a symbolic link, and the records never follow one",
        "Replace the link with the file itself (or restore the records from a copy).",
    ),
}


def file_error(exc: OSError, action: str, path: Path) -> StateError:
    """One message for an ``OSError`` met while doing ``action`` (``"write the records"``)."""
    why, hint = _WHY.get(
        exc.errno or 0,
        (exc.strerror or str(exc), "Check the state directory and its disk."),
    )
    return StateError(f"Cannot {action} at {path}: {why}.", hint=hint)


@contextmanager
def file_errors(action: str, path: Path) -> Iterator[None]:
    """Turn any ``OSError`` inside the block into ``file_error(…)``."""
    try:
        yield
    except OSError as exc:
        raise file_error(exc, action, path) from exc


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def check_trusted_directory(path: Path) -> None:
    """Refuse a state directory this user does not own, or that others may write to: whoever
    can write there can change the records, plant a plan key, or swap a file for a link."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return  # made by the tool, mode 700, when first needed
    except OSError as exc:
        raise file_error(exc, "open the state directory", path) from exc
    if not stat.S_ISDIR(info.st_mode):
        raise StateError(f"The state location {path} is not a directory.")
    if info.st_uid != os.geteuid():
        raise StateError(
            f"The state directory {path} belongs to {_owner_name(info.st_uid)}, not to "
            f"{_owner_name(os.geteuid())}, who runs the tool: its owner could change the "
            "records or the plan key.",
            hint="Use a state directory of your own (the tool makes it mode 700), or run the "
            "tool as its owner.",
        )
    if info.st_mode & 0o022:
        who = "its group and everyone" if info.st_mode & 0o002 else "its group"
        raise StateError(
            f"The state directory {path} can be written by {who} (mode "
            f"{stat.S_IMODE(info.st_mode):o}): they could change the records or the plan key.",
            hint=f"Make it private: chmod 700 {path}",
        )


def open_private(path: Path, flags: int, *, secret: bool = False) -> int:
    """``os.open`` of a file of the records: never through a symbolic link (``O_NOFOLLOW``),
    created mode 600, and refused unless this user owns it and no one else can write it (nor,
    for a ``secret`` such as the plan key, read it)."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & (0o077 if secret else 0o022):
            raise StateError(
                f"{path} belongs to {_owner_name(info.st_uid)} with mode "
                f"{stat.S_IMODE(info.st_mode):o}: a file of the records must be this user's "
                "and private (mode 600).",
                hint=f"Check who made it; if it is yours: chmod 600 {path}",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_private(path: Path) -> bytes | None:
    """The bytes of the secret ``path`` via ``open_private``, or None when there is none."""
    try:
        fd = open_private(path, os.O_RDONLY, secret=True)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as file:
        return file.read()


def private_directory(path: Path) -> None:
    """Create ``path`` and any missing parent with mode 700 (``mkdir -p`` gives 755)."""
    if path.is_dir():
        return
    private_directory(path.parent)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        if not path.is_dir():
            raise


def fsync_directory(path: Path) -> None:
    """Make the names just created or removed in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """All of ``data`` written to ``fd``, or ``OSError``: ``os.write`` may write only a part
    (a disk with room for less than all of it), and the next call then says why."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _complete_temp_file(directory: Path, data: bytes) -> Path:
    """A new mode-600 file in ``directory`` holding ``data``, on disk before this returns."""
    fd, name = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        os.fchmod(fd, 0o600)
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    os.close(fd)
    return Path(name)


def replace_file(path: Path, data: bytes) -> None:
    """Write ``path`` atomically: readers see the old content or the new, never a part."""
    temp = _complete_temp_file(path.parent, data)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def publish_file(path: Path, data: bytes) -> bool:
    """Create ``path`` holding ``data`` only if no file has that name: False if one has.

    ``link`` of a complete temporary file is atomic and fails when the name exists, on local
    file systems and NFS alike, so of two writers exactly one publishes.
    """
    temp = _complete_temp_file(path.parent, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)
    fsync_directory(path.parent)
    return True


def read_file(path: Path) -> bytes | None:
    """The bytes of ``path``, or ``None`` when there is no such file.

    Read with ``os.read`` until the end, not ``Path.read_bytes``: that one's buffered file
    asks the kernel five more times (``fstat`` twice, ``ioctl``, ``lseek`` twice), and the lease
    file is read before every journal write of an apply, in a thread that must win the
    interpreter lock back from the event loop after each call."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


_READ_CHUNK = 1 << 16
