"""The write kinds of a plan, one class each, and the registry that reads them from data.

``action_from_data`` is how a plan file, a journal line or a pending write becomes a typed
action again: by its API method name. Nothing outside this package and ``reconciler.api``
names a write method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.engine.actions.base import (
    PHASES,
    AfterApply,
    Deletion,
    Done,
    KnownIds,
    Pending,
    Phase,
    Result,
    Settlement,
    Unbound,
    Unsettled,
    UserKey,
    WriteAction,
)
from reconciler.engine.actions.groups import GroupCreate, GroupDelete
from reconciler.engine.actions.memberships import (
    GroupJoin,
    GroupLeave,
    MembershipChange,
    Place,
    WorkspaceJoin,
    WorkspaceLeave,
    legacy_params,
)
from reconciler.engine.actions.users import DELETES_ACCOUNT, UserAdd, UserDelete
from reconciler.engine.actions.workspaces import DESTROYS_FILES, WorkspaceAdd, WorkspaceDelete

ACTION_TYPES: dict[str, type[WriteAction]] = {
    kind.method: kind
    for kind in (
        UserAdd,
        GroupCreate,
        GroupJoin,
        WorkspaceDelete,
        WorkspaceAdd,
        WorkspaceJoin,
        WorkspaceLeave,
        GroupLeave,
        GroupDelete,
        UserDelete,
    )
}


class MalformedAction(ValueError):
    """Data that does not describe a write the tool knows: a damaged plan, journal or record."""


def action_from_data(data: object) -> WriteAction:
    """The typed action ``data`` (as ``WriteAction.to_data`` wrote it) describes."""
    if not isinstance(data, Mapping):
        raise MalformedAction("an action must be an object")
    kind = ACTION_TYPES.get(str(data.get("method")))
    if kind is None:
        raise MalformedAction(f"unknown write method {data.get('method')!r:.60}")
    params: Any = data.get("params")
    depends = data.get("depends_on", [])
    if not isinstance(params, Mapping) or not isinstance(depends, list):
        raise MalformedAction(f"the {kind.method} action's params are not an object")
    if issubclass(kind, MembershipChange):
        params = legacy_params(kind.kind, params)
    try:
        return kind.from_params(params, tuple(str(d) for d in depends))
    except (KeyError, TypeError, ValueError) as exc:
        raise MalformedAction(f"the {kind.method} action is malformed ({exc})") from None


__all__ = [
    "ACTION_TYPES",
    "DELETES_ACCOUNT",
    "DESTROYS_FILES",
    "PHASES",
    "AfterApply",
    "Deletion",
    "Done",
    "GroupCreate",
    "GroupDelete",
    "GroupJoin",
    "GroupLeave",
    "KnownIds",
    "MalformedAction",
    "MembershipChange",
    "Pending",
    "Phase",
    "Place",
    "Result",
    "Settlement",
    "Unbound",
    "Unsettled",
    "UserAdd",
    "UserDelete",
    "UserKey",
    "WorkspaceAdd",
    "WorkspaceDelete",
    "WorkspaceJoin",
    "WorkspaceLeave",
    "WriteAction",
    "action_from_data",
]
