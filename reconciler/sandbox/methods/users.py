"""``user_info`` and ``user_list``: the site's users as the reference and the notes show them."""

from __future__ import annotations

from typing import Any

from reconciler.sandbox.codec import Listing, flag, format_time
from reconciler.sandbox.errors import ApiError
from reconciler.sandbox.methods.base import Call
from reconciler.sandbox.params import choice, no_such, one_id
from reconciler.sandbox.rows import UserRow
from reconciler.sandbox.store import USER_SORT_COLUMNS
from reconciler.spec import NOTIFICATION_FLAGS, PERMISSION_FLAGS, USER_LIST_PAGE_SIZE

SITE_ID = 1
"""``siteId`` of every ``user_list`` entry: the sandbox emulates one site."""

# The User resource's order of base-level permission fields in the reference.
_USER_INFO_PERMISSIONS = (
    "uploadFiles", "batchUploadFiles", "sendFiles", "sendFilesNonUser", "downloadFiles",
    "batchDownloadFiles", "moveCopyFiles", "batchMoveCopyFiles", "renameFiles", "deleteFiles",
    "batchDeleteFiles", "createFolders",
)  # fmt: skip
_KEY_OF_FIELD = {f.field: f.key for f in (*PERMISSION_FLAGS, *NOTIFICATION_FLAGS)}
SORT_CHOICES = tuple(f"{field}_{way}" for field in USER_SORT_COLUMNS for way in ("asc", "desc"))
_FILTER_VALUES = ("", "0", "1")


def user_info(call: Call) -> dict[str, Any]:
    user_id = one_id(call.params, "user_id")
    user = call.store.user(user_id)
    if user is None:
        raise no_such("user", [user_id])
    workspaces = call.store.workspace_names(member=user.id)
    info: dict[str, Any] = {
        "id": user.id,
        "username": user.username,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "email": user.email,
        "organization": user.organization,
        "phone": user.phone,
        "phoneExt": user.phone_ext,
        "created": format_time(user.created),
        "modified": format_time(user.modified),
        "admin": flag(user.admin),
    }
    for field in _USER_INFO_PERMISSIONS:
        # "Administrators have full permissions at every location": their flags all read 1.
        info[field] = flag(user.admin or _KEY_OF_FIELD[field] in user.permissions)
    info["resetPassword"] = flag(user.reset_password)
    info["allFutureWorkspaces"] = 0
    for notification in NOTIFICATION_FLAGS:
        info[notification.field] = flag(notification.key in user.notifications)
    info["workspaces"] = Listing(
        "workspace", [{"id": ws_id, "name": name} for ws_id, name, _ in workspaces], wrap_json=True
    )
    return info


def user_list(call: Call) -> dict[str, Any]:
    params = call.params
    where: list[tuple[str, object]] = []
    for name, column in (("active", "active"), ("admin", "admin")):
        value = choice(params, name, _FILTER_VALUES, "")
        if value:
            where.append((f"{column} = ?", int(value)))
    if choice(params, "active_directory", _FILTER_VALUES, "") == "1":
        where.append(("0 = ?", 1))  # no sandbox user comes from Active Directory
    search = params.get("search", "").strip()
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append(
            (
                "(first_name || ' ' || last_name || ' ' || email || ' ' || username || ' ' || "
                "coalesce(organization, '')) LIKE ? ESCAPE '\\'",
                pattern,
            )
        )
    field, _, way = choice(params, "sort_by", SORT_CHOICES, "lastName_asc").rpartition("_")
    page = params.get("current_page", "") or "1"
    if not (page.isascii() and page.isdigit() and len(page) < 10 and int(page) >= 1):
        raise ApiError(400, f"current_page must be a page number from 1; got {page!r}.")
    users = call.store.user_page(
        where=where,
        order=USER_SORT_COLUMNS[field],
        descending=way == "desc",
        offset=(int(page) - 1) * USER_LIST_PAGE_SIZE,
        limit=USER_LIST_PAGE_SIZE,
    )
    return {"users": Listing("user", [_list_entry(user) for user in users])}


def _list_entry(user: UserRow) -> dict[str, Any]:
    return {
        "id": user.id,
        "siteId": SITE_ID,
        "username": user.username,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "email": user.email,
        "organization": user.organization,
        "phone": user.phone,
        "admin": flag(user.admin),
        "active": flag(user.active),
        "created": format_time(user.created),
        "modified": format_time(user.modified),
    }
