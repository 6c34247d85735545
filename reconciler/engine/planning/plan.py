"""The plan: a typed value object that every renderer, the plan file and ``apply`` read.

A plan holds the ordered actions (one API call each, typed: ``reconciler.kinds.registry``),
the changes they make object by object (``core/changes.py``: one shape for every kind), the
changes to the tool's records alone (``record_changes``: a ``previously`` move, the record of
an object that is gone), what is left alone and why, what apply would refuse (``guards``),
the live facts the actions depend on (``expects``) and where it comes from (``context``, with
the manifest it was made from).
``data`` is derived from it and is the plan file's content (``docs/plan-format.md``):
``PlanDocument`` is that content as a type, key by key, which the model's one codec writes
and ``Plan.from_data`` reads back as strictly as every document.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any, NewType

from reconciler import codec
from reconciler.access.model import AccessChange
from reconciler.core.actions import WriteAction
from reconciler.core.changes import Change, ObjectKind
from reconciler.core.expiry import Expiring
from reconciler.core.planning import Kept, PlanOptions, RecordChange
from reconciler.engine.planning.changes_format import read_change, write_change
from reconciler.engine.planning.manifest_snapshot import desired_to_data
from reconciler.errors import RefusedForSafety
from reconciler.kinds.change import Basis as Basis  # how a fact was learnt
from reconciler.kinds.registry import action_from_data
from reconciler.model import DesiredSite

PLAN_FORMAT = "site-reconciler-plan"
PLAN_FORMAT_VERSION = 3
OPTIONAL_KEYS = ("access", "record_changes", "expiring", "at")
"""Keys written only when set: plan files saved before them, or without them, keep their
bytes and their checksums."""


@dataclass(frozen=True, slots=True)
class Unmanaged:
    """An object on the site that the manifest never managed: listed, never touched."""

    kind: ObjectKind
    name: str
    id: int


@dataclass(frozen=True, slots=True)
class PlanContext:
    """Where a plan comes from: the site, the records it was made against, the manifest."""

    site: str
    created_at: str
    tool_version: str
    manifest_files: tuple[str, ...] = ()
    manifest_digest: str = ""
    # The manifest's snapshot, to re-derive the plan, as a plan file holds it (None in the
    # process that made the plan: ``snapshot`` makes it from ``desired_site`` when needed).
    desired: Mapping[str, Any] | None = None
    state: str | None = None  # where the records live (never a password)
    scope: Mapping[str, list[str]] | None = None  # --changed: the objects planned, by kind
    # The same manifest, typed, in the process that made the plan: read there instead of
    # ``desired`` read back (never written; a plan read from a file has None).
    desired_site: DesiredSite | None = field(default=None, compare=False, repr=False)
    # ``desired_site``'s snapshot, when it was made while the site was read (an apply's,
    # ``desired_to_data_meanwhile``): what ``snapshot`` would make.
    made_snapshot: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    def snapshot(self) -> Mapping[str, Any] | None:
        """The manifest's snapshot for the plan file and its checksum: the one read back, or
        made from the typed manifest (now, unless it was while the site was read). Only a
        plan that is written or applied needs it (a large manifest's took 20 ms of a plan's
        tail)."""
        if self.desired is None and self.desired_site is not None:
            return self.made_snapshot or desired_to_data(self.desired_site)
        return self.desired


@dataclass(frozen=True, repr=False)
class Plan:
    """A plan. Build it with ``planner.build_plan``; read a saved one with ``from_data``."""

    context: PlanContext
    options: PlanOptions
    actions: tuple[WriteAction, ...]
    changes: tuple[Change, ...] = ()
    kept: tuple[Kept, ...] = ()
    unmanaged: tuple[Unmanaged, ...] = ()
    unobservable: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()  # paragraphs shown first: what the plan could not judge
    guards: tuple[str, ...] = ()  # why apply would refuse it (empty: it would not)
    expects: Mapping[str, Any] = field(default_factory=dict)
    # Who gains or loses access (``access/changes.py``); None: a plan file saved before plans
    # carried it (its checksum is over the keys it had, so none is added when it is read).
    access: tuple[AccessChange, ...] | None = None
    # The records alone; the site is unchanged. None, as for ``access``: a plan file saved
    # before plans carried them.
    record_changes: tuple[RecordChange, ...] | None = None
    # The manifest's entries that expire within the notice window (``core/expiry.py``);
    # None: none (and none in the file: a plan without expiries keeps its bytes).
    expiring: tuple[Expiring, ...] | None = None
    at: date | None = None  # --at: the day a preview was made for; None: today

    def __repr__(self) -> str:
        """Short: the generated one would render every action (megabytes on a large site),
        and asyncio asks for it when it hands the result back."""
        return f"<Plan for {self.site}: {len(self.actions)} actions, {len(self.changes)} changes>"

    @property
    def site(self) -> str:
        return self.context.site

    @property
    def has_changes(self) -> bool:
        """API calls to make, or records to change: either needs an apply."""
        return bool(self.actions or self.changed_records)

    @property
    def changed_records(self) -> tuple[RecordChange, ...]:
        """The changes to the records alone (none in a plan file saved before plans had them)."""
        return self.record_changes or ()

    def raise_if_unsafe(self, force: bool = False) -> None:
        """Refuse (exit 3) a plan that trips a guard, unless it was or is forced."""
        if self.guards and not (force or self.options.force):
            raise RefusedForSafety(
                "Apply refuses this plan: " + "; ".join(self.guards) + ".",
                hint="Review the plan; if it is what you want, run apply again with --force.",
            )

    @property
    def summary(self) -> dict[str, int]:
        """Objects by what happens to them, and the calls apply will make."""
        actions = Counter(change.action for change in self.changes)
        counts = {
            "create": actions["create"] + actions["replace"],
            "change": actions["update"],
            "delete": sum(1 for a in self.actions if a.deletion() is not None),
            "needs_replacement": actions["needs-replacement"],
            "api_calls": len(self.actions),
        }
        if self.record_changes is not None:  # not in a plan file saved before: its checksum
            counts["records"] = len(self.record_changes)
        return counts

    def calls_by_method(self) -> dict[str, int]:
        return dict(sorted(Counter(action.method for action in self.actions).items()))

    @cached_property
    def data(self) -> dict[str, Any]:
        """The plan as the JSON document a plan file holds (without its seal)."""
        data: dict[str, Any] = codec.to_data(PlanDocument.of(self))
        for optional in OPTIONAL_KEYS:  # absent from plans saved before them
            if data[optional] is None:
                del data[optional]
        return data

    @property
    def checksum(self) -> str:
        """SHA-256 of the canonical plan data: the plan's identity (applied at most once)."""
        return hashlib.sha256(canonical(self.data)).hexdigest()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Plan:
        """A plan as a file holds it. Raises ``ValueError`` (``codec.DecodeError``) where the
        document does not describe one."""
        return codec.from_data(data, PlanDocument).plan()


