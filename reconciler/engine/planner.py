"""Turn a ``Comparison`` into a ``Plan``: the ordered, batched API calls and what they change.

The order is fixed (``actions.Phase``): groups are created and joined first, then workspaces
are replaced (only those named with ``--replace``) and created, members of existing
workspaces are added and removed, members leave groups, and deletions come last, so an
apply that stops half-way never destroyed anything it was about to re-create.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from reconciler.access.changes import plan_access
from reconciler.engine.actions import PHASES, WriteAction
from reconciler.engine.diff import Comparison, WorkspaceDiff
from reconciler.engine.facts import fingerprints
from reconciler.engine.plan import (
    Plan,
    PlanContext,
    PlanOptions,
    RecordChange,
)
from reconciler.engine.records import Records
from reconciler.engine.renames import lookalike_warnings, rename_problems
from reconciler.engine.safety import (
    guard_problems,
    manifest_objects,
    vanished_files,
)
from reconciler.engine.steps import Steps
from reconciler.engine.users import UserDirectory
from reconciler.kinds.group.steps import delete_groups, plan_groups
from reconciler.kinds.user.steps import plan_users
from reconciler.kinds.workspace.steps import delete_workspaces, plan_workspaces
from reconciler.model import LiveSite, Policy
from reconciler.ownership.owners import creation_refusals, with_owners


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


def _notices(
    actions: list[WriteAction],
    records: Records,
    context: PlanContext,
    declared: frozenset[tuple[str, str]] | None,
) -> list[str]:
    """Paragraphs the plan opens with: what it could not judge, and what may be a mistake."""
    notices = []
    for file, objects in vanished_files(actions, records, context.manifest_files, declared).items():
        notices.append(
            f"The manifest file {file} declared {', '.join(objects)}, and it is no longer part "
            "of the manifest (deleted, renamed, a broken link?). This plan deletes them. If "
            "that is what you want, apply with --force; if not, restore the file."
        )
    return notices


def plan_steps(
    comparison: Comparison,
    directory: UserDirectory,
    options: PlanOptions,
    policy: Policy,
    live: LiveSite | None = None,
) -> Steps:
    """Every kind's steps (``kinds/*/steps.py``), in the order plans have always listed them:
    users, groups, workspaces, then the deletions (workspaces, then groups)."""
    steps = Steps(directory, options, policy, live)
    plan_users(steps, comparison.users)
    plan_groups(steps, comparison.groups)
    plan_workspaces(steps, comparison.workspaces)
    delete_workspaces(steps, comparison.workspaces)
    delete_groups(steps, comparison.groups)
    return steps


def build_plan(
    comparison: Comparison,
    live: LiveSite,
    records: Records,
    directory: UserDirectory,
    policy: Policy,
    options: PlanOptions,
    context: PlanContext,
    notices: Iterable[str] = (),
    warnings: Iterable[str] = (),
    record_changes: Iterable[RecordChange] = (),
) -> Plan:
    """The plan that makes the site match the manifest, with what apply would refuse.
    ``record_changes``: what reading the site already changed in the records (moves, dead
    members); the records of objects gone from the site and the manifest join them."""
    steps = plan_steps(comparison, directory, options, policy, live)
    actions = sorted(steps.actions, key=lambda action: PHASES.index(action.phase))
    touched = {obj for action in actions for obj in action.touches()}
    renaming = rename_problems(comparison, steps.changes)
    users = {u for action in actions for u in action.named_users() if isinstance(u, int)}
    # What the whole manifest declares matters only to a plan that prunes (a vanished file's
    # objects), and reading it back from the plan's copy costs a large manifest 65 ms.
    prunes = any((d := a.deletion()) and d.reason == "prune" for a in actions)
    declared = manifest_objects(context) if prunes else None
    return Plan(
        context=context,
        options=options,
        actions=tuple(actions),
        changes=with_owners(steps.changes, context.desired_site, records),
        kept=tuple(steps.kept),
        unmanaged=comparison.unmanaged,
        unobservable=tuple(comparison.notes) + tuple(_unobservable_facts(comparison.workspaces)),
        warnings=(
            *warnings,
            *comparison.conflicts,
            *steps.warnings,
            *lookalike_warnings(comparison, steps.changes),
        ),
        notices=(*notices, *_notices(actions, records, context, declared)),
        guards=tuple(
            guard_problems(
                actions,
                records,
                policy,
                context.manifest_files,
                groups_listed=live.groups_listed,
                assume_no_groups=options.assume_no_groups,
                users=live.users,
                caller_id=live.caller_id,
                declared=declared,
            )
        )
        + tuple(renaming)
        + tuple(creation_refusals(steps.changes, context.desired_site)),
        expects=fingerprints(
            live,
            records,
            {name for kind, name in touched if kind == "workspace"},
            {name for kind, name in touched if kind == "group"},
            users,
        ),
        access=plan_access(actions, steps.changes, live, directory, records),
        record_changes=(*record_changes, *steps.forgotten),
    )
