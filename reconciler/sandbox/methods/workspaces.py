"""``workspace_list``, ``workspace_info`` and ``workspace_delete``."""

from __future__ import annotations

from typing import Any

from reconciler.sandbox.codec import Listing, flag, format_time
from reconciler.sandbox.errors import ADMIN_REQUIRED, ApiError
from reconciler.sandbox.methods.base import Call, require_admin
from reconciler.sandbox.params import no_such, one_id
from reconciler.spec import NOTIFICATION_FLAGS

REFUSED_WORKSPACE_INFO = "This site does not allow workspace_info."

# workspaceOverridePermissions' field order in the notes (from the published sample).
_INFO_PERMISSIONS = (
    ("uploadFiles", "upload_files"),
    ("batchUploadFiles", "batch_upload_files"),
    ("sendFiles", "send_files"),
    ("sendFilesNonUser", "send_files_non_user"),
    ("downloadFiles", "download_files"),
    ("batchDownloadFiles", "batch_download_files"),
    ("moveCopyFiles", "move_copy_files"),
    ("batchMoveCopyFiles", "batch_move_copy_files"),
    ("renameFiles", "rename_files"),
    ("deleteFiles", "delete_files"),
    ("batchDeleteFiles", "batch_delete_files"),
    ("createFolders", "create_folders"),
)


def workspace_list(call: Call) -> Any:
    if call.caller.admin:
        workspaces = call.store.workspace_names()
    elif call.settings.open_workspace_list:
        workspaces = call.store.workspace_names(member=call.caller.id)
    else:
        raise ApiError(403, ADMIN_REQUIRED)
    entries = [
        {"id": ws_id, "workspaceName": name, "workspacePath": path, "listed": 1}
        for ws_id, name, path in workspaces
    ]
    if call.settings.legacy_workspace_list:
        return Listing("workspace", entries)
    return {"workspaces": Listing("workspace", entries), "totalWorkspaces": len(entries)}


def workspace_info(call: Call) -> dict[str, Any]:
    if call.settings.refuse_workspace_info:
        raise ApiError(403, REFUSED_WORKSPACE_INFO)
    require_admin(call)
    workspace_id = one_id(call.params, "workspace_id")
    ws = call.store.workspace(workspace_id)
    if ws is None:
        raise no_such("workspace", [workspace_id])
    users = [
        {
            "id": user.id,
            "firstName": user.first_name,
            "lastName": user.last_name,
            "email": user.email,
            "username": user.username,
            "subadmin": 0,  # 0 in the published sample; the sandbox has no sub-administrators
        }
        for user in call.store.listed_users([ws.id])
    ]
    return {
        "id": ws.id,
        "name": ws.name,
        "path": ws.path,
        "created": format_time(ws.created),
        "modified": format_time(ws.modified),
        "users": Listing("user", users, wrap_json=True),
        # Flags are stored empty while an override is off, so "off" reads as all 0.
        "workspaceOverridePermissions": {
            field: flag(key in ws.permissions) for field, key in _INFO_PERMISSIONS
        },
        "workspaceOverrideNotifications": {
            f.field: flag(f.key in ws.notifications) for f in NOTIFICATION_FLAGS
        },
    }


def workspace_delete(call: Call) -> dict[str, Any]:
    workspace_id = one_id(call.params, "workspace_id")
    if call.store.workspace(workspace_id) is None:
        raise no_such("workspace", [workspace_id])
    call.store.delete_workspace(workspace_id)
    return {"workspaceId": workspace_id}
