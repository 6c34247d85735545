"""``workspace_add``: one call may create several workspaces, all with the same settings.

Checks run in this order, and the first two refuse the whole call: (1) every 0/1 parameter
and the override rule, (2) ``workspace_users`` (IDs that exist), (3) each name (length, empty,
already taken by a name or path). A name problem refuses the whole call too, unless the
``partial_multi_add`` profile is on: then the valid names are created and the error follows.
"""

from __future__ import annotations

from typing import Any

from reconciler.identity import path_key, workspace_key
from reconciler.sandbox.codec import IdList
from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call
from reconciler.sandbox.params import id_list, no_such, required, zero_or_one
from reconciler.sandbox.rows import NewWorkspace
from reconciler.sandbox.rules import NO_PERMISSION_FLAG, name_problem, stored_overrides
from reconciler.spec import (
    NAME_LIST_SEPARATOR,
    NOTIFICATION_FLAGS,
    OVERRIDE_NOTIFICATIONS_PARAM,
    OVERRIDE_PERMISSIONS_PARAM,
    PERMISSION_FLAGS,
    workspace_path,
)


def workspace_add(call: Call) -> dict[str, Any]:
    params = call.params
    names = required(params, "name").split(NAME_LIST_SEPARATOR)
    if not call.settings.keep_name_spaces:
        names = [name.strip() for name in names]
    root_access = zero_or_one(params, "root_access", True)
    override_permissions = zero_or_one(params, OVERRIDE_PERMISSIONS_PARAM, False)
    override_notifications = zero_or_one(params, OVERRIDE_NOTIFICATIONS_PARAM, False)
    permissions = [f.key for f in PERMISSION_FLAGS if zero_or_one(params, f.param, False)]
    notifications = [f.key for f in NOTIFICATION_FLAGS if zero_or_one(params, f.param, False)]
    if override_permissions and not permissions:
        raise ApiError(400, NO_PERMISSION_FLAG)
    members = id_list(params, "workspace_users", optional=True)
    unknown = call.store.missing("users", members)
    if unknown:
        raise no_such("user", unknown)

    stored_permissions, stored_notifications = stored_overrides(
        override_permissions, permissions, override_notifications, notifications
    )
    problems, valid = _check_names(call, names)
    if problems and not call.settings.partial_multi_add:
        raise ApiError(400, " ".join(problems))
    new = [
        NewWorkspace(
            id=None,
            name=name,
            path=workspace_path(name),
            root_access=root_access,
            override_permissions=override_permissions,
            override_notifications=override_notifications,
            permissions=stored_permissions,
            notifications=stored_notifications,
            members=tuple(members),
        )
        for name in valid
    ]
    ids = call.store.add_workspaces(new, call.now) if new else []
    if problems:
        created = f" Created: {', '.join(map(str, ids))}." if ids else ""
        raise ApiError(400, " ".join(problems) + created)
    return {"workspaceId": ids[0] if len(ids) == 1 else IdList(ids)}


def _check_names(call: Call, names: list[str]) -> tuple[list[str], list[str]]:
    """The problems of the names and the names without one, in the order entered. A name is
    taken when a workspace has its path, compared as the site compares names (``path_key``:
    ``legal`` is taken by ``Legal``)."""
    taken: dict[str, str] = {}  # path key -> name of the workspace holding it
    if not call.settings.allow_duplicate_workspace_names:
        for _, held, path in call.store.workspace_names():
            taken.setdefault(path_key(path), held)
    problems: list[str] = []
    valid: list[str] = []
    for name in names:
        problem = name_problem(name, length_in_bytes=call.settings.name_length_in_bytes)
        path = workspace_path(name)
        holder = taken.get(path_key(path))
        if problem is None and holder is not None:
            problem = (
                f"A workspace named {name!r} already exists."
                if holder == name
                else f"A workspace named {name!r} already exists as {holder!r}: names are "
                "compared without regard to case or width."
                if workspace_key(holder) == workspace_key(name)
                else f"The name {name!r} gives the path {path}, which the workspace "
                f"{holder!r} already has."
            )
        if problem is not None:
            problems.append(problem)
            continue
        valid.append(name)
        if not call.settings.allow_duplicate_workspace_names:
            taken[path_key(path)] = name
    return problems, valid
