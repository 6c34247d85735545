"""The directory backend: each site's records as files, the default and the simplest to share.

Layout under the state directory (a runner's ``.reconciler/`` or a disk shared by runners)::

    sites/<host_port_path>-<8 hex of sha256(site)>/     mode 700, one per site URL
        versions/0000000001.json ...   one file per saved version, never changed once there
        journal.jsonl                  the apply journal, one fsynced JSON line per entry
        journal.folded-N-*.jsonl       a journal a clearing save of version N set aside:
                                       still read until version N exists, then removed
        plan.key                       the site's plan key (32 random bytes)
        lock, lease.json, gate         the site lock (see ``directory_lock``)

A version file holds two JSON lines: what history keeps (version, saved_at, saved_by, summary,
plan) and the records. ``save`` publishes version N+1 with ``link`` of a complete temporary
file, which fails if the name exists, so of two writers that both loaded version N exactly one
wins; it also runs fenced under the site lock. Every file is mode 600 and written atomically.

The previous layout kept one ``sites/<host>/state.json`` (keyed by host only) with
``journal.jsonl`` beside it. Until a site's first save it is read as version 0, if it names
this site; the first save retires it to ``state.json.migrated`` (and a clearing save retires
its journal to ``journal.jsonl.migrated``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from pathlib import Path
from typing import Any

from reconciler.errors import RefusedForSafety, StateError
from reconciler.state.backend import (
    DEFAULT_LEASE_SECONDS,
    BackendKind,
    ConflictingUpdate,
    Holder,
    Lease,
    RecordStore,
    SaveInfo,
    Snapshot,
    VersionInfo,
)
from reconciler.state.directory_files import (
    FOLDED_JOURNAL,
    VERSION_FILE,
    drop_torn_tail,
    finish_import,
    journal_lines,
    legacy_directory_name,
    names_in,
    names_site,
    site_directory_name,
    version_body,
    version_file,
    version_info,
)
from reconciler.state.directory_lock import SiteLock
from reconciler.state.documents import (
    DAMAGED_HINT,
    check_site,
    dump_stored,
    parse_stored,
    utc_stamp,
)
from reconciler.state.files import (
    check_trusted_directory,
    file_errors,
    fsync_directory,
    open_private,
    private_directory,
    publish_file,
    read_file,
    read_private,
    replace_file,
    write_all,
)
from reconciler.state.leases import check_lease_seconds

PLAN_KEY_BYTES = 32


class DirectoryRecords(RecordStore):
    """One site's records under ``root`` (the state directory)."""

    kind: BackendKind = "directory"

    def __init__(
        self, root: Path, site: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS
    ) -> None:
        self.root = root
        self.site = site
        self.location = str(root)
        self.lease_seconds = lease_seconds
        self.directory = root / "sites" / site_directory_name(site)
        self.versions_dir = self.directory / "versions"
        self.journal_path = self.directory / "journal.jsonl"
        self.key_path = self.directory / "plan.key"
        legacy = root / "sites" / legacy_directory_name(site)
        self.legacy_state = legacy / "state.json"
        self.legacy_journal = legacy / "journal.jsonl"
        self._lock = SiteLock(self.directory, site)
        self._checked = False

    def __repr__(self) -> str:
        return f"DirectoryRecords({self.location!r}, {self.site!r})"

    def _trusted(self) -> None:
        """The state directory and this site's are this user's and writable by no one else
        (checked before the first use: ``files.check_trusted_directory``)."""
        if not self._checked:
            for path in (self.root, self.root / "sites", self.directory):
                check_trusted_directory(path)
            self._checked = True

    # -- versions ---------------------------------------------------------------------------

    def _version_numbers(self) -> list[int]:
        """Every saved version, in order; finishes an import that was cut short."""
        importing = self.directory / "versions.importing"
        with file_errors("read the records", self.directory):
            if not self.versions_dir.is_dir() and importing.is_dir():
                finish_import(importing, self.versions_dir)
            try:
                names = os.listdir(self.versions_dir)
            except FileNotFoundError:
                return []
        return sorted(int(m.group(1)) for m in map(VERSION_FILE.match, names) if m)

    def _read_version(self, version: int) -> tuple[VersionInfo, dict[str, Any]]:
        path = self.versions_dir / version_file(version)
        with file_errors("read the records", path):
            text = path.read_bytes()
        meta_line, _, data_line = text.partition(b"\n")
        return version_info(meta_line, path), check_site(
            parse_stored(data_line, str(path)), self.site, f"at {path}"
        )

    def load(self) -> Snapshot:
        self._trusted()
        versions = self._version_numbers()
        if versions:
            return Snapshot(versions[-1], self._read_version(versions[-1])[1])
        legacy = self._legacy_records()
        return Snapshot(0, legacy)

    def load_version(self, version: int) -> Snapshot:
        self._trusted()
        if version not in self._version_numbers():
            raise StateError(
                f"There is no version {version} of the records of {self.site} in {self.location}.",
                hint="The site's history lists the versions there are.",
            )
        return Snapshot(version, self._read_version(version)[1])

    def history(self) -> list[VersionInfo]:
        self._trusted()
        infos = []
        for version in self._version_numbers():
            path = self.versions_dir / version_file(version)
            with file_errors("read the records", path), path.open("rb") as handle:
                infos.append(version_info(handle.readline(), path))
        return infos

    def save(
        self,
        data: dict[str, Any],
        *,
        expected_version: int,
        info: SaveInfo,
        lease: Lease,
        clear_journal: bool = False,
    ) -> int:
        self._trusted()
        check_site(data, self.site, "given to save")
        version = expected_version + 1
        body = version_body(
            VersionInfo(version, utc_stamp(), info.saved_by, info.summary, info.plan), data
        )
        with self._lock.fenced(lease), file_errors("save the records", self.directory):
            private_directory(self.versions_dir)
            newest = (self._version_numbers() or [0])[-1]
            if newest != expected_version:
                raise self._conflict(expected_version, newest)
            set_aside = self._set_journal_aside(version) if clear_journal else None
            if not publish_file(self.versions_dir / version_file(version), body):
                if set_aside is not None:
                    os.replace(set_aside, self.journal_path)
                raise self._conflict(expected_version, version)
            self._drop_folded_journals(version)
            self._retire_legacy(journal_too=clear_journal)
        return version

    def _conflict(self, expected: int, newest: int) -> ConflictingUpdate:
        return ConflictingUpdate(
            f"The records of {self.site} changed since this command read them (version "
            f"{expected} then, {newest} now): saving would lose that update.",
            hint="Run the command again: it starts from the newest records.",
        )

    # -- the previous layout ----------------------------------------------------------------

    def _legacy_records(self) -> dict[str, Any] | None:
        with file_errors("read the records", self.legacy_state):
            text = read_file(self.legacy_state)
        if text is None:
            return None
        data = parse_stored(text, str(self.legacy_state))
        if data.get("site") != self.site:
            raise StateError(
                f"The records at {self.legacy_state} (the previous layout, one per host) belong "
                f"to {data.get('site')!r}, not to {self.site!r}: they are not used.",
                hint=f"Run a command for {data.get('site')!r} first so that its records move to "
                "the new layout, or move that file away if they are stale.",
            )
        return data

    def _legacy_journal_is_ours(self) -> bool:
        """The previous layout's journal sits beside its records: it is ours if they are."""
        for state in (self.legacy_state, self.legacy_state.with_name("state.json.migrated")):
            text = read_file(state)
            if text is not None:
                return names_site(text, self.site)
        return False

    def _retire_legacy(self, *, journal_too: bool) -> None:
        """After a save: the previous layout's records are superseded (never deleted)."""
        text = read_file(self.legacy_state)
        if text is not None and names_site(text, self.site):
            os.replace(self.legacy_state, self.legacy_state.with_name("state.json.migrated"))
        if journal_too and self.legacy_journal.exists() and self._legacy_journal_is_ours():
            os.replace(self.legacy_journal, self.legacy_journal.with_name("journal.jsonl.migrated"))

    # -- the journal ------------------------------------------------------------------------

    def journal_append(self, lease: Lease, entry: dict[str, Any]) -> None:
        self.journal_append_many(lease, [entry])

    def journal_append_many(self, lease: Lease, entries: list[dict[str, Any]]) -> None:
        self._trusted()
        lines = "".join(dump_stored(entry) + "\n" for entry in entries).encode()
        # (the site's directory is there: ``fenced`` made it, if need be, to hold the gate)
        with self._lock.fenced(lease), file_errors("write the journal", self.journal_path):
            fd = open_private(self.journal_path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                drop_torn_tail(fd, self.journal_path)
                write_all(fd, lines)  # a part written is not an entry: an error
                os.fsync(fd)
            finally:
                os.close(fd)

    def _set_journal_aside(self, version: int) -> Path | None:
        """Rename the journal to ``journal.folded-<version>-<random>.jsonl`` before
        ``version`` is published: it still counts until that version exists, and never after.
        The random part keeps one left by a crashed save apart from ours."""
        if not self.journal_path.exists():
            return None
        aside = self.directory / f"journal.folded-{version}-{secrets.token_hex(4)}.jsonl"
        os.replace(self.journal_path, aside)
        return aside

    def _folded_journals(self) -> list[tuple[int, Path]]:
        """Journals set aside by saves, with the version each save was to publish."""
        return sorted(
            (int(m.group(1)), self.directory / m.group(0))
            for m in map(FOLDED_JOURNAL.match, names_in(self.directory))
            if m
        )

    def _drop_folded_journals(self, published: int) -> None:
        """Once version ``published`` exists, the journals set aside for it (or, after a
        crash, for an earlier one) are folded in: they go."""
        for version, path in self._folded_journals():
            if version <= published:
                path.unlink()

    def journal_entries(self) -> list[dict[str, Any]]:
        self._trusted()
        entries: list[dict[str, Any]] = []
        with file_errors("read the journal", self.directory):
            if self.legacy_journal.exists() and self._legacy_journal_is_ours():
                entries += journal_lines(self.legacy_journal, strict=False)
            newest = (self._version_numbers() or [0])[-1]
            for version, path in self._folded_journals():
                if version > newest:  # set aside by a save that never published
                    entries += journal_lines(path, strict=True)
            entries += journal_lines(self.journal_path, strict=True)
        return entries

    # -- the plan key, the lock, copies -----------------------------------------------------

    def plan_key(self, *, create: bool = True) -> bytes | None:
        self._trusted()
        with file_errors("read the plan key", self.key_path):
            self._discard_exposed_key()
            key = read_private(self.key_path)
            if key is None and not create:
                return None
            if key is None:
                private_directory(self.directory)
                publish_file(self.key_path, os.urandom(PLAN_KEY_BYTES))  # first one wins
                key = self.key_path.read_bytes()
        if len(key) != PLAN_KEY_BYTES:
            raise StateError(f"The plan key {self.key_path} is damaged.", hint=DAMAGED_HINT)
        return key

    def _discard_exposed_key(self) -> None:
        """A plan key of this user's that others could read or replace (a copy made with a
        loose umask, a ``chmod -R``) may have been copied: made private again, it would go
        on sealing plans for whoever did. It is removed, and said so, once; the next use
        makes a new one. (Another user's file or a link is ``read_private``'s to refuse.)"""
        try:
            info = os.lstat(self.key_path)
        except FileNotFoundError:
            return
        mode = stat.S_IMODE(info.st_mode)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or not mode & 0o077:
            return
        self.key_path.unlink()
        fsync_directory(self.directory)
        raise RefusedForSafety(
            f"The plan key {self.key_path} could be read or replaced by others (mode {mode:o}): "
            "it was discarded, since any of them could have copied it and sealed plans that "
            "apply would accept. Plans sealed with it are refused.",
            hint="Make the plan again: a new key is made, mode 600. Keep the state "
            "directory's files private, or give the jobs a secret RECONCILER_PLAN_KEY.",
        )

    def lock(
        self,
        holder: Holder,
        *,
        wait_seconds: float = 0.0,
        lease_seconds: float | None = None,
    ) -> Lease:
        self._trusted()
        lease = check_lease_seconds(self.lease_seconds if lease_seconds is None else lease_seconds)
        return self._lock.acquire(holder, wait_seconds=wait_seconds, lease_seconds=lease)

    def import_site(
        self, versions: list[tuple[VersionInfo, dict[str, Any]]], key: bytes, *, lease: Lease
    ) -> str | None:
        self._trusted()
        for _, data in versions:
            check_site(data, self.site, "given to import")
        importing = self.directory / "versions.importing"
        with self._lock.fenced(lease), file_errors("import the records", self.directory):
            shutil.rmtree(importing, ignore_errors=True)
            private_directory(importing)
            for info, data in versions:
                publish_file(importing / version_file(info.version), version_body(info, data))
            finish_import(importing, self.versions_dir)
            replace_file(self.key_path, key)  # mode 600 before it holds the key
            self._retire_legacy(journal_too=False)
        return None

    def close(self) -> None:
        """Nothing stays open between calls; a held lease keeps its own file."""


__all__ = ["DirectoryRecords", "site_directory_name"]
