"""Turn a ``Comparison`` into a ``Plan``: the ordered, batched API calls and what they change.

The order is fixed (``plan.PHASES``): groups are created and joined first, then workspaces
are replaced (only those named with ``--replace``) and created, members of existing
workspaces are added and removed, members leave groups, and deletions come last, so an
apply that stops half-way never destroyed anything it was about to re-create.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reconciler.engine.diff import Comparison, GroupDiff, WorkspaceDiff
from reconciler.engine.facts import fingerprints
from reconciler.engine.plan import PLAN_FORMAT, PLAN_FORMAT_VERSION, Action, Plan
from reconciler.engine.safety import guard_problems
from reconciler.engine.state import SiteState
from reconciler.engine.users import UserDirectory
from reconciler.model import DesiredWorkspace, LiveSite, Overrides, Policy

MAX_NAMES_PER_WORKSPACE_ADD = 20
"""Workspaces with identical settings share a ``workspace_add``; cap a call's blast radius."""

DESTROYS_FILES = "destroys all files in the workspace"


@dataclass(frozen=True, slots=True)
class PlanOptions:
    replace: frozenset[str] = frozenset()  # workspaces the user allowed to be replaced
    force: bool = False  # override the delete and member-removal guards


@dataclass(frozen=True, slots=True)
class PlanContext:
    """Where a plan comes from; stored in the plan so apply can check it is for this site."""

    site: str
    created_at: str
    tool_version: str
    manifest_files: tuple[str, ...] = ()
    manifest_digest: str = ""


def _overrides(value: Overrides) -> list[str] | None:
    return None if value is None else sorted(value)


def _workspace_fields(
    ws: DesiredWorkspace, directory: UserDirectory, users: Iterable[int]
) -> dict[str, Any]:
    return {
        "root_access": ws.root_access,
        "users": directory.labels(users),
        "permissions": _overrides(ws.permissions),
        "notifications": _overrides(ws.notifications),
    }


