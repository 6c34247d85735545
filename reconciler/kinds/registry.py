"""The kinds the tool manages: the one list the engine loops over, and their writes by name.

``KINDS`` is every kind (``core/kind.py``), in the order plans list them: users first (the
others may name a new user), then groups, then workspaces; retirements run the other way.
``ACTION_TYPES`` is every kind's writes by API method, which is how a plan file, a journal
line or a pending write becomes a typed action again (``action_from_data``). Adding a kind
is adding its package and its line in ``KINDS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.core.actions import MalformedAction, WriteAction
from reconciler.core.kind import Kind
from reconciler.core.memberships import MembershipChange, legacy_params
from reconciler.kinds.group.kind import KIND as GROUP
from reconciler.kinds.user.kind import KIND as USER
from reconciler.kinds.workspace.kind import KIND as WORKSPACE

KINDS: tuple[Kind, ...] = (USER, GROUP, WORKSPACE)

ACTION_TYPES: Mapping[str, type[WriteAction]] = {
    action.method: action for kind in KINDS for action in kind.actions
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
