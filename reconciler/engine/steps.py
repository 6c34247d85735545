"""What every kind's plan steps share: the steps collected so far, and the moves alike for
every kind (a write added after the users it needs, one membership call per user, a renamed
or vanished object, a deletion the policy may refuse).

Each kind's own steps are in its package (``reconciler/kinds/<kind>/steps.py``);
``planner.plan_steps`` runs them in the plan's order, and ``planner.build_plan`` orders what
they collect and adds what the whole plan needs (guards, notices, fingerprints).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reconciler.core.actions import AfterApply, UserKey, WriteAction
from reconciler.core.changes import Change, FieldChange, ObjectKind, field_value
from reconciler.core.memberships import MembershipChange, Place
from reconciler.core.users import UserDirectory, user_order
from reconciler.engine.plan import Kept, PlanOptions, RecordChange
from reconciler.engine.record_changes import forget_vanished
from reconciler.engine.safety import protecting
from reconciler.kinds.change import Basis, FieldDiff
from reconciler.kinds.user.actions import UserAdd
from reconciler.model import LiveSite, Policy

_KIND_WORDS: dict[ObjectKind, str] = {
    "workspace": "workspace",
    "group": "user group",
    "user": "user",
}


@dataclass
class Steps:
    """The actions and the changes people read, collected while walking a comparison."""

    directory: UserDirectory
    options: PlanOptions
    policy: Policy
    live: LiveSite | None = None  # what the site showed: is a vanished object's name free?
    actions: list[WriteAction] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    forgotten: list[RecordChange] = field(default_factory=list)

    def add(self, action: WriteAction) -> str:
        """Add ``action``, after the creation of every user it names that this apply creates."""
        creations = [
            f"{UserAdd.method}:{user.username}"
            for user in action.named_users()
            if isinstance(user, AfterApply)
        ]
        self.actions.append(action.after(*creations) if creations else action)
        return action.id

    def members(
        self,
        field: str,
        joining: Iterable[UserKey],
        leaving: Iterable[UserKey],
        basis: Basis | None,
    ) -> tuple[FieldChange]:
        """Who joins and who leaves, as a change of the kind's members field: before, those
        leaving; after, those joining (those who stay are no part of it)."""
        labels = self.directory.labels
        return (FieldChange(field, labels(leaving), labels(joining), basis),)

    def memberships(
        self, kind: type[MembershipChange], by_user: dict[UserKey, list[Place]]
    ) -> None:
        """One call per user, carrying every group or workspace that user joins or leaves."""
        for user in sorted(by_user, key=user_order):
            targets = tuple(sorted(by_user[user], key=lambda t: (t.id, t.name)))
            self.add(kind(user=user, user_label=self.directory.label(user), targets=targets))

    def renamed(self, kind: ObjectKind, name: str, object_id: int | None, now: str | None) -> None:
        """A managed object the site now calls something else: never deleted nor replaced."""
        self.warnings.append(
            f'The {_KIND_WORDS[kind]} "{name}" (ID {object_id}) '
            f'was renamed on the site to "{now}". The tool will not delete, replace or re-create '
            "it. Rename it back in the web app, or rename it in the manifest, or run "
            f'`reconciler state forget {kind} "{name}"` to stop managing it.'
        )
        self.changes.append(
            Change(kind, name, "renamed", id=object_id, note=f'now named "{now}" on the site')
        )

    def vanished(self, kind: ObjectKind, name: str, object_id: int | None) -> None:
        """A managed object gone from the site and the manifest: its record is forgotten
        unless its name is taken by another object."""
        decided = forget_vanished(kind, name, object_id, self.live)
        if isinstance(decided, Kept):
            self.kept.append(decided)
        else:
            self.forgotten.append(decided)

    def may_delete(self, kind: ObjectKind, name: str) -> bool:
        """Whether the policy lets a managed workspace or group that left the manifest go."""
        if not self.policy.prune:
            reason = "left the manifest; kept because policy.prune is false"
        else:
            pattern = protecting(kind, self.policy.protect, name)
            if pattern is None:
                return True
            reason = f'left the manifest; kept because it matches policy.protect "{pattern}"'
        self.kept.append(Kept(kind, name, reason))
        return False


def gone_note(gone_id: int | None) -> str | None:
    """What a plan says of an object created again because its recorded ID is gone."""
    if gone_id is None:
        return None
    return f"recorded as ID {gone_id}, which is missing on the site: created again"


def differing(differences: Iterable[FieldDiff]) -> tuple[FieldChange, ...]:
    """The fields that differ, as the site (or the records) has them before and the manifest
    wants them after."""
    return tuple(
        FieldChange(f.field, field_value(f.live), field_value(f.desired), f.basis)
        for f in differences
    )
