"""User groups and the membership methods of groups and workspaces.

Every call validates all of its IDs before changing anything, so a refused call changes
nothing. Adding an existing member and removing a non-member succeed without a change (the
reference is silent; the sandbox treats membership calls as idempotent), unless the
``strict_memberships`` switch makes them a 400 naming the targets.
"""

from __future__ import annotations

from typing import Any

from reconciler.sandbox.codec import CommaIds
from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call
from reconciler.sandbox.params import (
    has_control_characters,
    id_list,
    no_such,
    one_id,
    required_text,
)
from reconciler.sandbox.rows import NewGroup


def user_group_add(call: Call) -> dict[str, Any]:
    name = required_text(call.params, "name")
    if call.settings.keep_name_spaces:
        name = call.params["name"]
    if has_control_characters(name):
        raise ApiError(400, f"The group name {name!r} contains control characters.")
    members = id_list(call.params, "group_users", optional=True)
    _require("users", "user", call, members)
    group_id = call.store.add_group(NewGroup(None, name, tuple(members)), call.now)
    return {"userGroupId": group_id, "userGroupMembers": CommaIds(members)}


def user_group_delete(call: Call) -> dict[str, Any]:
    group_id = one_id(call.params, "user_group_id")
    _require("user_groups", "user group", call, [group_id])
    call.store.delete_group(group_id)
    return {"userGroupId": group_id}


def add_to_user_group(call: Call) -> dict[str, Any]:
    user_id, group_ids = _user_and_targets(call, "user_group_ids", "user_groups", "user group")
    if call.settings.strict_memberships:
        _refuse_unchanged(user_id, "already a member of", set(call.store.group_ids_of(user_id)),
                          group_ids, "user group", present=True)  # fmt: skip
    call.store.join_groups(user_id, group_ids)
    return {"userId": user_id, "userGroupIds": CommaIds(group_ids)}


def remove_from_user_group(call: Call) -> dict[str, Any]:
    user_id, group_ids = _user_and_targets(call, "user_group_ids", "user_groups", "user group")
    if call.settings.strict_memberships:
        _refuse_unchanged(user_id, "not a member of", set(call.store.group_ids_of(user_id)),
                          group_ids, "user group", present=False)  # fmt: skip
    call.store.leave_groups(user_id, group_ids)
    return {"userId": user_id, "userGroupIds": CommaIds(group_ids)}


def add_to_workspace(call: Call) -> dict[str, Any]:
    user_id, ws_ids = _user_and_targets(call, "user_workspace_ids", "workspaces", "workspace")
    if call.settings.strict_memberships:
        _refuse_unchanged(user_id, "already a member of", _workspace_ids_of(call, user_id),
                          ws_ids, "workspace", present=True)  # fmt: skip
    call.store.join_workspaces(user_id, ws_ids, call.now)
    return {"userId": user_id, "userWorkspaceIds": CommaIds(ws_ids)}


def remove_from_workspace(call: Call) -> dict[str, Any]:
    user_id, ws_ids = _user_and_targets(call, "user_workspace_ids", "workspaces", "workspace")
    if call.settings.strict_memberships:
        _refuse_unchanged(user_id, "not a member of", _workspace_ids_of(call, user_id),
                          ws_ids, "workspace", present=False)  # fmt: skip
    call.store.leave_workspaces(user_id, ws_ids, call.now)
    return {"userId": user_id, "userWorkspaceIds": CommaIds(ws_ids)}


def _user_and_targets(call: Call, param: str, table: str, kind: str) -> tuple[int, list[int]]:
    """``user_id`` and the list in ``param``, both checked to exist (404 naming the IDs)."""
    user_id = one_id(call.params, "user_id")
    targets = id_list(call.params, param)
    _require("users", "user", call, [user_id])
    _require(table, kind, call, targets)
    return user_id, targets


def _workspace_ids_of(call: Call, user_id: int) -> set[int]:
    return {ws_id for ws_id, _, _ in call.store.workspace_names(member=user_id)}


def _refuse_unchanged(
    user_id: int, relation: str, current: set[int], targets: list[int], kind: str, *, present: bool
) -> None:
    """Under ``strict_memberships``: a 400 when a call would change nothing for some target."""
    unchanged = [target for target in targets if (target in current) == present]
    if unchanged:
        listed = ", ".join(map(str, unchanged))
        raise ApiError(400, f"User {user_id} is {relation} the {kind} {listed}.")


def _require(table: str, kind: str, call: Call, ids: list[int]) -> None:
    unknown = call.store.missing(table, ids) if ids else []
    if unknown:
        raise no_such(kind, unknown)
