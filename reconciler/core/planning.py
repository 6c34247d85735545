"""What a kind's plan is given and what it gives back, and the moves alike for every kind.

Each kind plans its own differences (``kinds/<kind>/plan.py``) and *returns* what it plans --
``Planned``: its actions, the changes people read, what it keeps and why, the records it
forgets -- from ``PlanInputs`` it only reads. The engine (``engine/planning/planner.py``)
joins every kind's: plans in the registry's order, then retirements (deletions of what left the
manifest) in the reverse order, so an apply that stops half-way never destroyed anything a
later step was about to use.

The helpers below are the moves every kind makes alike: who joins and who leaves, one
membership call per user, an object renamed on the site or gone from it, a deletion the
policy keeps from happening.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Literal

from reconciler import clock, codec
from reconciler.core.actions import UserKey, WriteAction
from reconciler.core.changes import Change, FieldChange, ObjectKind
from reconciler.core.expiry import NO_EXPIRIES, Expiries
from reconciler.core.guards import protecting
from reconciler.core.memberships import MembershipChange, Place
from reconciler.core.users import UserDirectory, user_order
from reconciler.kinds.change import Basis
from reconciler.model import LiveSite, Policy

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
class PlanOptions:
    replace: frozenset[str] = frozenset()  # workspaces the user allowed to be replaced
    force: bool = False  # override the guards
    assume_no_groups: bool = False  # a first apply on a site that does not list groups
    changed: bool = False  # plan only what changed since the last apply (engine/read/scope.py)
    targets: tuple[str, ...] = ()  # --target patterns (engine/read/targets.py)
    excludes: tuple[str, ...] = ()  # --exclude patterns
    # --at: the day the manifest's expiries are judged on (a preview); None: today, by the
    # clock (``reconciler.clock``), read once when the plan is made
    at: date | None = None
    # --expired-only: plan the removal of expired access and nothing else (the schedule's)
    expired_only: bool = False

    def day(self) -> date:
        """The day the plan is made for."""
        return self.at if self.at is not None else clock.today()

    @property
    def reads_whole_site(self) -> bool:
        """Whether the plan reads the whole site whatever the records say: no ``--target``,
        ``--exclude`` or ``--changed`` (``engine/read/targets.select``)."""
        return not (self.targets or self.excludes or self.changed)


codec.written_without_defaults(PlanOptions, "at", "expired_only")  # plans keep their bytes


@dataclass(frozen=True, slots=True)
class PlanInputs:
    """What every kind's plan reads, and never changes."""

    directory: UserDirectory  # the site's users: how changes name people
    options: PlanOptions
    policy: Policy
    live: LiveSite | None = None  # what the site showed: is a vanished object's name free?
    expiries: Expiries = NO_EXPIRIES  # the entries that expired: why a removal happens


@dataclass(frozen=True, slots=True)
class Planned:
    """What one kind's plan makes of its differences (or every kind's, joined with ``+``)."""

    actions: tuple[WriteAction, ...] = ()
    changes: tuple[Change, ...] = ()
    kept: tuple[Kept, ...] = ()
    warnings: tuple[str, ...] = ()
    forgotten: tuple[RecordChange, ...] = ()  # records of objects gone from site and manifest


NOTHING_PLANNED = Planned()


def joined(parts: Iterable[Planned]) -> Planned:
    """What several parts plan, in their order (a kind's objects, every kind's plans)."""
    chosen = tuple(parts)
    return Planned(
        tuple(a for part in chosen for a in part.actions),
        tuple(c for part in chosen for c in part.changes),
        tuple(k for part in chosen for k in part.kept),
        tuple(w for part in chosen for w in part.warnings),
        tuple(f for part in chosen for f in part.forgotten),
    )


_KIND_WORDS: Mapping[ObjectKind, str] = {
    "workspace": "workspace",
    "group": "user group",
    "user": "user",
}


