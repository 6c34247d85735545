"""The seam between the engine and wherever the tool's records live.

The site API cannot list user groups or read their members, so what the tool created, adopted
and applied is part of its correctness. Those records must be shared by every runner of a
pipeline, never silently lost, and changed by one apply at a time. Everything the engine
records goes through the one interface below; the engine never sees a path or a connection.

Two backends implement it:

* ``directory`` (``reconciler.state.directory``): files under a directory, the default; a
  directory on a shared disk works across runners, lock included.
* ``postgresql`` (``reconciler.state.postgres``): a PostgreSQL database, for teams and CI.

What a backend keeps, per site (the site's normalised URL is the key, see
``reconciler.api.config.check_site_url``):

* **records**: one JSON document (the engine's ``records_document.to_data``), versioned.
  ``save`` is a compare-and-swap: it succeeds only if the stored version is still the one the
  caller loaded, so a concurrent writer gets ``ConflictingUpdate``, never a lost update. Every
  save keeps the version it replaces (history), with who saved it, when, for which plan and a
  summary.
* **the apply lock**: one per site, never wider. A lease: the holder renews it while it works;
  a holder that dies or vanishes loses it within ``lease_seconds``. Each lease has a fencing
  token, and every write made under a lease (``save``, ``journal_append``) is refused with
  ``LockLost`` once that lease has expired or been taken over.
* **the journal**: entries appended during an apply (intent before each write, result after),
  read back by the next lock holder on any runner, cleared atomically with the ``save`` that
  folds them in.
* **the plan key**: a random per-site secret that authenticates saved plans (HMAC). It never
  leaves the backend except to be copied between backends (``state push``/``pull``).

Documents are plain JSON-able dicts that the backend does not interpret, except for one key:
a records document's top-level ``"site"`` must equal the site asked for, or ``load`` refuses
it (records of another site are never used).
"""

from __future__ import annotations

import getpass
import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from reconciler.errors import EXIT_LOCKED, StateError

DEFAULT_LEASE_SECONDS = 30.0
"""How long a lock holder that stops renewing keeps the lock: the bound on a dead holder."""

BackendKind = Literal["directory", "postgresql"]

CI_JOB_VARIABLES: tuple[tuple[str, ...], ...] = (
    ("GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_JOB"),
    ("CI_PROJECT_PATH", "CI_JOB_ID"),  # GitLab
    ("BUILDKITE_PIPELINE_SLUG", "BUILDKITE_JOB_ID"),
    ("CIRCLE_PROJECT_REPONAME", "CIRCLE_BUILD_NUM"),
    ("JOB_NAME", "BUILD_NUMBER"),  # Jenkins
    ("BUILD_REPOSITORY_NAME", "BUILD_BUILDID"),  # Azure Pipelines
)


