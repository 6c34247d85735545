"""The directory backend's names and files: a site's directory name (and the previous
layout's), a version file's name and two lines, a journal file's lines (a crash's torn last
line cut or skipped), and the swap that finishes an import. Pure file formats: the backend
(``state/directory.py``) decides when each is read or written, under its lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reconciler.errors import StateError
from reconciler.state.backend import VersionInfo
from reconciler.state.documents import DAMAGED_HINT, dump_stored, parse_json, parse_stored
from reconciler.state.files import fsync_directory, read_file

VERSION_FILE = re.compile(r"^(\d{10})\.json$")
FOLDED_JOURNAL = re.compile(r"^journal\.folded-(\d+)-[0-9a-f]+\.jsonl$")


def site_directory_name(site: str) -> str:
    """``acme.example.net_8443_sub-1a2b3c4d``: readable, and unique per site URL."""
    parts = urlsplit(site)
    label = re.sub(r"[^A-Za-z0-9.-]+", "_", parts.netloc + parts.path).strip("._")[:80]
    return f"{label or 'site'}-{hashlib.sha256(site.encode()).hexdigest()[:8]}"


def legacy_directory_name(site: str) -> str:
    """The previous layout's name: the host and port only (two sites on one host shared it)."""
    parts = urlsplit(site)
    label = parts.netloc or parts.path or "site"
    return re.sub(r"[^A-Za-z0-9.-]+", "_", label).strip("._") or "site"


def version_file(version: int) -> str:
    return f"{version:010d}.json"


def finish_import(importing: Path, versions: Path) -> None:
    """Swap a complete ``versions.importing`` in for ``versions``; the old one goes."""
    replaced = versions.with_name("versions.replaced")
    shutil.rmtree(replaced, ignore_errors=True)
    if versions.exists():
        os.replace(versions, replaced)
    with contextlib.suppress(FileNotFoundError):  # a reader may have finished it first
        os.replace(importing, versions)
    fsync_directory(versions.parent)
    shutil.rmtree(replaced, ignore_errors=True)


def version_body(info: VersionInfo, data: dict[str, Any]) -> bytes:
    meta = {
        "version": info.version,
        "saved_at": info.saved_at,
        "saved_by": info.saved_by,
        "summary": info.summary,
        "plan": info.plan,
    }
    return (dump_stored(meta) + "\n" + dump_stored(data) + "\n").encode()


def version_info(meta_line: bytes, path: Path) -> VersionInfo:
    meta = parse_stored(meta_line, str(path))
    try:
        return VersionInfo(
            version=int(meta["version"]),
            saved_at=str(meta["saved_at"]),
            saved_by=str(meta["saved_by"]),
            summary=str(meta["summary"]),
            plan=None if meta.get("plan") is None else str(meta["plan"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"The records at {path} are damaged ({exc}).", hint=DAMAGED_HINT) from exc


def names_site(text: bytes, site: str) -> bool:
    try:
        value = parse_json(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("site") == site


def names_in(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def drop_torn_tail(fd: int, path: Path) -> None:
    """Cut a last line that a crash left without its newline: it was never a whole entry,
    and the next entry must not be glued to it."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    text = path.read_bytes()
    os.truncate(fd, text.rfind(b"\n") + 1)


def journal_lines(path: Path, *, strict: bool) -> list[dict[str, Any]]:
    """The entries of a journal file. A last line without its newline was cut short by a
    crash and is skipped; any other damaged line is an error (``strict``) or, in the previous
    layout's journals, whose writer did not trim torn lines, skipped."""
    text = read_file(path)
    if text is None:
        return []
    *complete, _torn = text.split(b"\n")
    entries = []
    for number, line in enumerate(complete, start=1):
        try:
            entries.append(parse_stored(line, f"{path} line {number}"))
        except StateError:
            if strict:
                raise
    return entries
