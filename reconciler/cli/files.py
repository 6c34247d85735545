"""Files a command writes for the user (saved plans, exported manifests): private, atomic."""

from __future__ import annotations

from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.state.files import private_directory, replace_file


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
