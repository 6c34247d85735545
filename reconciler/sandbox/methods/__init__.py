"""The emulated methods of the users/workspaces/groups area, one table row each.

Titles: documented ones as published; where the reference shows none, chosen in the same
"<Action> Failed" style (see the sandbox README for the list).
"""

from __future__ import annotations

from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call, Method
from reconciler.sandbox.methods.locations import user_permissions_location, users_location_access
from reconciler.sandbox.methods.memberships import (
    add_to_user_group,
    add_to_workspace,
    remove_from_user_group,
    remove_from_workspace,
    user_group_add,
    user_group_delete,
)
from reconciler.sandbox.methods.users import user_info, user_list
from reconciler.sandbox.methods.workspace_add import workspace_add
from reconciler.sandbox.methods.workspaces import workspace_delete, workspace_info, workspace_list

LOCATION_ACCESS_TITLE = "Users Location Access Failed"
LOCATION_PERMISSIONS_TITLE = "User Permissions Location Failed"


def _not_emulated(name: str) -> Method:
    def refuse(call: Call) -> None:
        raise ApiError(
            400,
            f"{name} is not emulated by the sandbox: define the site's users in the seed file "
            "(users:) instead.",
        )

    title = "User Add Failed" if name == "user_add" else "User Delete Failed"
    return Method(name, "POST", name, title, refuse, admin_only=False)


METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method("user_info", "GET", "userInfo", "User Info Failed", user_info),
        Method("user_list", "GET", "userList", "User List Failed", user_list),
        Method(
            "users_location_access", "GET", "usersLocationAccess", LOCATION_ACCESS_TITLE,
            users_location_access, admin_only=False,
        ),
        Method(
            "user_permissions_location", "GET", "userPermissionsLocation",
            LOCATION_PERMISSIONS_TITLE, user_permissions_location, admin_only=False,
        ),
        Method(
            "workspace_list", "GET", "workspaceList", "Workspace Listing Failed", workspace_list,
            admin_only=False,
        ),
        Method(
            "workspace_info", "GET", "workspaceInfo", "Workspace Info Failed", workspace_info,
            admin_only=False,  # checked by the handler, after the refuse_workspace_info profile
        ),
        Method("workspace_add", "POST", "workspaceAdd", "Workspace Add Failed", workspace_add),
        Method(
            "workspace_delete", "POST", "workspaceDelete", "Workspace Delete Failed",
            workspace_delete,
        ),
        Method("user_group_add", "POST", "userGroupAdd", "User Group Add Failed", user_group_add),
        Method(
            "user_group_delete", "POST", "userGroupDeleted", "User Group Delete Failed",
            user_group_delete,
        ),
        Method(
            "add_to_user_group", "POST", "addToUserGroup", "Add User to User Group Failed",
            add_to_user_group,
        ),
        Method(
            "remove_from_user_group", "POST", "removeFromUserGroup",
            "Remove User from User Group Failed", remove_from_user_group,
        ),
        Method(
            "add_to_workspace", "POST", "addToWorkspace", "Add User to Workspace Failed",
            add_to_workspace,
        ),
        Method(
            "remove_from_workspace", "POST", "removeFromWorkspace",
            "Remove User from Workspace Failed", remove_from_workspace,
        ),
        _not_emulated("user_add"),
        _not_emulated("user_delete"),
    )
}  # fmt: skip
