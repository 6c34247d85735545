"""The workspace kind's plan steps: missing workspaces are created (those with the same
settings and users share a ``workspace_add``), users join and leave (one call per user, for
every workspace that user joins or leaves), a workspace whose settings differ is replaced
only when ``--replace`` names it and nothing protects it, and a managed workspace that left
the manifest is deleted when the policy allows. Deleting or replacing destroys its files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from reconciler.core.actions import UserKey
from reconciler.core.changes import Change, FieldChange, created, site_spelling
from reconciler.core.memberships import Place
from reconciler.core.users import UserDirectory, user_order
from reconciler.engine.safety import protecting
from reconciler.engine.steps import Steps, differing, gone_note
from reconciler.identity import NameSet
from reconciler.kinds import workspace as kind
from reconciler.kinds.workspace import WorkspaceSpec
from reconciler.kinds.workspace.actions import (
    DESTROYS_FILES,
    WorkspaceAdd,
    WorkspaceDelete,
    WorkspaceJoin,
    WorkspaceLeave,
)
from reconciler.kinds.workspace.diff import WorkspaceDiff
from reconciler.model import DesiredWorkspace

MAX_NAMES_PER_WORKSPACE_ADD = 20
"""Workspaces with identical settings share a ``workspace_add``; cap a call's blast radius."""

_Creation = tuple[WorkspaceSpec, tuple[UserKey, ...]]
"""What workspaces created in one ``workspace_add`` share: settings and users."""


def plan_workspaces(steps: Steps, diffs: Iterable[WorkspaceDiff]) -> None:
    """What each workspace's difference becomes, deletions aside (``delete_workspaces``)."""
    creations: dict[_Creation, list[str]] = defaultdict(list)
    joins: dict[UserKey, list[Place]] = defaultdict(list)
    leaves: dict[UserKey, list[Place]] = defaultdict(list)
    for diff in diffs:
        if diff.status == "missing" and diff.desired is not None:
            creations[_creation(diff.desired, diff.desired_users)].append(diff.name)
            steps.changes.append(
                Change(
                    "workspace",
                    diff.name,
                    "create",
                    fields=_created(diff.desired, steps.directory, diff.desired_users),
                    note=gone_note(diff.gone_id),
                )
            )
        elif diff.status == "renamed" and diff.live is not None:
            steps.renamed("workspace", diff.name, diff.live.id, diff.live.name)
        elif diff.status == "present" and diff.live is not None:
            if diff.replacement and _replacement(steps, diff):
                continue  # re-created with the wanted members
            for user in diff.users_to_add:
                joins[user].append(Place(diff.live.id, diff.name))
            for user in diff.users_to_remove:
                leaves[user].append(Place(diff.live.id, diff.name))
            _update(steps, diff)
    for key, names in creations.items():
        for start in range(0, len(names), MAX_NAMES_PER_WORKSPACE_ADD):
            steps.add(_workspace_add(key, names[start : start + MAX_NAMES_PER_WORKSPACE_ADD]))
    steps.memberships(WorkspaceJoin, joins)
    steps.memberships(WorkspaceLeave, leaves)


def delete_workspaces(steps: Steps, diffs: Iterable[WorkspaceDiff]) -> None:
    """Managed workspaces that left the manifest: deleted when the policy allows, else kept;
    the records of those gone from the site too are forgotten."""
    for diff in diffs:
        if (
            diff.status == "extra"
            and diff.live is not None
            and steps.may_delete("workspace", diff.name)
        ):
            steps.add(WorkspaceDelete(workspace_id=diff.live.id, name=diff.name))
            steps.changes.append(
                Change(
                    "workspace",
                    diff.name,
                    "delete",
                    id=diff.live.id,
                    warning=DESTROYS_FILES,
                    site_name=site_spelling(diff.name, diff.live.name),
                )
            )
        elif diff.status == "vanished":
            steps.vanished("workspace", diff.name, diff.gone_id)


def _update(steps: Steps, diff: WorkspaceDiff) -> None:
    if not (diff.users_to_add or diff.users_to_remove):
        return
    steps.changes.append(
        Change(
            "workspace",
            diff.name,
            "update",
            id=diff.live.id if diff.live else None,
            fields=steps.members(
                kind.MEMBERS, diff.users_to_add, diff.users_to_remove, diff.members_basis
            ),
            site_name=site_spelling(diff.name, diff.live.name) if diff.live else None,
        )
    )


def _replacement(steps: Steps, diff: WorkspaceDiff) -> bool:
    """Plan the replacement if allowed (True), else report that it is needed (False).

    A workspace left as it is still gets its members updated: members never need it.
    """
    assert diff.live is not None and diff.desired is not None
    fields = differing(diff.replacement)
    pattern = protecting("workspace", steps.policy.protect, diff.name, diff.live.name)
    if diff.name not in NameSet("workspace", steps.options.replace) or pattern is not None:
        hint = (
            f'not planned: it matches policy.protect "{pattern}", and a protected '
            "workspace is never deleted, so never replaced"
            if pattern is not None
            else f'not planned: to replace it, run again with --replace "{diff.name}"'
        )
        steps.changes.append(
            Change(
                "workspace",
                diff.name,
                "needs-replacement",
                id=diff.live.id,
                fields=fields,
                warning=f"replacement {DESTROYS_FILES}",
                hint=hint,
                site_name=site_spelling(diff.name, diff.live.name),
            )
        )
        return False
    delete_id = steps.add(
        WorkspaceDelete(workspace_id=diff.live.id, name=diff.name, reason="replace")
    )
    key = _creation(diff.desired, diff.desired_users)
    steps.add(_workspace_add(key, [diff.name]).after(delete_id))
    steps.changes.append(
        Change(
            "workspace",
            diff.name,
            "replace",
            id=diff.live.id,
            fields=fields,
            warning=DESTROYS_FILES,
            site_name=site_spelling(diff.name, diff.live.name),
        )
    )
    return True


def _creation(ws: DesiredWorkspace, users: frozenset[UserKey]) -> _Creation:
    return (ws.settings, tuple(sorted(users, key=user_order)))


def _workspace_add(key: _Creation, names: list[str]) -> WorkspaceAdd:
    settings, users = key
    return WorkspaceAdd(names=tuple(names), settings=settings, users=users)


def _created(
    ws: DesiredWorkspace, directory: UserDirectory, users: Iterable[UserKey]
) -> tuple[FieldChange, ...]:
    """A new workspace's settings, its users among them where plans have always shown them."""
    return created(kind.data(ws.settings, (kind.MEMBERS, directory.labels(users))))
