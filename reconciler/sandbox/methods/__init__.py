"""The emulated methods of the users/workspaces/groups area, one table row each.

Titles: documented ones as published; where the reference shows none, chosen in the same
"<Action> Failed" style (see the sandbox README for the list). ``method_named`` is how the
dispatcher finds a method, so that profile switches that rename a method act in one place.
"""

from __future__ import annotations

from reconciler.sandbox.methods.accounts import user_add, user_delete
from reconciler.sandbox.methods.base import Method
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
from reconciler.sandbox.settings import SandboxSettings

LOCATION_ACCESS_TITLE = "Users Location Access Failed"
LOCATION_PERMISSIONS_TITLE = "User Permissions Location Failed"
GET, POST, POST_DELETE = ("GET",), ("POST",), ("POST", "DELETE")

METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method("user_info", GET, "userInfo", "User Info Failed", user_info),
        Method("user_list", GET, "userList", "User List Failed", user_list),
        Method(
            "users_location_access", GET, "usersLocationAccess", LOCATION_ACCESS_TITLE,
            users_location_access, admin_only=False,
        ),
        Method(
            "user_permissions_location", GET, "userPermissionsLocation",
            LOCATION_PERMISSIONS_TITLE, user_permissions_location, admin_only=False,
        ),
        Method(
            "workspace_list", GET, "workspaceList", "Workspace Listing Failed", workspace_list,
            admin_only=False,
        ),
        Method(
            "workspace_info", GET, "workspaceInfo", "Workspace Info Failed", workspace_info,
            admin_only=False,  # checked by the handler, after the refuse_workspace_info profile
        ),
        Method("workspace_add", POST, "workspaceAdd", "Workspace Add Failed", workspace_add),
        Method(
            "workspace_delete", POST, "workspaceDelete", "Workspace Delete Failed",
            workspace_delete,
        ),
        Method("user_group_add", POST, "userGroupAdd", "User Group Add Failed", user_group_add),
        Method(
            "user_group_delete", POST_DELETE, "userGroupDeleted", "User Group Delete Failed",
            user_group_delete,
        ),
        Method(
            "add_to_user_group", POST, "addToUserGroup", "Add User to User Group Failed",
            add_to_user_group,
        ),
        Method(
            "remove_from_user_group", POST, "removeFromUserGroup",
            "Remove User from User Group Failed", remove_from_user_group,
        ),
        Method(
            "add_to_workspace", POST, "addToWorkspace", "Add User to Workspace Failed",
            add_to_workspace,
        ),
        Method(
            "remove_from_workspace", POST, "removeFromWorkspace",
            "Remove User from Workspace Failed", remove_from_workspace,
        ),
        Method("user_add", POST, "userAdd", "User Add Failed", user_add),
        Method("user_delete", POST_DELETE, "userDelete", "User Delete Failed", user_delete),
    )
}  # fmt: skip

LEGACY_LOCATION_METHOD = Method(
    "user_location_access", GET, "usersLocationAccess", LOCATION_ACCESS_TITLE,
    users_location_access, admin_only=False,
)  # fmt: skip
"""``users_location_access`` under its FileGenius-era name; the published FileGenius page
answers with the same key, ``usersLocationAccess``."""


def method_named(name: str, settings: SandboxSettings) -> Method | None:
    """The method ``name`` calls on a site with ``settings``; None if there is none."""
    if settings.legacy_location_method:
        if name == LEGACY_LOCATION_METHOD.name:
            return LEGACY_LOCATION_METHOD
        if name == "users_location_access":
            return None
    return METHODS.get(name)


PUBLISHED_TITLES: dict[str, tuple[str, str]] = {
    "Workspace Listing Failed": ('"Workspace Listing Failed', "'Workspace Listing Failed"),
    **{
        title: ("'" + title, "'" + title)
        for title in (
            "Workspace Delete Failed", "User Group Add Failed", "User Group Delete Failed",
            "Add User to User Group Failed", "Remove User from User Group Failed",
            "Remove User from Workspace Failed", "User Delete Failed",
        )
    },
}  # fmt: skip
"""Titles as the published samples print them, stray leading quote and all: (JSON, XML)."""


def published_title(title: str, *, xml: bool) -> str:
    """``title`` as the published samples print it (unchanged where they print it plainly)."""
    forms = PUBLISHED_TITLES.get(title)
    return title if forms is None else forms[xml]