@dataclass
class _Builder:
    """Accumulates actions and display changes while walking a comparison."""

    directory: UserDirectory
    options: PlanOptions
    policy: Policy
    actions: list[Action] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)
    kept: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    touched_workspaces: set[str] = field(default_factory=set)
    touched_groups: set[str] = field(default_factory=set)

    def add(
        self,
        phase: str,
        method: str,
        key: str,
        params: dict[str, Any],
        summary: str,
        depends_on: tuple[str, ...] = (),
    ) -> str:
        action_id = f"{method}:{key}"
        self.actions.append(Action(action_id, phase, method, params, summary, depends_on))
        return action_id

    def change(self, kind: str, name: str, action: str, **details: Any) -> None:
        self.changes.append({"kind": kind, "name": name, "action": action, **details})

    # --- groups ---------------------------------------------------------------------------

    def groups(self, diffs: Iterable[GroupDiff]) -> None:
        joins: dict[int, list[tuple[int, str]]] = defaultdict(list)
        leaves: dict[int, list[tuple[int, str]]] = defaultdict(list)
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
            elif diff.status == "present" and diff.id is not None:
                for user in diff.members_to_add:
                    joins[user].append((diff.id, diff.name))
                for user in diff.members_to_remove:
                    leaves[user].append((diff.id, diff.name))
                self._group_update(diff)
        self._memberships("add_to_groups", "add_to_user_group", "group", joins, "joins")
        self._memberships("remove_from_groups", "remove_from_user_group", "group", leaves, "leaves")

    def _create_group(self, diff: GroupDiff) -> None:
        members = sorted(diff.desired_members)
        self.touched_groups.add(diff.name)
        self.add(
            "create_groups",
            "user_group_add",
            diff.name,
            {"name": diff.name, "member_ids": members},
            f'create user group "{diff.name}" with {len(members)} member(s)',
        )
        self.change("group", diff.name, "create", members=self.directory.labels(members))

    def _group_update(self, diff: GroupDiff) -> None:
        if not (diff.members_to_add or diff.members_to_remove):
            return
        self.touched_groups.add(diff.name)
        note = (
            None
            if diff.members_known
            else (
                "the site cannot report group members and the tool has no record of them: every "
                "declared member is added (adding an existing member changes nothing)"
            )
        )
        self.change(
            "group",
            diff.name,
            "update",
            id=diff.id,
            members_added=self.directory.labels(diff.members_to_add),
            members_removed=self.directory.labels(diff.members_to_remove),
            basis="recorded" if diff.members_known else None,
            note=note,
        )

    def _memberships(
        self,
        phase: str,
        method: str,
        kind: str,
        by_user: dict[int, list[tuple[int, str]]],
        verb: str,
    ) -> None:
        """One call per user, carrying every group or workspace that user joins or leaves."""
        for user_id in sorted(by_user):
            targets = sorted(by_user[user_id])
            names = [name for _, name in targets]
            ids_key = "group_ids" if kind == "group" else "workspace_ids"
            self.add(
                phase,
                method,
                str(user_id),
                {"user_id": user_id, ids_key: [tid for tid, _ in targets], "names": names},
                f"{self.directory.label(user_id)} {verb} {kind} "
                + ", ".join(f'"{n}"' for n in names),
            )

    # --- workspaces -----------------------------------------------------------------------

    def workspaces(self, diffs: Iterable[WorkspaceDiff]) -> None:
        creations: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        joins: dict[int, list[tuple[int, str]]] = defaultdict(list)
        leaves: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for diff in diffs:
            if diff.status == "missing" and diff.desired is not None:
                self.touched_workspaces.add(diff.name)
                creations[_settings_key(diff.desired, diff.desired_users)].append(diff.name)
                self.change(
                    "workspace",
                    diff.name,
                    "create",
                    fields=_workspace_fields(diff.desired, self.directory, diff.desired_users),
                )
            elif diff.status == "present" and diff.live is not None:
                if diff.replacement and self._replacement(diff):
                    continue  # re-created with the wanted members
                for user in diff.users_to_add:
                    joins[user].append((diff.live.id, diff.name))
                for user in diff.users_to_remove:
                    leaves[user].append((diff.live.id, diff.name))
                self._workspace_update(diff)
        for key, names in creations.items():
            for start in range(0, len(names), MAX_NAMES_PER_WORKSPACE_ADD):
                self._create_workspaces(key, names[start : start + MAX_NAMES_PER_WORKSPACE_ADD])
        self._memberships("workspace_members", "add_to_workspace", "workspace", joins, "joins")
        self._memberships(
            "workspace_members", "remove_from_workspace", "workspace", leaves, "leaves"
        )

    def _create_workspaces(
        self, key: tuple[Any, ...], names: list[str], after: tuple[str, ...] = ()
    ) -> None:
        root_access, users, permissions, notifications = key
        self.add(
            "create_workspaces",
            "workspace_add",
            "+".join(names),
            {
                "names": names,
                "root_access": root_access,
                "user_ids": list(users),
                "permissions": _overrides(permissions),
                "notifications": _overrides(notifications),
            },
            "create workspace "
            + ", ".join(f'"{n}"' for n in names)
            + f" with {len(users)} user(s)",
            after,
        )

    def _workspace_update(self, diff: WorkspaceDiff) -> None:
        if not (diff.users_to_add or diff.users_to_remove):
            return
        self.touched_workspaces.add(diff.name)
        self.change(
            "workspace",
            diff.name,
            "update",
            id=diff.live.id if diff.live else None,
            members_added=self.directory.labels(diff.users_to_add),
            members_removed=self.directory.labels(diff.users_to_remove),
            basis=diff.members_basis,
        )

    def _replacement(self, diff: WorkspaceDiff) -> bool:
        """Plan the replacement if allowed (True), else report that it is needed (False).

        A workspace left as it is still gets its members updated: members never need it.
        """
        assert diff.live is not None and diff.desired is not None
        fields = [
            {
                "field": f.field,
                "before": _display(f.live),
                "after": _display(f.desired),
                "basis": f.basis,
            }
            for f in diff.replacement
        ]
        pattern = self._protecting(diff.name)
        if diff.name not in self.options.replace or pattern is not None:
            hint = (
                f'not planned: it matches policy.protect "{pattern}", and a protected '
                "workspace is never deleted, so never replaced"
                if pattern is not None
                else f'not planned: to replace it, run again with --replace "{diff.name}"'
            )
            self.change(
                "workspace",
                diff.name,
                "needs-replacement",
                id=diff.live.id,
                fields=fields,
                warning=f"replacement {DESTROYS_FILES}",
                hint=hint,
            )
            return False
        self.touched_workspaces.add(diff.name)
        delete_id = self.add(
            "replace_workspaces",
            "workspace_delete",
            str(diff.live.id),
            {"workspace_id": diff.live.id, "name": diff.name, "reason": "replace"},
            f'delete workspace "{diff.name}" to re-create it ({DESTROYS_FILES})',
        )
        self._create_workspaces(
            _settings_key(diff.desired, diff.desired_users), [diff.name], (delete_id,)
        )
        self.change(
            "workspace",
            diff.name,
            "replace",
            id=diff.live.id,
            fields=fields,
            warning=DESTROYS_FILES,
        )
        return True

    # --- deletions ------------------------------------------------------------------------

    def deletions(self, workspaces: Iterable[WorkspaceDiff], groups: Iterable[GroupDiff]) -> None:
        """Managed objects that left the manifest: deleted when the policy allows, else kept."""
        for ws in workspaces:
            if ws.status == "extra" and ws.live is not None:
                params = {"workspace_id": ws.live.id, "reason": "prune"}
                self._delete("workspace", ws.name, ws.live.id, params, DESTROYS_FILES)
        for group in groups:
            if group.status == "extra" and group.id is not None:
                self._delete("group", group.name, group.id, {"group_id": group.id})

    def _delete(
        self, kind: str, name: str, object_id: int, params: dict[str, Any], warning: str = ""
    ) -> None:
        if not self._may_delete(kind, name):
            return
        method = "workspace_delete" if kind == "workspace" else "user_group_delete"
        (self.touched_workspaces if kind == "workspace" else self.touched_groups).add(name)
        label = "workspace" if kind == "workspace" else "user group"
        summary = f'delete {label} "{name}"' + (f" ({warning})" if warning else "")
        self.add("delete", method, str(object_id), {**params, "name": name}, summary)
        self.change(kind, name, "delete", id=object_id, **({"warning": warning} if warning else {}))

    def _protecting(self, name: str) -> str | None:
        """The ``policy.protect`` pattern that forbids deleting ``name``, if any."""
        return next((p for p in self.policy.protect if fnmatch.fnmatchcase(name, p)), None)

    def _may_delete(self, kind: str, name: str) -> bool:
        if not self.policy.prune:
            reason = "left the manifest; kept because policy.prune is false"
        else:
            pattern = self._protecting(name)
            if pattern is None:
                return True
            reason = f'left the manifest; kept because it matches policy.protect "{pattern}"'
        self.kept.append({"kind": kind, "name": name, "reason": reason})
        return False