class LockHeld(StateError):
    """Another runner holds the site's lock (and kept it for as long as we would wait).

    Its own exit code (4): nothing was done, and a pipeline can tell "busy, retry" from a
    failure."""

    exit_code = EXIT_LOCKED

    def __init__(self, message: str, *, holder: Holder, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.holder = holder


class LockLost(StateError):
    """This runner's lease expired or was taken over: it may no longer write records."""


class ConflictingUpdate(StateError):
    """The records changed since they were loaded: saving would lose someone's update."""


MAX_HOLDER_TEXT = 200
"""Each part of a holder (host, user, command, CI job) is cut to this many characters: a lock
refusal names the holder, and a 10 MB name in a lease row must not become a 10 MB message."""
MAX_SUMMARY_TEXT = 1000


def plain_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (marked with "…"), with NUL and lone surrogates
    (which a PostgreSQL text column refuses) shown as U+FFFD."""
    if not text.isprintable() or any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = "".join("\ufffd" if c == "\0" or 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds (or asks for) a lock, as a refusal names them."""

    host: str
    pid: int
    user: str
    command: str
    ci_job: str | None = None
    since: str | None = None  # ISO 8601 UTC; set by the backend when the lock is taken

    def __post_init__(self) -> None:
        for name in ("host", "user", "command"):
            object.__setattr__(self, name, plain_text(getattr(self, name), MAX_HOLDER_TEXT))
        if self.ci_job is not None:
            object.__setattr__(self, "ci_job", plain_text(self.ci_job, MAX_HOLDER_TEXT))

    @classmethod
    def current(cls, command: str, env: Mapping[str, str] | None = None) -> Holder:
        """This process, with the CI job it runs in when the usual CI variables say so."""
        env = os.environ if env is None else env
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = str(os.getuid())
        return cls(socket.gethostname(), os.getpid(), user, command, ci_job_of(env))

    def describe(self) -> str:
        """``apply site/ by alice on runner-7 (process 4242, CI job org/repo#99), since …``."""
        job = f", CI job {self.ci_job}" if self.ci_job else ""
        since = f", since {self.since}" if self.since else ""
        return f"{self.command} by {self.user} on {self.host} (process {self.pid}{job}){since}"

    def to_data(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "pid": self.pid,
            "user": self.user,
            "command": self.command,
            "ci_job": self.ci_job,
            "since": self.since,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Holder:
        """A holder as stored; unreadable fields become placeholders, never an exception."""
        try:
            pid = int(data.get("pid") or -1)
        except (TypeError, ValueError):
            pid = -1
        return cls(
            host=str(data.get("host") or "an unknown host"),
            pid=pid,
            user=str(data.get("user") or "an unknown user"),
            command=str(data.get("command") or "an unknown command"),
            ci_job=None if data.get("ci_job") is None else str(data["ci_job"]),
            since=None if data.get("since") is None else str(data["since"]),
        )


def ci_job_of(env: Mapping[str, str]) -> str | None:
    """The CI job this process runs in, from the usual CI variables, or ``None``."""
    for names in CI_JOB_VARIABLES:
        values = [env.get(name, "") for name in names]
        if all(values):
            return "/".join(values)
    return None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The records of a site at one version. ``version`` 0 and ``data`` None: nothing saved."""

    version: int
    data: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class SaveInfo:
    """What history keeps about a save besides the records themselves."""

    saved_by: str  # ``Holder.describe()`` of the saver, or a shorter "user@host"
    summary: str  # one line: what changed
    plan: str | None = None  # checksum of the plan this save belongs to, if any

    def __post_init__(self) -> None:
        # History lines stay lines: bounded, and free of what a text column refuses.
        object.__setattr__(self, "saved_by", plain_text(self.saved_by, MAX_HOLDER_TEXT * 3))
        object.__setattr__(self, "summary", plain_text(self.summary, MAX_SUMMARY_TEXT))


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """One entry of a site's history."""

    version: int
    saved_at: str  # ISO 8601 UTC
    saved_by: str
    summary: str
    plan: str | None = None


class Lease(ABC):
    """A held site lock. Release it with ``release()`` or by leaving the ``with`` block.

    ``token`` is the fencing token: strictly larger for every new lease of the same site, and
    checked by the backend on every write made under this lease.
    """

    token: int
    holder: Holder
    took_over_from: Holder | None = None  # a holder whose expired or dead lock was taken

    @abstractmethod
    def check(self) -> None:
        """Raise ``LockLost`` when this lease is no longer held (expired, taken over)."""

    @abstractmethod
    def check_in_time(self) -> None:
        """Raise ``LockLost`` unless this process can be sure, by its own monotonic clock and
        without I/O, that the lease still holds: its last renewal was recent enough.

        Made just before each write to the *site*, which knows nothing of leases: a holder
        frozen past its lease, whose successor may be changing the site, must not send the
        writes it had queued (``check`` asks the backend; the records fence themselves).
        """

    @abstractmethod
    def release(self) -> None:
        """Give the lock up; a lease already lost is released without error."""

    def __enter__(self) -> Lease:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class RecordStore(ABC):
    """Where one site's records are stored (a directory or PostgreSQL): the storage, not the
    model (``core.records.Records``). Not thread-safe; one per command."""

    kind: BackendKind
    site: str  # the normalised site URL: the key
    location: str  # where, for messages and saved plans; never holds a password
    lease_seconds: float  # the lease ``lock`` takes unless told otherwise

    @abstractmethod
    def load(self) -> Snapshot:
        """The newest saved records (``Snapshot(0, None)`` when none were ever saved).

        Raises ``StateError`` when the stored document belongs to another site than
        ``self.site`` (it is never used) or cannot be read.
        """

    @abstractmethod
    def save(
        self,
        data: dict[str, Any],
        *,
        expected_version: int,
        info: SaveInfo,
        lease: Lease,
        clear_journal: bool = False,
    ) -> int:
        """Store ``data`` as version ``expected_version + 1`` and return that number.

        Compare-and-swap: ``ConflictingUpdate`` when the newest stored version is not
        ``expected_version``. Fenced: ``LockLost`` when ``lease`` is no longer held. With
        ``clear_journal``, the journal is emptied in the same step (the engine folded it in).
        """

    @abstractmethod
    def lock(
        self,
        holder: Holder,
        *,
        wait_seconds: float = 0.0,
        lease_seconds: float | None = None,
    ) -> Lease:
        """Take the site's lock, waiting up to ``wait_seconds`` for a live holder to let go.

        A lock whose holder stopped renewing it for ``lease_seconds`` (the process died, the
        machine vanished) is taken over, and the new lease says from whom. Otherwise
        ``LockHeld`` names the real holder. ``lease_seconds`` defaults to the one the records
        were opened with (``open_records(..., lease_seconds=...)``), so the engine need not
        know it.
        """

    @abstractmethod
    def journal_append(self, lease: Lease, entry: dict[str, Any]) -> None:
        """Append one entry, durably, before returning. Fenced like ``save``."""

    def journal_append_many(self, lease: Lease, entries: list[dict[str, Any]]) -> None:
        """Append ``entries`` in order, all durable before returning, as one write where the
        backend can (one ``fsync``, one transaction): an apply's concurrent writes journal
        together (``engine.apply.journal.Journal.append``). Fenced like ``save``."""
        for entry in entries:
            self.journal_append(lease, entry)

    @abstractmethod
    def journal_entries(self) -> list[dict[str, Any]]:
        """The journal's entries in the order they were appended (empty when none)."""

    @abstractmethod
    def history(self) -> list[VersionInfo]:
        """Every saved version, oldest first."""

    @abstractmethod
    def load_version(self, version: int) -> Snapshot:
        """One saved version; ``StateError`` when there is no such version."""

    @abstractmethod
    def plan_key(self, *, create: bool = True) -> bytes | None:
        """The site's secret for authenticating saved plans, created on first use; with
        ``create=False``, None when there is none (checking a plan never creates one)."""

    @abstractmethod
    def import_site(
        self, versions: list[tuple[VersionInfo, dict[str, Any]]], key: bytes, *, lease: Lease
    ) -> str | None:
        """Replace this site's history and plan key with copies (``state push``/``pull``);
        why the plan key was not copied (None: it was): no backend keeps one where a reader
        of the records could read it.

        Used only under the lock by the migration command, after it checked that it does not
        overwrite newer records. Fenced like ``save``: ``LockLost`` when ``lease`` is gone.
        """

    @abstractmethod
    def close(self) -> None:
        """Let go of connections or handles (the lock is released by its lease)."""

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class StateLocation:
    """Where records live, parsed from ``--state``, ``--state-dir``, ``RECONCILER_STATE`` or
    the manifest's ``site.state``.

    ``display`` is safe to print and to store in a plan (a PostgreSQL URL without its
    password); ``target`` is what the backend connects to or opens.
    """

    kind: BackendKind
    target: str
    display: str
    schema: str | None = None  # PostgreSQL: the schema that holds the tables
    options: dict[str, str] = field(default_factory=dict)
