"""The plan's steps, kind by kind: what each difference of a ``Comparison`` becomes.

``PlanSteps`` walks the comparison's users, groups and workspaces and collects the write
actions (batched: members join and leave one call per user, workspaces with one spec are
created in one ``workspace_add``) and the changes people read; ``planner.build_plan`` orders
them and adds what the whole plan needs (guards, notices, fingerprints). What a setting is
and whether it needs a replacement is the kind's (``reconciler.kinds``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from reconciler.engine.actions import (
    DELETES_ACCOUNT,
    DESTROYS_FILES,
    AfterApply,
    GroupCreate,
    GroupDelete,
    GroupJoin,
    GroupLeave,
    MembershipChange,
    Place,
    UserAdd,
    UserDelete,
    UserKey,
    WorkspaceAdd,
    WorkspaceDelete,
    WorkspaceJoin,
    WorkspaceLeave,
    WriteAction,
)
from reconciler.engine.changes import Change, FieldChange, ObjectKind, created, field_value
from reconciler.engine.diff import GroupDiff, UserDiff, WorkspaceDiff
from reconciler.engine.plan import Kept, PlanOptions, RecordChange
from reconciler.engine.record_changes import forget_vanished
from reconciler.engine.safety import protecting
from reconciler.engine.users import UserDirectory, user_order
from reconciler.identity import NameSet
from reconciler.kinds import group as kinds_group
from reconciler.kinds import user as kinds_user
from reconciler.kinds import workspace
from reconciler.kinds.change import Basis, FieldDiff
from reconciler.kinds.workspace import WorkspaceSpec
from reconciler.model import DesiredUser, DesiredWorkspace, LiveSite, LiveUser, Policy

MAX_NAMES_PER_WORKSPACE_ADD = 20
"""Workspaces with identical settings share a ``workspace_add``; cap a call's blast radius."""
_KIND_WORDS: dict[ObjectKind, str] = {
    "workspace": "workspace",
    "group": "user group",
    "user": "user",
}


