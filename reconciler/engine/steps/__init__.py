"""The plan's steps, kind by kind: what each difference of a ``Comparison`` becomes.

Each kind's steps are in its own module (``user``, ``group``, ``workspace``) and collect into
one ``Steps`` (``base``): the write actions (batched: members join and leave one call per
user, workspaces with one spec are created in one ``workspace_add``) and the changes people
read. ``planner.build_plan`` orders them and adds what the whole plan needs (guards,
notices, fingerprints). What a setting is and whether it needs a replacement is the kind's
(``reconciler.kinds``).
"""

from __future__ import annotations

from reconciler.engine.diff import Comparison
from reconciler.engine.plan import PlanOptions
from reconciler.engine.steps.base import Steps
from reconciler.engine.steps.group import delete_groups, plan_groups
from reconciler.engine.steps.user import plan_users
from reconciler.engine.steps.workspace import delete_workspaces, plan_workspaces
from reconciler.engine.users import UserDirectory
from reconciler.model import LiveSite, Policy


def plan_steps(
    comparison: Comparison,
    directory: UserDirectory,
    options: PlanOptions,
    policy: Policy,
    live: LiveSite | None = None,
) -> Steps:
    """Every kind's steps, in the order plans have always listed them: users, groups,
    workspaces, then the deletions (workspaces, then groups)."""
    steps = Steps(directory, options, policy, live)
    plan_users(steps, comparison.users)
    plan_groups(steps, comparison.groups)
    plan_workspaces(steps, comparison.workspaces)
    delete_workspaces(steps, comparison.workspaces)
    delete_groups(steps, comparison.groups)
    return steps


__all__ = ["Steps", "plan_steps"]
