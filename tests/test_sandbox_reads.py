"""user_info, user_list, workspace_list, workspace_info: exact shapes, filters and errors."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.sandbox.codec import format_time
from reconciler.spec import workspace_path
from tests.support.sandbox_site import (
    PERMISSION_FIELDS,
    error_of,
    sandbox_site,
    seed_with,
    xml_root,
)

pytestmark = pytest.mark.anyio

SITE_TIME = re.compile(r"\d\d/\d\d/\d\d at \d\d:\d\d (am|pm) UTC")
USER_INFO_FIELDS = [
    "id", "username", "firstName", "lastName", "email", "organization", "phone", "phoneExt",
    "created", "modified", "admin", "uploadFiles", "batchUploadFiles", "sendFiles",
    "sendFilesNonUser", "downloadFiles", "batchDownloadFiles", "moveCopyFiles",
    "batchMoveCopyFiles", "renameFiles", "deleteFiles", "batchDeleteFiles", "createFolders",
    "resetPassword", "allFutureWorkspaces", "uploadNotifications", "downloadNotifications",
    "workspaces",
]  # fmt: skip
INFO_PERMISSION_FIELDS = [
    "uploadFiles", "batchUploadFiles", "sendFiles", "sendFilesNonUser", "downloadFiles",
    "batchDownloadFiles", "moveCopyFiles", "batchMoveCopyFiles", "renameFiles", "deleteFiles",
    "batchDeleteFiles", "createFolders",
]  # fmt: skip


# ---- user_info ---------------------------------------------------------------------------


async def test_user_info_json_has_every_documented_field_in_order() -> None:
    async with sandbox_site() as site:
        info = await site.ok("user_info", {"user_id": 1042})
    assert list(info) == USER_INFO_FIELDS
    assert (info["id"], info["username"], info["email"]) == (1042, "oscar", "oscar@acme.example")
    assert (info["firstName"], info["lastName"], info["admin"]) == ("Oscar", "Olsen", 0)
    assert info["phoneExt"] is None and info["organization"] is None
    assert SITE_TIME.fullmatch(info["created"]) and SITE_TIME.fullmatch(info["modified"])
    assert info["workspaces"] == [{"workspace": {"id": 1, "name": "Legacy Scans"}}]
    # default base flags: upload and download on, everything else off
    assert [field for field in PERMISSION_FIELDS if info[field]] == ["uploadFiles", "downloadFiles"]
    assert info["uploadNotifications"] == info["downloadNotifications"] == 0


async def test_user_info_xml_nests_workspaces_and_writes_null_as_text() -> None:
    async with sandbox_site() as site:
        root = xml_root(await site.call("user_info", {"user_id": 1042}, xml=True))
        lonely = xml_root(await site.call("user_info", {"user_id": 1001}, xml=True))
    assert root.tag == "userInfo"
    assert [child.tag for child in root] == USER_INFO_FIELDS
    assert [
        (ws.findtext("id"), ws.findtext("name")) for ws in root.iterfind("workspaces/workspace")
    ] == [("1", "Legacy Scans")]
    assert root.findtext("phoneExt") == "null"
    assert lonely.find("workspaces") is not None and len(lonely.find("workspaces")) == 0


async def test_user_info_shows_seeded_base_flags_and_phone() -> None:
    seed = seed_with(users=[{
        "username": "pat", "email": "pat@acme.example", "organization": "Acme",
        "phone": "5550100", "phone_ext": "12",
        "permissions": {"batch_download_files": True, "download_files": True, "rename_files": True},
        "notifications": {"upload_notifications": True},
    }])  # fmt: skip
    async with sandbox_site(seed) as site:
        info = await site.ok("user_info", {"user_id": 1043})
    assert [f for f in PERMISSION_FIELDS if info[f]] == [
        "downloadFiles",
        "batchDownloadFiles",
        "renameFiles",
    ]
    assert (info["uploadNotifications"], info["downloadNotifications"], info["organization"]) == (
        1,
        0,
        "Acme",
    )
    assert (info["phone"], info["phoneExt"], info["resetPassword"]) == ("5550100", "12", 0)


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "The parameter user_id is required."),
        ({"user_id": "abc"}, 400, "user_id must be an ID (a whole number above 0); got 'abc'."),
        ({"user_id": "0"}, 400, "user_id must be an ID (a whole number above 0); got '0'."),
        ({"user_id": 99999}, 404, "There is no user with ID 99999."),
    ],
)
async def test_user_info_parameter_errors(params, status, message) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_info", params)
    assert response.status_code == status
    assert error_of(response) == ("User Info Failed", message)


# ---- user_list ---------------------------------------------------------------------------


def _many_users(count: int) -> dict:
    users = [{"id": 1, "username": "admin", "email": "admin@acme.example", "admin": True,
              "api_key": "sandbox-admin-key", "api_secret": "sandbox-admin-secret"}]  # fmt: skip
    users += [
        {"username": f"user{n:03}", "email": f"u{n:03}@acme.example", "first_name": f"F{n % 7}",
         "last_name": f"L{n:03}", "active": n % 10 != 0}
        for n in range(1, count)
    ]  # fmt: skip
    return {"users": users}


async def test_user_list_pages_hold_50_users() -> None:
    async with sandbox_site(_many_users(120)) as site:
        pages = [
            (await site.ok("user_list", {"current_page": page}))["users"] for page in (1, 2, 3, 4)
        ]
    assert [len(page) for page in pages] == [50, 50, 20, 0]
    ids = [user["id"] for page in pages for user in page]
    assert sorted(ids) == list(range(1, 121))


async def test_user_list_sorts_by_last_name_by_default_and_as_asked() -> None:
    async with sandbox_site() as site:
        default = (await site.ok("user_list"))["users"]
        by_email_desc = (await site.ok("user_list", {"sort_by": "email_desc"}))["users"]
    last_names = [user["lastName"] for user in default]
    assert last_names == sorted(last_names, key=str.lower)
    emails = [user["email"] for user in by_email_desc]
    assert emails == sorted(emails, reverse=True)


async def test_user_list_filters_and_search() -> None:
    seed = seed_with(
        users=[
            {
                "username": "zed",
                "email": "z@other.example",
                "organization": "Globex",
                "active": False,
            }
        ]
    )
    async with sandbox_site(seed) as site:
        admins = (await site.ok("user_list", {"admin": 1}))["users"]
        inactive = (await site.ok("user_list", {"active": 0}))["users"]
        by_org = (await site.ok("user_list", {"search": "glob"}))["users"]
        by_name = (await site.ok("user_list", {"search": "Archer"}))["users"]
        ad_only = (await site.ok("user_list", {"active_directory": 1}))["users"]
    assert [user["username"] for user in admins] == ["admin"]
    assert [user["username"] for user in inactive] == ["zed"]
    assert [user["username"] for user in by_org] == ["zed"]
    assert [user["username"] for user in by_name] == ["alice"]
    assert ad_only == []


async def test_user_list_entry_fields_json_and_xml() -> None:
    async with sandbox_site() as site:
        users = (await site.ok("user_list", {"search": "oscar"}))["users"]
        root = xml_root(await site.call("user_list", {"search": "oscar"}, xml=True))
    assert users == [{
        "id": 1042, "siteId": 1, "username": "oscar", "firstName": "Oscar", "lastName": "Olsen",
        "email": "oscar@acme.example", "organization": None, "phone": "", "admin": 0, "active": 1,
        "created": users[0]["created"], "modified": users[0]["modified"],
    }]  # fmt: skip
    assert root.tag == "userList"
    assert [user.findtext("username") for user in root.iterfind("users/user")] == ["oscar"]


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"sort_by": "age_asc"}, "sort_by must be one of"),
        ({"current_page": "0"}, "current_page must be a page number"),
        ({"current_page": "two"}, "current_page must be a page number"),
        ({"admin": "yes"}, "admin must be one of"),
    ],
)
async def test_user_list_parameter_errors(params, fragment) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_list", params)
    assert response.status_code == 400
    title, message = error_of(response)
    assert title == "User List Failed" and fragment in message


# ---- workspace_list / workspace_info -----------------------------------------------------


async def test_workspace_list_json_and_xml() -> None:
    seed = seed_with(workspaces=[{"name": "Team A"}])
    async with sandbox_site(seed) as site:
        answer = await site.ok("workspace_list")
        root = xml_root(await site.call("workspace_list", xml=True))
    assert answer == {
        "workspaces": [
            {
                "id": 1,
                "workspaceName": "Legacy Scans",
                "workspacePath": "/Legacy_Scans_workspace/",
                "listed": 1,
            },
            {
                "id": 2,
                "workspaceName": "Team A",
                "workspacePath": workspace_path("Team A"),
                "listed": 1,
            },
        ],
        "totalWorkspaces": 2,
    }
    assert [child.tag for child in root] == ["workspaces", "totalWorkspaces"]
    assert [ws.findtext("workspacePath") for ws in root.iterfind("workspaces/workspace")] == [
        "/Legacy_Scans_workspace/", "/Team_A_workspace/",
    ]  # fmt: skip
    assert root.findtext("totalWorkspaces") == "2"


async def test_workspace_info_json_shape_without_an_override() -> None:
    async with sandbox_site() as site:
        info = await site.ok("workspace_info", {"workspace_id": 1})
    assert list(info) == [
        "id", "name", "path", "created", "modified", "users",
        "workspaceOverridePermissions", "workspaceOverrideNotifications",
    ]  # fmt: skip
    assert (info["id"], info["name"], info["path"]) == (
        1,
        "Legacy Scans",
        "/Legacy_Scans_workspace/",
    )
    assert info["users"][0] == {"user": {
        "id": 1019, "firstName": "Walter", "lastName": "Wu", "email": "walter@acme.example",
        "username": "walter", "subadmin": 0,
    }}  # fmt: skip
    assert list(info["workspaceOverridePermissions"]) == INFO_PERMISSION_FIELDS
    assert set(info["workspaceOverridePermissions"].values()) == {0}
    assert info["workspaceOverrideNotifications"] == {
        "uploadNotifications": 0,
        "downloadNotifications": 0,
    }


async def test_workspace_info_with_overrides_json_and_xml() -> None:
    seed = seed_with(workspaces=[{
        "name": "Strict", "root_access": False, "users": [1001],
        "permissions": {"send_files_non_user": True, "create_folders": True},
        "notifications": {"download_notifications": True},
    }])  # fmt: skip
    async with sandbox_site(seed) as site:
        info = await site.ok("workspace_info", {"workspace_id": 2})
        root = xml_root(await site.call("workspace_info", {"workspace_id": 2}, xml=True))
    flags = info["workspaceOverridePermissions"]
    assert [field for field in INFO_PERMISSION_FIELDS if flags[field]] == [
        "sendFiles",
        "sendFilesNonUser",
        "createFolders",
    ]
    assert info["workspaceOverrideNotifications"] == {
        "uploadNotifications": 0,
        "downloadNotifications": 1,
    }
    assert root.tag == "workspaceInfo"
    assert [user.findtext("username") for user in root.iterfind("users/user")] == ["alice"]
    assert root.findtext("users/user/subadmin") == "0"  # 0/1 as in the published sample
    assert root.findtext("workspaceOverridePermissions/sendFiles") == "1"
    assert root.find("rootAccess") is None and root.find("root_access") is None


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "The parameter workspace_id is required."),
        (
            {"workspace_id": "1,2"},
            400,
            "workspace_id must be an ID (a whole number above 0); got '1,2'.",
        ),
        ({"workspace_id": 999}, 404, "There is no workspace with ID 999."),
    ],
)
async def test_workspace_info_parameter_errors(params, status, message) -> None:
    async with sandbox_site() as site:
        response = await site.call("workspace_info", params)
    assert response.status_code == status
    assert error_of(response) == ("Workspace Info Failed", message)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(2**31), max_value=2**33))
def test_times_are_written_as_the_site_writes_them_to_the_minute(timestamp: int) -> None:
    """``created``/``modified`` text is cached by the minute (a ``user_list`` page writes 100):
    every second of the minute reads as the clock of that second would."""
    moment = time.gmtime(timestamp)
    hour = moment.tm_hour % 12 or 12
    expected = (
        f"{moment.tm_mon:02}/{moment.tm_mday:02}/{moment.tm_year % 100:02} at "
        f"{hour:02}:{moment.tm_min:02} {'am' if moment.tm_hour < 12 else 'pm'} UTC"
    )
    assert format_time(timestamp) == expected
    assert SITE_TIME.fullmatch(expected)
