"""What the tool has recorded about a site: the facts the API will not report back.

The site API cannot list user groups or their members, and does not report some of a
workspace's settings, nor whether its overrides are switched on. The tool therefore records what it
created, adopted and applied, and every report says which facts were *observed* on the site
and which were *recorded* here. Only facts the tool created or read are ever recorded: a
setting it could not read is ``None`` (unknown), never a guess.

``Records`` is immutable. It changes in one way only: ``reduce(records, events)`` folds
events -- the journal's "this write was done", adoption, forgetting, a plan applied -- into a
new ``Records``. Reads never change records; a workflow saves explicitly, through the state
backend (``reconciler.state``), which stores the document ``engine/records/document.py``
writes and reads by the model's one codec: a field added to a record is stored and read
without code here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from reconciler.kinds.change import Known as Known  # records hold facts of every kind
from reconciler.kinds.change import Origin as Origin
from reconciler.kinds.group import RecordedGroup as RecordedGroup  # each kind's record type
from reconciler.kinds.user import RecordedUser as RecordedUser
from reconciler.kinds.workspace import RecordedWorkspace as RecordedWorkspace
from reconciler.model import Policy

MAX_APPLIED_PLANS = 200
"""Plan checksums kept to refuse a second application; older plans are stale anyway."""


class PendingWrite(Protocol):
    """A write of unknown outcome, as the records hold it until a read of the site settles it:
    the write action itself (``kinds/*/actions.py``, which fold into the records and so are not
    imported here), or a stored one this version cannot read (``UnreadableWrite``). The
    records need of it only what is stored: ``to_data()``, as the actions write it."""

    def to_data(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class UnreadableWrite:
    """A pending write as stored, which this version cannot read back (another version's
    write kind, or a damaged entry): kept as it was, written back unchanged, and reported
    (``reason``) and dropped when pending writes are settled."""

    data: dict[str, Any]
    reason: str

    def to_data(self) -> dict[str, Any]:
        return self.data


@dataclass(frozen=True, slots=True)
class DriftSeen:
    """The last drift report a notification or ``drift --since-last`` went by: when, and a
    short digest of each item it listed (``engine/drift_news.py``), so the next one says only
    what is new. Digests, not the items: the records stay small on a site that drifts a lot."""

    at: str
    items: tuple[str, ...] = ()


AccessEnd = tuple[int | None, int | None]
"""An access an apply ended: (user ID, workspace ID), each None for "every": a user deleted
leaves every workspace, a workspace deleted loses every member."""


@dataclass(frozen=True, slots=True)
class PlanRun:
    """How far the apply of one plan got: ``done`` of its ``actions`` were carried out.

    Counted from what ran (the apply's own outcomes, else the journal an interrupted apply
    left), never guessed from what a fresh plan still wants: once some writes are done, the
    rest of a plan need not look the same (a created user's ID replaces "known after
    apply"), and a plan cut short must not be called finished (issue 31)."""

    actions: int
    done: int = 0
    unknown: int = 0  # sent, outcome unknown: the next read of the site settles them
    # The accesses its done writes ended: how ``review close`` names the apply that carried
    # out a revocation (who ran it and when are the history's, by the plan's checksum).
    ended: tuple[AccessEnd, ...] = ()


@dataclass(frozen=True, slots=True)
class Records:
    """Everything recorded for one site, keyed by object name as the manifest names them."""

    site: str
    workspaces: Mapping[str, RecordedWorkspace] = field(default_factory=dict)
    groups: Mapping[str, RecordedGroup] = field(default_factory=dict)
    users: Mapping[str, RecordedUser] = field(default_factory=dict)
    applied_plans: tuple[str, ...] = ()
    pending: tuple[PendingWrite, ...] = ()  # writes of unknown outcome, in the order sent
    # Until when (Unix time) a pending write may still land on the site: the sender's
    # --timeout after it sent it. A read before then does not prove a creation did not happen.
    pending_until: float | None = None
    # What a change-scoped plan compares against: the desired form of each declared object
    # when the site last matched it ("workspace:Name" -> digest), the user references last
    # resolved (reference -> (user ID, username)), and when the whole site was last read.
    digests: Mapping[str, str] = field(default_factory=dict)
    references: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    last_full_read: str | None = None
    # The policy the last apply ran under (its manifest's): a saved plan never runs under a
    # weaker one, whatever policy the plan file carries (``engine/planning/policy.py``).
    policy: Policy | None = None
    # Set by ``state migrate`` on the copy it left behind: where the records went, and when.
    moved_to: Mapping[str, str] | None = None
    # The last drift report sent or shown with --notify / --since-last.
    last_drift: DriftSeen | None = None
    # How far the apply of each applied plan got, by checksum (those in applied_plans).
    plan_runs: Mapping[str, PlanRun] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when nothing at all is recorded (a fresh runner, or a new backend)."""
        return not (self.workspaces or self.groups or self.users or self.pending)

    def managed_workspaces(self) -> dict[str, RecordedWorkspace]:
        return {name: ws for name, ws in self.workspaces.items() if ws.managed}

    def managed_groups(self) -> dict[str, RecordedGroup]:
        return {name: g for name, g in self.groups.items() if g.managed}

    def recorded_memberships(self) -> int:
        """How many user memberships the tool has recorded: the base of the removal guard."""
        return sum(len(w.members) for w in self.workspaces.values()) + sum(
            len(g.members) for g in self.groups.values()
        )


# --- the one way records change ----------------------------------------------------------


class Tables:
    """The mutable working copy that ``reduce`` lends to each event, and only to events."""

    def __init__(self, records: Records) -> None:
        self.site = records.site
        self.workspaces = dict(records.workspaces)
        self.groups = dict(records.groups)
        self.users = dict(records.users)
        self.applied_plans = list(records.applied_plans)
        self.pending = list(records.pending)
        self.pending_until = records.pending_until
        self.digests = dict(records.digests)
        self.references = dict(records.references)
        self.last_full_read = records.last_full_read
        self.policy = records.policy
        self.moved_to = records.moved_to
        self.last_drift = records.last_drift
        self.plan_runs = dict(records.plan_runs)

    def frozen(self) -> Records:
        applied = tuple(self.applied_plans[-MAX_APPLIED_PLANS:])
        return Records(
            self.site,
            self.workspaces,
            self.groups,
            self.users,
            applied,
            tuple(self.pending),
            self.pending_until if self.pending else None,
            self.digests,
            self.references,
            self.last_full_read,
            self.policy,
            self.moved_to,
            self.last_drift,
            {key: run for key, run in self.plan_runs.items() if key in applied},
        )


class Event:
    """Something that changes the records. Subclasses say what, in ``fold``."""

    def fold(self, tables: Tables) -> None:
        raise NotImplementedError


def reduce(records: Records, events: Iterable[Event]) -> Records:
    """``records`` with ``events`` folded in, in order. ``records`` itself is unchanged."""
    tables = Tables(records)
    for event in events:
        event.fold(tables)
    return tables.frozen()


@dataclass(frozen=True, slots=True)
class PlanApplied(Event):
    """A saved plan is being applied: it can never be applied again, on any runner.
    ``actions``: how many it has, so a second attempt can say how far the first got."""

    checksum: str
    actions: int | None = None

    def fold(self, tables: Tables) -> None:
        if self.checksum not in tables.applied_plans:
            tables.applied_plans.append(self.checksum)
            if self.actions is not None:
                tables.plan_runs[self.checksum] = PlanRun(self.actions)


@dataclass(frozen=True, slots=True)
class PlanProgress(Event):
    """``done`` actions of the plan ``checksum`` were carried out and ``unknown`` more sent
    with no answer (by its apply's own count, or by the journal it left when cut short)."""

    checksum: str
    done: int
    unknown: int = 0
    ended: tuple[AccessEnd, ...] = ()  # the accesses the done writes ended

    def fold(self, tables: Tables) -> None:
        run = tables.plan_runs.get(self.checksum)
        if run is not None:
            done = min(run.actions, self.done)
            unknown = min(run.actions - done, self.unknown)
            ended = tuple(dict.fromkeys((*run.ended, *self.ended)))
            tables.plan_runs[self.checksum] = replace(run, done=done, unknown=unknown, ended=ended)


@dataclass(frozen=True, slots=True)
class PolicyApplied(Event):
    """An apply ran under this policy: the floor for every later saved plan."""

    policy: Policy

    def fold(self, tables: Tables) -> None:
        tables.policy = self.policy


@dataclass(frozen=True, slots=True)
class DriftReported(Event):
    """A drift report was sent (``--notify``) or shown (``--since-last``): the next one
    reports only what is not in this one."""

    seen: DriftSeen

    def fold(self, tables: Tables) -> None:
        tables.last_drift = self.seen


@dataclass(frozen=True, slots=True)
class MembersGone(Event):
    """Recorded members of a workspace or group whose users no longer exist on the site."""

    kind: Literal["workspace", "group"]
    name: str
    user_ids: frozenset[int]

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = tables.workspaces if self.kind == "workspace" else tables.groups
        record = table.get(self.name)
        if record is not None:
            table[self.name] = replace(record, members=record.members - self.user_ids)


@dataclass(frozen=True, slots=True)
class Forgotten(Event):
    """A person ran ``state forget``: the record goes, the site is not changed."""

    kind: Literal["workspace", "group", "user"]
    name: str

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = getattr(tables, f"{self.kind}s")
        table.pop(self.name, None)


@dataclass(frozen=True, slots=True)
class WorkspaceAdopted(Event):
    name: str
    record: RecordedWorkspace

    def fold(self, tables: Tables) -> None:
        tables.workspaces[self.name] = self.record


@dataclass(frozen=True, slots=True)
class GroupAdopted(Event):
    name: str
    record: RecordedGroup

    def fold(self, tables: Tables) -> None:
        tables.groups[self.name] = self.record


@dataclass(frozen=True, slots=True)
class UserAdopted(Event):
    username: str
    record: RecordedUser

    def fold(self, tables: Tables) -> None:
        tables.users[self.username] = self.record


@dataclass(frozen=True, slots=True)
class UserReferenceRenamed(Event):
    """The manifest now writes a recorded username in another case (``dave`` -> ``Dave``):
    the same person, so the record follows the manifest's spelling (usernames are compared
    without regard to case)."""

    old: str
    new: str

    def fold(self, tables: Tables) -> None:
        record = tables.users.pop(self.old, None)
        if record is not None and self.new not in tables.users:
            tables.users[self.new] = record


@dataclass(frozen=True, slots=True)
class SourceRecorded(Event):
    """The manifest file that declares a recorded object, as of the last apply or adoption."""

    kind: Literal["workspace", "group", "user"]
    name: str
    source: str

    def fold(self, tables: Tables) -> None:
        tables_by_kind: dict[str, dict[str, Any]] = {
            "workspace": tables.workspaces,
            "group": tables.groups,
            "user": tables.users,
        }
        table = tables_by_kind[self.kind]
        record = table.get(self.name)
        if record is not None:
            table[self.name] = replace(record, source=self.source)


@dataclass(frozen=True, slots=True)
class Reconciled(Event):
    """What an apply leaves for change-scoped plans to compare against.

    ``digests`` of the declared objects the site now matches replace theirs; ``dropped`` are
    keys of objects no longer declared; ``references`` join those resolved before; a full
    read sets ``full_read``.
    """

    digests: Mapping[str, str]
    dropped: tuple[str, ...] = ()
    references: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    full_read: str | None = None

    def fold(self, tables: Tables) -> None:
        for key in self.dropped:
            tables.digests.pop(key, None)
        tables.digests.update(self.digests)
        tables.references.update(self.references)
        if self.full_read is not None:
            tables.last_full_read = self.full_read


@dataclass(frozen=True, slots=True)
class PendingCleared(Event):
    """Writes of unknown outcome were settled against a fresh read of the site."""

    def fold(self, tables: Tables) -> None:
        tables.pending.clear()
        tables.pending_until = None
