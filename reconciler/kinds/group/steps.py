"""The user group kind's plan steps: a declared group missing from the site is created with
its members, members join and leave (one call per user, for every group that user joins or
leaves), and a managed group that left the manifest is deleted when the policy allows.

The site cannot list groups nor report their members, so a group's members are what the
tool recorded; where the records do not know them all, every declared member not yet added
is added (adding an existing member changes nothing)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from reconciler.core.actions import UserKey
from reconciler.core.changes import Change, created, site_spelling
from reconciler.core.memberships import Place
from reconciler.core.users import user_order
from reconciler.engine.steps import Steps, gone_note
from reconciler.kinds import group as kind
from reconciler.kinds.change import Basis
from reconciler.kinds.group.actions import GroupCreate, GroupDelete, GroupJoin, GroupLeave
from reconciler.kinds.group.diff import GroupDiff


def plan_groups(steps: Steps, diffs: Iterable[GroupDiff]) -> None:
    """What each group's difference becomes, deletions aside (``delete_groups``)."""
    joins: dict[UserKey, list[Place]] = defaultdict(list)
    leaves: dict[UserKey, list[Place]] = defaultdict(list)
    for diff in diffs:
        if diff.status == "missing":
            _create(steps, diff)
        elif diff.status == "uncertain":
            steps.warnings.append(
                f'User group "{diff.name}" may have been created by an earlier apply whose '
                "answer was lost, and this site does not list groups, so the tool cannot "
                "check. It will not create the group again. Check the site in the web app: "
                "if the group is not there, run `reconciler state forget group "
                f'"{diff.name}"` and apply again.'
            )
        elif diff.status == "renamed":
            steps.renamed("group", diff.name, diff.id, diff.live_name)
        elif diff.status == "present" and diff.id is not None:
            for user in diff.members_to_add:
                joins[user].append(Place(diff.id, diff.name))
            for user in diff.members_to_remove:
                leaves[user].append(Place(diff.id, diff.name))
            _update(steps, diff)
    steps.memberships(GroupJoin, joins)
    steps.memberships(GroupLeave, leaves)


def delete_groups(steps: Steps, diffs: Iterable[GroupDiff]) -> None:
    """Managed groups that left the manifest: deleted when the policy allows, else kept; the
    records of those gone from the site too are forgotten."""
    for diff in diffs:
        if diff.status == "extra" and diff.id is not None and steps.may_delete("group", diff.name):
            steps.add(GroupDelete(group_id=diff.id, name=diff.name))
            steps.changes.append(
                Change("group", diff.name, "delete", id=diff.id, site_name=_spelling(diff))
            )
        elif diff.status == "vanished":
            steps.vanished("group", diff.name, diff.gone_id)


def _create(steps: Steps, diff: GroupDiff) -> None:
    members = tuple(sorted(diff.desired_members, key=user_order))
    steps.add(GroupCreate(name=diff.name, members=members))
    fields = created({kind.MEMBERS: steps.directory.labels(members)})
    steps.changes.append(
        Change("group", diff.name, "create", fields=fields, note=gone_note(diff.gone_id))
    )


def _update(steps: Steps, diff: GroupDiff) -> None:
    if not (diff.members_to_add or diff.members_to_remove):
        return
    note = (
        None
        if diff.members_known
        else (
            "the site cannot report group members and the tool has no record of them all: "
            "every declared member it has not added yet is added (adding an existing "
            "member changes nothing)"
        )
    )
    basis: Basis | None = "recorded" if diff.members_known else None
    steps.changes.append(
        Change(
            "group",
            diff.name,
            "update",
            id=diff.id,
            fields=steps.members(kind.MEMBERS, diff.members_to_add, diff.members_to_remove, basis),
            note=note,
            site_name=_spelling(diff),
        )
    )


def _spelling(diff: GroupDiff) -> str | None:
    return site_spelling(diff.name, diff.live_name) if diff.live_name is not None else None
