"""``users_location_access`` and ``user_permissions_location``: who reaches a path, and how.

The sandbox models two kinds of location: the site root ``/`` and the inside of a workspace
(its ``workspacePath`` and anything below it). Folders inside a workspace are not modelled:
a path below a workspace path is treated as the workspace. Any other path does not exist.
"""

from __future__ import annotations

from typing import Any

from reconciler.sandbox.codec import EMPTY_NULL, Listing, flag
from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call
from reconciler.sandbox.params import choice, required
from reconciler.sandbox.rows import GroupRow, ListedUser, WorkspaceRow
from reconciler.spec import PERMISSION_FLAGS

NO_ACCESS_TITLE = "You do not have access privileges for this location"
NO_ACCESS_MESSAGE = "Please try a different location or speak to an administrator"

# userPermissionsLocation's field order in the reference (admin first, userId last).
_LOCATION_PERMISSIONS = (
    "uploadFiles", "batchUploadFiles", "downloadFiles", "batchDownloadFiles", "deleteFiles",
    "batchDeleteFiles", "moveCopyFiles", "batchMoveCopyFiles", "renameFiles", "createFolders",
    "sendFiles", "sendFilesNonUser",
)  # fmt: skip
_KEY_OF_FIELD = {f.field: f.key for f in PERMISSION_FLAGS}


def containing_workspaces(call: Call, path: str) -> list[WorkspaceRow]:
    """Workspaces whose path is ``path`` or a prefix of it (several only with duplicates).

    Every prefix ending in ``/`` is a candidate, so the lookup uses the path index instead of
    scanning all workspaces; ``path + "/"`` lets ``/Team_workspace`` name the workspace too.
    """
    candidates = {path.rstrip("/") + "/"}
    if not call.settings.exact_workspace_paths:
        candidates |= {path[: i + 1] for i, char in enumerate(path) if char == "/" and i > 0}
    return call.store.workspaces_at(candidates)


def users_location_access(call: Call) -> Any:
    path = required(call.params, "path")
    kind = choice(call.params, "type", ("all", "nonAdminsOnly"), "all")
    if not (path.startswith("/") and path.endswith("/")):
        raise ApiError(400, f"path must begin and end with '/'; got {path!r}.")
    caller = call.caller
    groups: list[GroupRow] = []
    if path == "/":
        if not caller.admin:
            raise _no_access()
        users = call.store.listed_users()
        if not call.settings.omit_groups_in_location_access:
            groups = call.store.groups()
    else:
        workspaces = containing_workspaces(call, path)
        if not workspaces:
            raise _no_access()
        users = call.store.listed_users([ws.id for ws in workspaces])
        if not caller.admin and all(user.id != caller.id for user in users):
            raise _no_access()
    if kind == "nonAdminsOnly":
        users = [user for user in users if not user.admin]
    entries = [_user_entry(user) for user in users] + [_group_entry(group) for group in groups]
    return Listing("user", entries)


def user_permissions_location(call: Call) -> dict[str, Any]:
    path = required(call.params, "path")
    if not path.startswith("/"):
        raise ApiError(400, f"path must begin with '/'; got {path!r}.")
    caller = call.caller
    if caller.admin:
        # The reference: administrators have full permissions everywhere, returned as null.
        answer: dict[str, Any] = {"admin": None}
        answer.update(dict.fromkeys(_LOCATION_PERMISSIONS))
    else:
        flags = caller.permissions
        overriding = [ws for ws in containing_workspaces(call, path) if ws.override_permissions]
        if overriding:
            flags = overriding[0].permissions
        answer = {"admin": 0}
        answer.update(
            {field: flag(_KEY_OF_FIELD[field] in flags) for field in _LOCATION_PERMISSIONS}
        )
    answer["userId"] = caller.id
    return answer


def _no_access() -> ApiError:
    return ApiError(403, NO_ACCESS_MESSAGE, title=NO_ACCESS_TITLE)


# Nulls in these entries are EMPTY_NULL: the published XML samples print them as empty
# elements (<organization/>, <subAdmin/>), unlike user_info's <phoneExt>null</phoneExt>.


def _user_entry(user: ListedUser) -> dict[str, Any]:
    return {
        "id": user.id,
        "username": user.username,
        "email": user.email,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "organization": EMPTY_NULL if user.organization is None else user.organization,
        "subAdmin": EMPTY_NULL,
        "admin": flag(user.admin),
        "uType": 1,
        "autoRecip": 0,
    }


def _group_entry(group: GroupRow) -> dict[str, Any]:
    return {
        "id": group.id,
        "username": group.name,
        "email": EMPTY_NULL,
        "firstName": "",
        "lastName": "",
        "organization": EMPTY_NULL,
        "subAdmin": EMPTY_NULL,
        "admin": 0,
        "uType": 0,
        "autoRecip": 0,
    }
