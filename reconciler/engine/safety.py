"""The guards that make apply refuse a plan that destroys too much at once.

They live here, in one place, and act on the plan as a whole. They never block a dry run:
``plan`` shows the whole plan and says why apply would refuse it; ``apply`` refuses unless
``--force``.
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.engine.plan import Action
from reconciler.engine.state import SiteState
from reconciler.model import Policy

MIN_MANAGED_WORKSPACES_FOR_DELETE_GUARD = 10
MIN_RECORDED_MEMBERSHIPS_FOR_REMOVAL_GUARD = 20

_REMOVALS = {"remove_from_workspace": "workspace_ids", "remove_from_user_group": "group_ids"}


def guard_problems(actions: Sequence[Action], state: SiteState, policy: Policy) -> list[str]:
    """Plain sentences, one per guard the plan trips; empty when apply may go ahead."""
    problems: list[str] = []
    managed = len(state.managed_workspaces())
    deletes = sum(
        1
        for action in actions
        if action.method == "workspace_delete" and action.params.get("reason") == "prune"
    )
    if managed >= MIN_MANAGED_WORKSPACES_FOR_DELETE_GUARD and deletes > (
        policy.max_delete_fraction * managed
    ):
        problems.append(
            f"it deletes {deletes} of the {managed} managed workspaces "
            f"({deletes / managed:.0%}), more than policy.max_delete_fraction "
            f"({policy.max_delete_fraction:.0%}) allows"
        )
    recorded = state.recorded_memberships()
    removals = sum(
        len(action.params[key]) for action in actions if (key := _REMOVALS.get(action.method))
    )
    if recorded >= MIN_RECORDED_MEMBERSHIPS_FOR_REMOVAL_GUARD and removals > (
        policy.max_member_removal_fraction * recorded
    ):
        problems.append(
            f"it removes {removals} of the {recorded} recorded memberships "
            f"({removals / recorded:.0%}), more than policy.max_member_removal_fraction "
            f"({policy.max_member_removal_fraction:.0%}) allows"
        )
    return problems
