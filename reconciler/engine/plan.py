"""The plan: a typed value object that every renderer, the plan file and ``apply`` read.

A plan holds the ordered actions (one API call each, typed: ``reconciler.engine.actions``),
the changes they make object by object (``engine/changes.py``: one shape for every kind), the
changes to the tool's records alone (``record_changes``: a ``previously`` move, the record of
an object that is gone), what is left alone and why, what apply would refuse (``guards``),
the live facts the actions depend on (``expects``) and where it comes from (``context``, with
the manifest it was made from).
``data`` is derived from it and is the plan file's content (``docs/plan-format.md``);
``Plan.from_data`` reads a file back.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from reconciler import codec
from reconciler.access.model import AccessChange
from reconciler.engine.actions import WriteAction, action_from_data
from reconciler.engine.changes import Change, ObjectKind
from reconciler.engine.changes_format import read_changes, write_changes
from reconciler.errors import RefusedForSafety
from reconciler.kinds.change import Basis as Basis  # how a fact was learnt
from reconciler.model import DesiredSite

PLAN_FORMAT = "site-reconciler-plan"
PLAN_FORMAT_VERSION = 3

RecordAction = Literal["move", "forget", "drop-members"]


@dataclass(frozen=True, slots=True)
class RecordChange:
    """A change to the tool's records alone: the site is not touched, no API call is made.

    It is a change all the same: until an apply saves it, the records disagree with the
    manifest and the site (a rename whose record did not move is deleted and created by the
    next plan that drops ``previously``), so it counts for ``--detailed-exitcode`` and drift,
    and a saved plan carries it. ``move``: the record of ``old_name`` becomes that of ``name``
    (``previously``). ``forget``: the object left the manifest and is gone from the site.
    ``drop-members``: recorded members whose users are gone from the site (``user_ids``).
    """

    kind: ObjectKind
    name: str
    action: RecordAction
    id: int | None = None
    old_name: str | None = None
    user_ids: tuple[int, ...] = ()

    def detail(self) -> str:
        """What happens to the object's record, in words every report shares."""
        if self.action == "move":
            return f'move the record from "{self.old_name}" (previously:)'
        if self.action == "forget":
            return "forget the record (gone from the site and the manifest)"
        users = ", ".join(f"#{user_id}" for user_id in self.user_ids)
        return f"drop users {users} from the record (gone from the site)"

    def describe(self) -> str:
        ident = f" (id {self.id})" if self.id is not None else ""
        return f'{self.kind} "{self.name}"{ident}: {self.detail()}'


codec.rename(RecordChange, omit_defaults=True)


@dataclass(frozen=True, slots=True)
class Kept:
    """A managed object that left the manifest and stays, with the reason.

    ``on_site`` is False for a record whose object may be missing on the site but cannot be
    proved gone (a user list read in part): kept, never dropped on a guess.
    """

    kind: ObjectKind
    name: str
    reason: str
    on_site: bool = True


@dataclass(frozen=True, slots=True)
class Unmanaged:
    """An object on the site that the manifest never managed: listed, never touched."""

    kind: ObjectKind
    name: str
    id: int


@dataclass(frozen=True, slots=True)
class PlanOptions:
    replace: frozenset[str] = frozenset()  # workspaces the user allowed to be replaced
    force: bool = False  # override the guards
    assume_no_groups: bool = False  # a first apply on a site that does not list groups
    changed: bool = False  # plan only what changed since the last apply (engine/scope.py)
    targets: tuple[str, ...] = ()  # --target patterns (engine/targets.py)
    excludes: tuple[str, ...] = ()  # --exclude patterns


@dataclass(frozen=True, slots=True)
class PlanContext:
    """Where a plan comes from: the site, the records it was made against, the manifest."""

    site: str
    created_at: str
    tool_version: str
    manifest_files: tuple[str, ...] = ()
    manifest_digest: str = ""
    desired: Mapping[str, Any] | None = None  # the manifest's snapshot, to re-derive the plan
    state: str | None = None  # where the records live (never a password)
    scope: Mapping[str, list[str]] | None = None  # --changed: the objects planned, by kind
    # The same manifest, typed, in the process that made the plan: read there instead of
    # ``desired`` read back (never written; a plan read from a file has None).
    desired_site: DesiredSite | None = field(default=None, compare=False, repr=False)

    def to_data(self) -> dict[str, Any]:
        return {
            "site": self.site,
            "created_at": self.created_at,
            "tool_version": self.tool_version,
            "state": self.state,
            "scope": dict(self.scope) if self.scope is not None else None,
            "manifest": {
                "files": list(self.manifest_files),
                "digest": self.manifest_digest,
                "desired": self.desired,
            },
        }


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
        return {
            "format": PLAN_FORMAT,
            "format_version": PLAN_FORMAT_VERSION,
            **self.context.to_data(),
            "options": codec.to_data(self.options),
            "summary": self.summary,
            "notices": list(self.notices),
            "changes": write_changes(self.changes),
            **({} if self.access is None else {"access": codec.to_data(self.access, _ACCESS)}),
            "actions": [action.to_data() for action in self.actions],
            **(
                {}
                if self.record_changes is None
                else {"record_changes": codec.to_data(self.record_changes, _RECORD_CHANGES)}
            ),
            "kept": codec.to_data(self.kept, tuple[Kept, ...]),
            "unmanaged": codec.to_data(self.unmanaged, tuple[Unmanaged, ...]),
            "unobservable": list(self.unobservable),
            "warnings": list(self.warnings),
            "safety": {
                "problems": list(self.guards),
                "forced": bool(self.guards) and self.options.force,
            },
            "expects": dict(self.expects),
        }

    @property
    def checksum(self) -> str:
        """SHA-256 of the canonical plan data: the plan's identity (applied at most once)."""
        return hashlib.sha256(canonical(self.data)).hexdigest()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Plan:
        """A plan as a file holds it. Raises ``KeyError``/``ValueError``/``TypeError``."""
        manifest = data["manifest"]
        context = PlanContext(
            site=str(data["site"]),
            created_at=str(data["created_at"]),
            tool_version=str(data["tool_version"]),
            manifest_files=tuple(str(f) for f in manifest["files"]),
            manifest_digest=str(manifest["digest"]),
            desired=manifest.get("desired"),
            state=data.get("state"),
            scope=data.get("scope"),
        )
        safety = data["safety"]
        return cls(
            context=context,
            options=codec.from_data(data["options"], PlanOptions),
            actions=tuple(action_from_data(a) for a in data["actions"]),
            changes=read_changes(data["changes"]),
            kept=codec.from_data(data["kept"], tuple[Kept, ...]),
            unmanaged=codec.from_data(data["unmanaged"], tuple[Unmanaged, ...]),
            unobservable=tuple(str(s) for s in data["unobservable"]),
            warnings=tuple(str(s) for s in data["warnings"]),
            notices=tuple(str(s) for s in data.get("notices", ())),
            guards=tuple(str(p) for p in safety["problems"]),
            expects=dict(data["expects"]),
            access=codec.from_data(data["access"], _ACCESS) if "access" in data else None,
            record_changes=codec.from_data(data["record_changes"], _RECORD_CHANGES)
            if "record_changes" in data
            else None,
        )


_ACCESS = tuple[AccessChange, ...]
_RECORD_CHANGES = tuple[RecordChange, ...]


def value_text(value: Any) -> str:
    """How every report writes a setting's value: one vocabulary for text, Markdown, drift."""
    if value is None:
        return "(no override)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)


def canonical(data: Mapping[str, Any]) -> bytes:
    """The bytes a checksum or a seal is computed over: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
