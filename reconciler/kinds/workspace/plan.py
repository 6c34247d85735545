"""The workspace kind's plan: missing workspaces are created (those with the same settings
and users share a ``workspace_add``), users join and leave (one call per user, for every
workspace that user joins or leaves), a workspace whose settings differ is replaced only when
``--replace`` names it and nothing protects it, and a managed workspace that left the
manifest is deleted when the policy allows (``retire``). Deleting or replacing destroys its
files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from reconciler.core.actions import UserKey
from reconciler.core.changes import Change, FieldChange, created, site_spelling
from reconciler.core.guards import protecting
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
from reconciler.core.users import UserDirectory, user_order
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


def plan(diffs: Iterable[WorkspaceDiff], inputs: PlanInputs) -> Planned:
    """What each declared workspace's difference becomes (with ``--expired-only``: only
    the members whose entries expired leave)."""
    if inputs.options.expired_only:
        diffs = [_expired_part(diff, inputs) for diff in diffs if diff.status == "present"]
    parts: list[Planned] = []
    creations: dict[_Creation, list[str]] = defaultdict(list)
    joins: dict[UserKey, list[Place]] = defaultdict(list)
    leaves: dict[UserKey, list[Place]] = defaultdict(list)
    for diff in diffs:
        if diff.status == "missing" and diff.desired is not None:
            creations[_creation(diff.desired, diff.desired_users)].append(diff.name)
            fields = _created(diff.desired, inputs.directory, diff.desired_users)
            note = gone_note(diff.gone_id)
            change = Change("workspace", diff.name, "create", fields=fields, note=note)
            parts.append(Planned(changes=(change,)))
        elif diff.status == "renamed" and diff.live is not None:
            parts.append(renamed("workspace", diff.name, diff.live.id, diff.live.name))
        elif diff.status == "present" and diff.live is not None:
            if diff.replacement:
                replaced = _replacement(diff, inputs)
                parts.append(replaced)
                if replaced.actions:
                    continue  # re-created with the wanted members
            for user in diff.users_to_add:
                joins[user].append(Place(diff.live.id, diff.name))
            for user in diff.users_to_remove:
                leaves[user].append(Place(diff.live.id, diff.name))
            parts.append(_updated(diff, inputs))
            parts.append(_differs(diff))
    adds = tuple(
        _workspace_add(key, names[start : start + MAX_NAMES_PER_WORKSPACE_ADD])
        for key, names in creations.items()
        for start in range(0, len(names), MAX_NAMES_PER_WORKSPACE_ADD)
    )
    calls = one_call_per_user(WorkspaceJoin, joins, inputs.directory)
    calls += one_call_per_user(WorkspaceLeave, leaves, inputs.directory)
    return joined([*parts, Planned(actions=adds + calls)])


def retire(diffs: Iterable[WorkspaceDiff], inputs: PlanInputs) -> Planned:
    """Managed workspaces that left the manifest: deleted when the policy allows, else kept;
    the records of those gone from the site too are forgotten (none with ``--expired-only``)."""
    if inputs.options.expired_only:
        return NOTHING_PLANNED
    parts: list[Planned] = []
    for diff in diffs:
        if diff.status == "extra" and diff.live is not None:
            kept = kept_by_policy("workspace", diff.name, inputs.policy)
            if kept is not None:
                parts.append(Planned(kept=(kept,)))
                continue
            delete = Change(
                "workspace",
                diff.name,
                "delete",
                id=diff.live.id,
                warning=DESTROYS_FILES,
                site_name=site_spelling(diff.name, diff.live.name),
            )
            action = WorkspaceDelete(workspace_id=diff.live.id, name=diff.name)
            parts.append(Planned(actions=(action,), changes=(delete,)))
        elif diff.status == "vanished":
            parts.append(vanished("workspace", diff.name, diff.gone_id, inputs.live))
    return joined(parts)


def _expired_part(diff: WorkspaceDiff, inputs: PlanInputs) -> WorkspaceDiff:
    """A present workspace's difference narrowed to the members whose entries expired."""
    leaving = inputs.expiries.expired_among("workspace", diff.name, diff.users_to_remove)
    return replace(
        diff, users_to_add=frozenset(), users_to_remove=leaving, replacement=(), in_place=()
    )


def _updated(diff: WorkspaceDiff, inputs: PlanInputs) -> Planned:
    if not (diff.users_to_add or diff.users_to_remove):
        return NOTHING_PLANNED
    fields = members_field(
        kind.MEMBERS, diff.users_to_add, diff.users_to_remove, diff.members_basis, inputs.directory
    )
    site_name = site_spelling(diff.name, diff.live.name) if diff.live else None
    expired = inputs.expiries.note("workspace", diff.name, diff.users_to_remove, inputs.directory)
    change = Change(
        "workspace",
        diff.name,
        "update",
        id=diff.live.id if diff.live else None,
        fields=fields,
        note=expired,
        site_name=site_name,
    )
    return Planned(changes=(change,))


def _differs(diff: WorkspaceDiff) -> Planned:
    """Settings that differ and need no replacement: reported, field by field, never
    dropped. No API method changes a workspace's settings in place, so none is planned."""
    if not diff.in_place or diff.live is None:
        return NOTHING_PLANNED
    change = Change(
        "workspace",
        diff.name,
        "differs",
        id=diff.live.id,
        fields=diff.in_place,
        hint=IN_PLACE_HINT,
        site_name=site_spelling(diff.name, diff.live.name),
    )
    return Planned(changes=(change,))


IN_PLACE_HINT = (
    "no API method changes this setting of an existing workspace: change it in the web app, "
    "or change the manifest to match"
)


def _replacement(diff: WorkspaceDiff, inputs: PlanInputs) -> Planned:
    """The replacement if allowed (its actions), else the change saying it is needed (no
    actions). A workspace left as it is still gets its members updated: members never need
    it."""
    assert diff.live is not None and diff.desired is not None
    fields = diff.replacement
    site_name = site_spelling(diff.name, diff.live.name)
    pattern = protecting("workspace", inputs.policy.protect, diff.name, diff.live.name)
    if diff.name not in NameSet("workspace", inputs.options.replace) or pattern is not None:
        hint = (
            f'not planned: it matches policy.protect "{pattern}", and a protected '
            "workspace is never deleted, so never replaced"
            if pattern is not None
            else f'not planned: to replace it, run again with --replace "{diff.name}"'
        )
        needed = Change(
            "workspace",
            diff.name,
            "needs-replacement",
            id=diff.live.id,
            fields=fields,
            warning=f"replacement {DESTROYS_FILES}",
            hint=hint,
            site_name=site_name,
        )
        return Planned(changes=(needed,))
    delete = WorkspaceDelete(workspace_id=diff.live.id, name=diff.name, reason="replace")
    add = _workspace_add(_creation(diff.desired, diff.desired_users), [diff.name]).after(delete.id)
    replace = Change(
        "workspace",
        diff.name,
        "replace",
        id=diff.live.id,
        fields=fields,
        warning=DESTROYS_FILES,
        site_name=site_name,
    )
    return Planned(actions=(delete, add), changes=(replace,))


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
