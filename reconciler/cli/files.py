"""Files a command writes for the user (saved plans, exported manifests): private, atomic."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.state.files import private_directory, replace_file


def rewrite_manifest_file(path: Path, text: str) -> None:
    """Replace a manifest file with its edited text, atomically, keeping its mode."""
    real = path.resolve()
    try:
        mode = stat.S_IMODE(real.stat().st_mode)
        replace_file(real, text.encode("utf-8"))
        os.chmod(real, mode)
    except OSError as exc:
        raise ReconcilerError(
            f"Cannot write the edited manifest {path}: {exc.strerror or exc}.",
            hint="Check that the file and its directory are writable.",
        ) from None


def write_private_file(path: Path, text: str, *, what: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 600; a failure is one clear message."""
    try:
        private_directory(path.parent)
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise ReconcilerError(
            f"Cannot write {what} to {path}: {exc.strerror or exc}.",
            hint="Check that the directory exists, is writable and has free space.",
        ) from None


COMMENT_FILE = "comment-{}.md"


def write_comments(directory: Path, parts: list[str]) -> list[Path]:
    """Write a plan's pull-request comments as ``comment-1.md`` … ``comment-N.md`` in
    ``directory`` (made if missing), and remove ``comment-M.md`` files beyond N left by an
    earlier, longer plan: a job posts every file there and deletes the comments of parts
    that are gone (their markers say which)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for number, text in enumerate(parts, start=1):
            path = directory / COMMENT_FILE.format(number)
            replace_file(path, text.encode("utf-8"))
            written.append(path)
        number = len(parts) + 1
        while (stale := directory / COMMENT_FILE.format(number)).exists():
            stale.unlink()
            number += 1
    except OSError as exc:
        raise ReconcilerError(
            f"Cannot write the comments to {directory}: {exc.strerror or exc}.",
            hint="Check that the directory is writable and has free space.",
        ) from None
    return written
