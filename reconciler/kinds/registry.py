"""The kinds the tool manages, and the write kinds they own, by name.

``KIND_ACTIONS`` is each kind's writes; ``ACTION_TYPES`` the same by API method, which is how
a plan file, a journal line or a pending write becomes a typed action again
(``action_from_data``). Adding a kind is adding its package and its line here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.core.actions import MalformedAction, WriteAction
from reconciler.core.memberships import MembershipChange, legacy_params
from reconciler.kinds.group import actions as group_actions
from reconciler.kinds.user import actions as user_actions
from reconciler.kinds.workspace import actions as workspace_actions

KIND_ACTIONS: Mapping[str, tuple[type[WriteAction], ...]] = {
    "user": user_actions.ACTIONS,
    "group": group_actions.ACTIONS,
    "workspace": workspace_actions.ACTIONS,
}

ACTION_TYPES: Mapping[str, type[WriteAction]] = {
    kind.method: kind for actions in KIND_ACTIONS.values() for kind in actions
}


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
