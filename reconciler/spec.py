"""Facts of the site API that several modules rely on, each named once.

Everything here comes from ``site-api.md`` and ``site-api-notes.md``: the limits, the
permission and notification flags with their three spellings (manifest key, API field in
responses, ``workspace_add`` parameter), and the rule that derives a workspace path.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_WORKSPACE_NAME_LENGTH = 40
"""``workspace_add``: each name in the comma list is at most 40 characters."""

USER_LIST_PAGE_SIZE = 50
"""``user_list`` returns 50 users a page; a shorter page is the last one."""

NAME_LIST_SEPARATOR = ","
"""The API splits ``name`` (and every ID list) on commas."""


@dataclass(frozen=True, slots=True)
class Flag:
    """One permission or notification flag in its three spellings."""

    key: str  # manifest key, e.g. "batch_upload_files"
    field: str  # API response field, e.g. "batchUploadFiles"
    param: str  # workspace_add parameter, e.g. "workspace_override_batch_upload_files"


def camel_case(snake: str) -> str:
    """``add_to_user_group`` → ``addToUserGroup``: how the API spells fields and answer keys."""
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def _flag(key: str) -> Flag:
    return Flag(key, camel_case(key), f"workspace_override_{key}")


PERMISSION_FLAGS: tuple[Flag, ...] = tuple(
    _flag(key)
    for key in (
        "upload_files",
        "batch_upload_files",
        "download_files",
        "batch_download_files",
        "delete_files",
        "batch_delete_files",
        "send_files",
        "send_files_non_user",
        "move_copy_files",
        "batch_move_copy_files",
        "create_folders",
        "rename_files",
    )
)
NOTIFICATION_FLAGS: tuple[Flag, ...] = tuple(
    _flag(key) for key in ("upload_notifications", "download_notifications")
)
PERMISSION_KEYS: frozenset[str] = frozenset(flag.key for flag in PERMISSION_FLAGS)
NOTIFICATION_KEYS: frozenset[str] = frozenset(flag.key for flag in NOTIFICATION_FLAGS)

OVERRIDE_PERMISSIONS_PARAM = "workspace_override_permissions"
OVERRIDE_NOTIFICATIONS_PARAM = "workspace_override_notifications"

IMPLIED_BY: dict[str, str] = {
    "batch_upload_files": "upload_files",
    "batch_download_files": "download_files",
    "batch_delete_files": "delete_files",
    "batch_move_copy_files": "move_copy_files",
    "send_files_non_user": "send_files",
}
"""A flag on the left forces the flag on the right on (``workspace_add`` rules)."""


def with_implied_flags(flags: frozenset[str]) -> frozenset[str]:
    """The permission set the site actually stores for ``flags``: batch flags force their base."""
    return flags | {IMPLIED_BY[flag] for flag in flags if flag in IMPLIED_BY}


def workspace_path(name: str) -> str:
    """The ``workspacePath`` the site derives from a workspace name."""
    return "/" + name.replace(" ", "_") + "_workspace/"
