"""The user group kind's plan: a declared group missing from the site is created with its
members, members join and leave (one call per user, for every group that user joins or
leaves), and a managed group that left the manifest is deleted when the policy allows
(``retire``).

The site cannot list groups nor report their members, so a group's members are what the
tool recorded; where the records do not know them all, every declared member not yet added
is added (adding an existing member changes nothing)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from reconciler.core.actions import UserKey
from reconciler.core.changes import Change, created, site_spelling
from reconciler.core.memberships import Place
from reconciler.core.planning import (
    NOTHING_PLANNED,
    PlanInputs,
    Planned,
    gone_note,
    joined,
    kept_by_policy,
    members_field,
    one_call_per_user,
    renamed,
    vanished,
)
from reconciler.core.users import user_order
from reconciler.kinds import group as kind
from reconciler.kinds.change import Basis
from reconciler.kinds.group.actions import GroupCreate, GroupDelete, GroupJoin, GroupLeave
from reconciler.kinds.group.diff import GroupDiff

UNCERTAIN = (
    'User group "{name}" may have been created by an earlier apply whose answer was lost, and '
    "this site does not list groups, so the tool cannot check. It will not create the group "
    "again. Check the site in the web app: if the group is not there, run `reconciler state "
    'forget group "{name}"` and apply again.'
)
MEMBERS_UNKNOWN = (
    "the site cannot report group members and the tool has no record of them all: every "
    "declared member it has not added yet is added (adding an existing member changes nothing)"
)


def plan(diffs: Iterable[GroupDiff], inputs: PlanInputs) -> Planned:
    """What each declared group's difference becomes (with ``--expired-only``: only the
    members whose entries expired leave)."""
    if inputs.options.expired_only:
        diffs = [_expired_part(diff, inputs) for diff in diffs if diff.status == "present"]
    parts: list[Planned] = []
    joins: dict[UserKey, list[Place]] = defaultdict(list)
    leaves: dict[UserKey, list[Place]] = defaultdict(list)
    for diff in diffs:
        if diff.status == "missing":
            parts.append(_created(diff, inputs))
        elif diff.status == "uncertain":
            parts.append(Planned(warnings=(UNCERTAIN.format(name=diff.name),)))
        elif diff.status == "renamed":
            parts.append(renamed("group", diff.name, diff.id, diff.live_name))
        elif diff.status == "present" and diff.id is not None:
            for user in diff.members_to_add:
                joins[user].append(Place(diff.id, diff.name))
            for user in diff.members_to_remove:
                leaves[user].append(Place(diff.id, diff.name))
            parts.append(_updated(diff, inputs))
    calls = one_call_per_user(GroupJoin, joins, inputs.directory)
    calls += one_call_per_user(GroupLeave, leaves, inputs.directory)
    return joined([*parts, Planned(actions=calls)])


def retire(diffs: Iterable[GroupDiff], inputs: PlanInputs) -> Planned:
    """Managed groups that left the manifest: deleted when the policy allows, else kept; the
    records of those gone from the site too are forgotten (none with ``--expired-only``)."""
    if inputs.options.expired_only:
        return NOTHING_PLANNED
    parts: list[Planned] = []
    for diff in diffs:
        if diff.status == "extra" and diff.id is not None:
            kept = kept_by_policy("group", diff.name, inputs.policy)
            if kept is not None:
                parts.append(Planned(kept=(kept,)))
                continue
            delete = Change("group", diff.name, "delete", id=diff.id, site_name=_spelling(diff))
            action = GroupDelete(group_id=diff.id, name=diff.name)
            parts.append(Planned(actions=(action,), changes=(delete,)))
        elif diff.status == "vanished":
            parts.append(vanished("group", diff.name, diff.gone_id, inputs.live))
    return joined(parts)


def _expired_part(diff: GroupDiff, inputs: PlanInputs) -> GroupDiff:
    """A present group's difference narrowed to the members whose entries expired."""
    leaving = inputs.expiries.expired_among("group", diff.name, diff.members_to_remove)
    return replace(diff, members_to_add=frozenset(), members_to_remove=leaving, members_known=True)


def _created(diff: GroupDiff, inputs: PlanInputs) -> Planned:
    members = tuple(sorted(diff.desired_members, key=user_order))
    fields = created({kind.MEMBERS: inputs.directory.labels(members)})
    change = Change("group", diff.name, "create", fields=fields, note=gone_note(diff.gone_id))
    return Planned(actions=(GroupCreate(name=diff.name, members=members),), changes=(change,))


def _updated(diff: GroupDiff, inputs: PlanInputs) -> Planned:
    if not (diff.members_to_add or diff.members_to_remove):
        return NOTHING_PLANNED
    basis: Basis | None = "recorded" if diff.members_known else None
    fields = members_field(
        kind.MEMBERS, diff.members_to_add, diff.members_to_remove, basis, inputs.directory
    )
    notes = (
        None if diff.members_known else MEMBERS_UNKNOWN,
        inputs.expiries.note("group", diff.name, diff.members_to_remove, inputs.directory),
    )
    change = Change(
        "group",
        diff.name,
        "update",
        id=diff.id,
        fields=fields,
        note="; ".join(note for note in notes if note) or None,
        site_name=_spelling(diff),
    )
    return Planned(changes=(change,))


def _spelling(diff: GroupDiff) -> str | None:
    return site_spelling(diff.name, diff.live_name) if diff.live_name is not None else None