@dataclass
class PlanSteps:
    """Accumulates actions and display changes while walking a comparison."""

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

    # --- users ----------------------------------------------------------------------------

    def users(self, diffs: Iterable[UserDiff]) -> None:
        for diff in diffs:
            if diff.status == "missing" and diff.desired is not None:
                self._create_user(diff.desired, diff.gone_id)
            elif diff.status == "present" and diff.differences:
                self.changes.append(
                    Change(
                        "user",
                        diff.username,
                        "differs",
                        id=diff.live.id if diff.live else None,
                        fields=_differing(diff.differences),
                        hint="no API method changes an existing user: change it in the web "
                        "app, or change the manifest to match",
                    )
                )
            elif diff.status == "extra" and diff.live is not None:
                self._retire_user(diff.username, diff.live)
            elif diff.status == "vanished":
                self._vanished("user", diff.username, diff.gone_id)
            elif diff.status == "renamed" and diff.live is not None:
                self._renamed("user", diff.username, diff.live.id, diff.live.username)

    def _create_user(self, user: DesiredUser, gone_id: int | None) -> None:
        self.add(UserAdd.declared(user))
        fields = created(kinds_user.shown(user.settings))
        self.changes.append(
            Change("user", user.username, "create", fields=fields, note=_gone_note(gone_id))
        )

    def _retire_user(self, username: str, live: LiveUser) -> None:
        """A managed user who left ``users:``: deleted only with ``policy.prune_users``."""
        if not self.policy.prune_users:
            reason = "left the manifest; kept because policy.prune_users is false"
        elif pattern := protecting("user", self.policy.protect_users, username, live.username):
            reason = f'left the manifest; kept because it matches policy.protect_users "{pattern}"'
        else:
            self.add(UserDelete(user_id=live.id, username=username))
            self.changes.append(
                Change("user", username, "delete", id=live.id, warning=DELETES_ACCOUNT)
            )
            return
        self.kept.append(Kept("user", username, reason))

    # --- groups ---------------------------------------------------------------------------

    def groups(self, diffs: Iterable[GroupDiff]) -> None:
        joins: dict[UserKey, list[Place]] = defaultdict(list)
        leaves: dict[UserKey, list[Place]] = defaultdict(list)
        for diff in diffs:
            if diff.status == "missing":
                self._create_group(diff)
            elif diff.status == "uncertain":
                self.warnings.append(
                    f'User group "{diff.name}" may have been created by an earlier apply whose '
                    "answer was lost, and this site does not list groups, so the tool cannot "
                    "check. It will not create the group again. Check the site in the web app: "
                    "if the group is not there, run `reconciler state forget group "
                    f'"{diff.name}"` and apply again.'
                )
            elif diff.status == "renamed":
                self._renamed("group", diff.name, diff.id, diff.live_name)
            elif diff.status == "present" and diff.id is not None:
                for user in diff.members_to_add:
                    joins[user].append(Place(diff.id, diff.name))
                for user in diff.members_to_remove:
                    leaves[user].append(Place(diff.id, diff.name))
                self._group_update(diff)
        self._memberships(GroupJoin, joins)
        self._memberships(GroupLeave, leaves)

    def _create_group(self, diff: GroupDiff) -> None:
        members = tuple(sorted(diff.desired_members, key=user_order))
        self.add(GroupCreate(name=diff.name, members=members))
        fields = created({kinds_group.MEMBERS: self.directory.labels(members)})
        self.changes.append(
            Change("group", diff.name, "create", fields=fields, note=_gone_note(diff.gone_id))
        )

    def _group_update(self, diff: GroupDiff) -> None:
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
        self.changes.append(
            Change(
                "group",
                diff.name,
                "update",
                id=diff.id,
                fields=self._members(
                    kinds_group.MEMBERS,
                    diff.members_to_add,
                    diff.members_to_remove,
                    "recorded" if diff.members_known else None,
                ),
                note=note,
            )
        )

    def _members(
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

    def _memberships(
        self, kind: type[MembershipChange], by_user: dict[UserKey, list[Place]]
    ) -> None:
        """One call per user, carrying every group or workspace that user joins or leaves."""
        for user in sorted(by_user, key=user_order):
            targets = tuple(sorted(by_user[user], key=lambda t: (t.id, t.name)))
            self.add(kind(user=user, user_label=self.directory.label(user), targets=targets))

    # --- workspaces -----------------------------------------------------------------------

    def workspaces(self, diffs: Iterable[WorkspaceDiff]) -> None:
        creations: dict[_Creation, list[str]] = defaultdict(list)
        joins: dict[UserKey, list[Place]] = defaultdict(list)
        leaves: dict[UserKey, list[Place]] = defaultdict(list)
        for diff in diffs:
            if diff.status == "missing" and diff.desired is not None:
                creations[_settings_key(diff.desired, diff.desired_users)].append(diff.name)
                self.changes.append(
                    Change(
                        "workspace",
                        diff.name,
                        "create",
                        fields=_created_workspace(diff.desired, self.directory, diff.desired_users),
                        note=_gone_note(diff.gone_id),
                    )
                )
            elif diff.status == "renamed" and diff.live is not None:
                self._renamed("workspace", diff.name, diff.live.id, diff.live.name)
            elif diff.status == "present" and diff.live is not None:
                if diff.replacement and self._replacement(diff):
                    continue  # re-created with the wanted members
                for user in diff.users_to_add:
                    joins[user].append(Place(diff.live.id, diff.name))
                for user in diff.users_to_remove:
                    leaves[user].append(Place(diff.live.id, diff.name))
                self._workspace_update(diff)
        for key, names in creations.items():
            for start in range(0, len(names), MAX_NAMES_PER_WORKSPACE_ADD):
                self.add(_workspace_add(key, names[start : start + MAX_NAMES_PER_WORKSPACE_ADD]))
        self._memberships(WorkspaceJoin, joins)
        self._memberships(WorkspaceLeave, leaves)

    def _workspace_update(self, diff: WorkspaceDiff) -> None:
        if not (diff.users_to_add or diff.users_to_remove):
            return
        self.changes.append(
            Change(
                "workspace",
                diff.name,
                "update",
                id=diff.live.id if diff.live else None,
                fields=self._members(
                    workspace.MEMBERS, diff.users_to_add, diff.users_to_remove, diff.members_basis
                ),
            )
        )

    def _replacement(self, diff: WorkspaceDiff) -> bool:
        """Plan the replacement if allowed (True), else report that it is needed (False).

        A workspace left as it is still gets its members updated: members never need it.
        """
        assert diff.live is not None and diff.desired is not None
        fields = _differing(diff.replacement)
        pattern = protecting("workspace", self.policy.protect, diff.name, diff.live.name)
        if diff.name not in NameSet("workspace", self.options.replace) or pattern is not None:
            hint = (
                f'not planned: it matches policy.protect "{pattern}", and a protected '
                "workspace is never deleted, so never replaced"
                if pattern is not None
                else f'not planned: to replace it, run again with --replace "{diff.name}"'
            )
            self.changes.append(
                Change(
                    "workspace",
                    diff.name,
                    "needs-replacement",
                    id=diff.live.id,
                    fields=fields,
                    warning=f"replacement {DESTROYS_FILES}",
                    hint=hint,
                )
            )
            return False
        delete_id = self.add(
            WorkspaceDelete(workspace_id=diff.live.id, name=diff.name, reason="replace")
        )
        key = _settings_key(diff.desired, diff.desired_users)
        self.add(_workspace_add(key, [diff.name]).after(delete_id))
        self.changes.append(
            Change(
                "workspace",
                diff.name,
                "replace",
                id=diff.live.id,
                fields=fields,
                warning=DESTROYS_FILES,
            )
        )
        return True

    def _renamed(self, kind: ObjectKind, name: str, object_id: int | None, now: str | None) -> None:
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

    # --- deletions ------------------------------------------------------------------------

    def deletions(self, workspaces: Iterable[WorkspaceDiff], groups: Iterable[GroupDiff]) -> None:
        """Managed objects that left the manifest: deleted when the policy allows, else kept."""
        for ws in workspaces:
            if (
                ws.status == "extra"
                and ws.live is not None
                and self._may_delete("workspace", ws.name)
            ):
                self.add(WorkspaceDelete(workspace_id=ws.live.id, name=ws.name))
                self.changes.append(
                    Change("workspace", ws.name, "delete", id=ws.live.id, warning=DESTROYS_FILES)
                )
            elif ws.status == "vanished":
                self._vanished("workspace", ws.name, ws.gone_id)
        for group in groups:
            extra = group.status == "extra" and group.id is not None
            if extra and group.id is not None and self._may_delete("group", group.name):
                self.add(GroupDelete(group_id=group.id, name=group.name))
                self.changes.append(Change("group", group.name, "delete", id=group.id))
            elif group.status == "vanished":
                self._vanished("group", group.name, group.gone_id)

    def _vanished(self, kind: ObjectKind, name: str, object_id: int | None) -> None:
        decided = forget_vanished(kind, name, object_id, self.live)
        if isinstance(decided, Kept):
            self.kept.append(decided)
        else:
            self.forgotten.append(decided)

    def _may_delete(self, kind: ObjectKind, name: str) -> bool:
        if not self.policy.prune:
            reason = "left the manifest; kept because policy.prune is false"
        else:
            pattern = protecting(kind, self.policy.protect, name)
            if pattern is None:
                return True
            reason = f'left the manifest; kept because it matches policy.protect "{pattern}"'
        self.kept.append(Kept(kind, name, reason))
        return False


def _gone_note(gone_id: int | None) -> str | None:
    if gone_id is None:
        return None
    return f"recorded as ID {gone_id}, which is missing on the site: created again"


_Creation = tuple[WorkspaceSpec, tuple[UserKey, ...]]
"""What workspaces created in one ``workspace_add`` share: settings and users."""


def _settings_key(ws: DesiredWorkspace, users: frozenset[UserKey]) -> _Creation:
    return (ws.settings, tuple(sorted(users, key=user_order)))


def _workspace_add(key: _Creation, names: list[str]) -> WorkspaceAdd:
    settings, users = key
    return WorkspaceAdd(names=tuple(names), settings=settings, users=users)


def _created_workspace(
    ws: DesiredWorkspace, directory: UserDirectory, users: Iterable[UserKey]
) -> tuple[FieldChange, ...]:
    """A new workspace's settings, its users among them where plans have always shown them."""
    return created(workspace.data(ws.settings, (workspace.MEMBERS, directory.labels(users))))


def _differing(differences: Iterable[FieldDiff]) -> tuple[FieldChange, ...]:
    """The fields that differ, as the site (or the records) has them before and the manifest
    wants them after."""
    return tuple(
        FieldChange(f.field, field_value(f.live), field_value(f.desired), f.basis)
        for f in differences
    )
