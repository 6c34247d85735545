"""Find out what a write of unknown outcome did, by reading the site.

``resolve_unknown`` splits an action into the part the site shows as applied (to be
recorded) and the part that certainly did not happen (safe to send again). Memberships are
sets, so re-sending a membership change can never create a duplicate; creations are checked
by name, and a creation that cannot be checked is never sent again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from reconciler.api.client import SiteClient
from reconciler.api.errors import InvalidRequest, NotFound, PermissionDenied
from reconciler.engine.plan import Action


@dataclass(frozen=True, slots=True)
class Settlement:
    applied: Action | None = None  # the part the site shows as done
    result: dict[str, Any] = field(default_factory=dict)  # its result, for the records
    remaining: Action | None = None  # the part that certainly did not happen
    cannot_tell: bool = False
    reason: str = ""


def _split(action: Action, key: str, done: list[Any], todo: list[Any]) -> Settlement:
    return Settlement(
        applied=replace(action, params={**action.params, key: done}) if done else None,
        remaining=replace(action, params={**action.params, key: todo}) if todo else None,
    )


async def resolve_unknown(client: SiteClient, action: Action) -> Settlement:
    method, params = action.method, action.params
    if method == "workspace_add":
        return await _workspace_add(client, action)
    if method == "user_group_add":
        return await _group_add(client, action)
    if method in ("add_to_workspace", "remove_from_workspace"):
        return await _workspace_membership(client, action)
    if method == "workspace_delete":
        ids = {entry.id for entry in await client.workspace_list()}
        return (
            Settlement(applied=action)
            if params["workspace_id"] not in ids
            else Settlement(remaining=action)
        )
    if method == "user_group_delete":
        groups = [loc.id for loc in await client.users_location_access("/") if loc.is_group]
        gone = bool(groups) and params["group_id"] not in groups
        return Settlement(applied=action) if gone else Settlement(remaining=action)
    # add_to_user_group / remove_from_user_group: group members cannot be read, and a
    # membership is a set: sending the change again cannot duplicate anything.
    return Settlement(remaining=action)


async def _workspace_add(client: SiteClient, action: Action) -> Settlement:
    newest: dict[str, int] = {}
    for entry in await client.workspace_list():
        newest[entry.name] = max(entry.id, newest.get(entry.name, 0))
    names = action.params["names"]
    done = [name for name in names if name in newest]
    settlement = _split(action, "names", done, [n for n in names if n not in newest])
    return replace(settlement, result={"ids": [newest[name] for name in done]})


async def _group_add(client: SiteClient, action: Action) -> Settlement:
    name = action.params["name"]
    groups = [loc for loc in await client.users_location_access("/") if loc.is_group]
    found = [group.id for group in groups if group.name == name]
    if found:
        return Settlement(applied=action, result={"id": max(found)})
    if groups:
        return Settlement(remaining=action)
    return Settlement(
        cannot_tell=True,
        reason="the site does not list user groups, so the tool cannot check whether "
        f'"{name}" was created; it will not create it again',
    )


async def _workspace_membership(client: SiteClient, action: Action) -> Settlement:
    user, adding = action.params["user_id"], action.method == "add_to_workspace"
    pairs = list(zip(action.params["workspace_ids"], action.params["names"], strict=True))
    done: list[tuple[int, str]] = []
    todo: list[tuple[int, str]] = []
    for workspace_id, name in pairs:
        try:
            info = await client.workspace_info(workspace_id)
        except (PermissionDenied, InvalidRequest, NotFound):
            todo.append((workspace_id, name))  # cannot look: membership is a set, send again
            continue
        member = any(u.id == user for u in info.users)
        (done if member == adding else todo).append((workspace_id, name))
    settlement = _split(action, "workspace_ids", [w for w, _ in done], [w for w, _ in todo])
    return Settlement(
        applied=_with_names(settlement.applied, [n for _, n in done]),
        remaining=_with_names(settlement.remaining, [n for _, n in todo]),
    )


def _with_names(action: Action | None, names: list[str]) -> Action | None:
    return None if action is None else replace(action, params={**action.params, "names": names})
