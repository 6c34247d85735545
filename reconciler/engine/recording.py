"""Fold what an applied action did into the tool's records.

``record_result`` is idempotent: folding the same result twice leaves the same records, so
a journal can be replayed after a crash without caring what was already folded.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reconciler.engine.plan import Action
from reconciler.engine.state import RecordedGroup, RecordedWorkspace, SiteState


def _overrides(value: list[str] | None) -> frozenset[str] | None:
    return None if value is None else frozenset(value)


def record_result(state: SiteState, action: Action, result: dict[str, Any]) -> None:
    """Update ``state`` with the effect of ``action``, which the site reported as done."""
    params = action.params
    method = action.method
    if method == "user_group_add":
        state.groups[params["name"]] = RecordedGroup(
            id=int(result["id"]),
            managed=True,
            origin="created",
            members=frozenset(params["member_ids"]),
        )
    elif method == "workspace_add":
        for name, workspace_id in zip(params["names"], result["ids"], strict=True):
            state.workspaces[name] = RecordedWorkspace(
                id=int(workspace_id),
                managed=True,
                origin="created",
                root_access=bool(params["root_access"]),
                permissions=_overrides(params["permissions"]),
                notifications=_overrides(params["notifications"]),
                settings_known=True,
                members=frozenset(params["user_ids"]),
            )
    elif method in ("add_to_user_group", "remove_from_user_group"):
        for group_id, name in zip(params["group_ids"], params["names"], strict=True):
            _change_group_member(state, name, group_id, params["user_id"], method.startswith("add"))
    elif method in ("add_to_workspace", "remove_from_workspace"):
        for workspace_id, name in zip(params["workspace_ids"], params["names"], strict=True):
            _change_workspace_member(
                state, name, workspace_id, params["user_id"], method.startswith("add")
            )
    elif method == "workspace_delete":
        record = state.workspaces.get(params["name"])
        if record is not None and record.id == params["workspace_id"]:
            del state.workspaces[params["name"]]
    elif method == "user_group_delete":
        group = state.groups.get(params["name"])
        if group is not None and group.id == params["group_id"]:
            del state.groups[params["name"]]
    else:
        raise ValueError(f"no recording rule for {method}")


def _change_group_member(state: SiteState, name: str, group_id: int, user: int, add: bool) -> None:
    record = state.groups.get(name)
    if record is None or record.id != group_id:
        record = RecordedGroup(id=group_id)
    members = record.members | {user} if add else record.members - {user}
    state.groups[name] = replace(record, members=members, uncertain=False)


def _change_workspace_member(
    state: SiteState, name: str, workspace_id: int, user: int, add: bool
) -> None:
    record = state.workspaces.get(name)
    if record is None or record.id != workspace_id:
        record = RecordedWorkspace(id=workspace_id)
    members = record.members | {user} if add else record.members - {user}
    state.workspaces[name] = replace(record, members=members)