def _settings_key(ws: DesiredWorkspace, users: frozenset[int]) -> tuple[Any, ...]:
    return (ws.root_access, tuple(sorted(users)), ws.permissions, ws.notifications)


def _display(value: bool | Overrides) -> Any:
    if isinstance(value, frozenset):
        return sorted(value)
    return value


def _unobservable_facts(diffs: Iterable[WorkspaceDiff], shown: int = 10) -> list[str]:
    """One sentence per fact that could not be observed, naming the workspaces it affects."""
    names_by_fact: dict[str, list[str]] = defaultdict(list)
    for diff in diffs:
        for fact in diff.unobservable:
            names_by_fact[fact].append(diff.name)
    sentences = []
    for fact, names in names_by_fact.items():
        listed = ", ".join(f'"{n}"' for n in names[:shown])
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        sentences.append(f"{fact}, and the tool has no record of it: {listed}{more}")
    return sentences


def build_plan(
    comparison: Comparison,
    live: LiveSite,
    state: SiteState,
    directory: UserDirectory,
    policy: Policy,
    options: PlanOptions,
    context: PlanContext,
) -> Plan:
    """The plan that makes the site match the manifest, with what apply would refuse."""
    builder = _Builder(directory, options, policy)
    builder.groups(comparison.groups)
    builder.workspaces(comparison.workspaces)
    builder.deletions(comparison.workspaces, comparison.groups)
    actions = [a.to_data() for a in builder.actions]
    user_ids = {a.params[k] for a in builder.actions for k in ("user_id",) if k in a.params}
    user_ids |= {
        u for a in builder.actions for k in ("member_ids", "user_ids") for u in a.params.get(k, [])
    }
    unobservable = list(comparison.notes) + _unobservable_facts(comparison.workspaces)
    counts = {
        "create": sum(c["action"] in ("create", "replace") for c in builder.changes),
        "change": sum(c["action"] == "update" for c in builder.changes),
        "delete": sum(c["action"] in ("delete", "replace") for c in builder.changes),
        "needs_replacement": sum(c["action"] == "needs-replacement" for c in builder.changes),
        "api_calls": len(actions),
    }
    problems = guard_problems(builder.actions, state, policy)
    return Plan(
        {
            "format": PLAN_FORMAT,
            "format_version": PLAN_FORMAT_VERSION,
            "site": context.site,
            "created_at": context.created_at,
            "tool_version": context.tool_version,
            "manifest": {"files": list(context.manifest_files), "digest": context.manifest_digest},
            "options": {"replace": sorted(options.replace), "force": options.force},
            "summary": counts,
            "changes": builder.changes,
            "actions": actions,
            "kept": builder.kept,
            "unmanaged": [
                {"kind": u.kind, "name": u.name, "id": u.id} for u in comparison.unmanaged
            ],
            "unobservable": unobservable,
            "warnings": list(comparison.conflicts) + builder.warnings,
            "safety": {"problems": problems, "forced": bool(problems) and options.force},
            "expects": fingerprints(
                live, state, builder.touched_workspaces, builder.touched_groups, user_ids
            ),
        }
    )