def members_field(
    field: str,
    joining: Iterable[UserKey],
    leaving: Iterable[UserKey],
    basis: Basis | None,
    directory: UserDirectory,
) -> tuple[FieldChange]:
    """Who joins and who leaves, as a change of the kind's members field: before, those
    leaving; after, those joining (those who stay are no part of it)."""
    labels = directory.labels
    return (FieldChange(field, labels(leaving), labels(joining), basis),)


def one_call_per_user(
    kind: type[MembershipChange],
    by_user: Mapping[UserKey, Iterable[Place]],
    directory: UserDirectory,
) -> tuple[MembershipChange, ...]:
    """One call per user, carrying every group or workspace that user joins or leaves."""
    return tuple(
        kind(
            user=user,
            user_label=directory.label(user),
            targets=tuple(sorted(by_user[user], key=lambda t: (t.id, t.name))),
        )
        for user in sorted(by_user, key=user_order)
    )


def renamed(kind: ObjectKind, name: str, object_id: int | None, now: str | None) -> Planned:
    """A managed object the site now calls something else: never deleted nor replaced."""
    warning = (
        f'The {_KIND_WORDS[kind]} "{name}" (ID {object_id}) '
        f'was renamed on the site to "{now}". The tool will not delete, replace or re-create '
        "it. Rename it back in the web app, or rename it in the manifest, or run "
        f'`reconciler state forget {kind} "{name}"` to stop managing it.'
    )
    change = Change(kind, name, "renamed", id=object_id, note=f'now named "{now}" on the site')
    return Planned(changes=(change,), warnings=(warning,))


def vanished(kind: ObjectKind, name: str, object_id: int | None, live: LiveSite | None) -> Planned:
    """A managed object gone from the site and the manifest: its record goes (a record change
    the apply saves), so nothing is reported night after night for an object nobody wants.

    Kept, and said, when that is not proved: a user list read in part, or another object
    under the name on the site (a creation an apply cut short may have landed as it, and the
    record is what tells the tool it made it)."""
    if kind == "user" and not (live is not None and live.users_complete):
        reason = "not among the users read; kept until a full read shows it gone"
    elif live is not None and _name_taken(live, kind, name):
        reason = (
            f"missing on the site, where another {_KIND_WORDS[kind]} has this name now; run "
            f'`reconciler state forget {kind} "{name}"` to drop the record'
        )
    else:
        return Planned(forgotten=(RecordChange(kind, name, "forget", id=object_id),))
    kept = Kept(kind, name, f"recorded as managed (ID {object_id}) but {reason}", on_site=False)
    return Planned(kept=(kept,))


def _name_taken(live: LiveSite, kind: ObjectKind, name: str) -> bool:
    if kind == "workspace":
        return any(ws.name == name for ws in live.workspaces)
    if kind == "group":
        return any(group.name == name for group in live.groups)
    return any(user.username.casefold() == name.casefold() for user in live.users)


def kept_by_policy(kind: ObjectKind, name: str, policy: Policy) -> Kept | None:
    """Why the policy keeps a managed workspace or group that left the manifest, or None
    when it may be deleted."""
    if not policy.prune:
        return Kept(kind, name, "left the manifest; kept because policy.prune is false")
    pattern = protecting(kind, policy.protect, name)
    if pattern is None:
        return None
    reason = f'left the manifest; kept because it matches policy.protect "{pattern}"'
    return Kept(kind, name, reason)


def gone_note(gone_id: int | None) -> str | None:
    """What a plan says of an object created again because its recorded ID is gone."""
    if gone_id is None:
        return None
    return f"recorded as ID {gone_id}, which is missing on the site: created again"


__all__ = [
    "NOTHING_PLANNED",
    "Kept",
    "PlanInputs",
    "PlanOptions",
    "Planned",
    "RecordChange",
    "gone_note",
    "joined",
    "kept_by_policy",
    "members_field",
    "one_call_per_user",
    "renamed",
    "vanished",
]