ManifestSnapshot = NewType("ManifestSnapshot", Mapping[str, Any])
"""The manifest as a saved plan carries it (``engine/planning/manifest_snapshot.py``): stored
as it is, not walked value by value (a large manifest's is over a megabyte), read back by that
module."""


def _snapshot_read(data: Any) -> ManifestSnapshot:
    if not isinstance(data, Mapping):
        raise ValueError(f"the manifest snapshot must be an object, not {data!r:.40}")
    return ManifestSnapshot(data)


codec.hook(ManifestSnapshot, lambda snapshot: snapshot, _snapshot_read)
codec.hook(WriteAction, lambda action: action.to_data(), action_from_data, exact=True)
codec.hook(Change, write_change, read_change)  # the keys plan files have always had


@dataclass(frozen=True, slots=True)
class ManifestPart:
    files: tuple[str, ...]
    digest: str
    desired: ManifestSnapshot | None = None


@dataclass(frozen=True, slots=True)
class SafetyPart:
    problems: tuple[str, ...]
    forced: bool = False  # written for people; a plan read back takes it from its options


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanDocument:
    """A plan file's content (``docs/plan-format.md``), key by key in the file's order: what
    the codec writes and reads. ``summary`` and ``safety.forced`` are written for people and
    derived again when a plan is read."""

    format: str = PLAN_FORMAT
    format_version: int = PLAN_FORMAT_VERSION
    site: str
    created_at: str
    at: date | None = None
    tool_version: str
    state: str | None = None
    scope: Mapping[str, list[str]] | None = None
    manifest: ManifestPart
    options: PlanOptions
    summary: Mapping[str, int] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    expiring: tuple[Expiring, ...] | None = None
    changes: tuple[Change, ...] = ()
    access: tuple[AccessChange, ...] | None = None
    actions: tuple[WriteAction, ...]
    record_changes: tuple[RecordChange, ...] | None = None
    kept: tuple[Kept, ...] = ()
    unmanaged: tuple[Unmanaged, ...] = ()
    unobservable: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    safety: SafetyPart
    expects: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: Plan) -> PlanDocument:
        context = plan.context
        snapshot = context.snapshot()
        desired = None if snapshot is None else ManifestSnapshot(snapshot)
        return cls(
            site=context.site,
            created_at=context.created_at,
            at=plan.at,
            tool_version=context.tool_version,
            state=context.state,
            scope=context.scope,
            manifest=ManifestPart(context.manifest_files, context.manifest_digest, desired),
            options=plan.options,
            summary=plan.summary,
            notices=plan.notices,
            expiring=plan.expiring,
            changes=plan.changes,
            access=plan.access,
            actions=plan.actions,
            record_changes=plan.record_changes,
            kept=plan.kept,
            unmanaged=plan.unmanaged,
            unobservable=plan.unobservable,
            warnings=plan.warnings,
            safety=SafetyPart(plan.guards, bool(plan.guards) and plan.options.force),
            expects=plan.expects,
        )

    def plan(self) -> Plan:
        context = PlanContext(
            site=self.site,
            created_at=self.created_at,
            tool_version=self.tool_version,
            manifest_files=self.manifest.files,
            manifest_digest=self.manifest.digest,
            desired=self.manifest.desired,
            state=self.state,
            scope=self.scope,
        )
        return Plan(
            context=context,
            options=self.options,
            actions=self.actions,
            changes=self.changes,
            kept=self.kept,
            unmanaged=self.unmanaged,
            unobservable=self.unobservable,
            warnings=self.warnings,
            notices=self.notices,
            guards=self.safety.problems,
            expects=self.expects,
            access=self.access,
            record_changes=self.record_changes,
            expiring=self.expiring,
            at=self.at,
        )


def canonical(data: Mapping[str, Any]) -> bytes:
    """The bytes a checksum or a seal is computed over: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
