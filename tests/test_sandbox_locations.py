"""users_location_access and user_permissions_location: who reaches a path, with which flags."""

from __future__ import annotations

import pytest

from reconciler.spec import workspace_path
from tests.support.sandbox_site import (
    PERMISSION_FIELDS,
    VIEWER,
    error_of,
    sandbox_site,
    seed_with,
    xml_root,
)

pytestmark = pytest.mark.anyio

LOCATION_FIELDS = [
    "id", "username", "email", "firstName", "lastName", "organization", "subAdmin", "admin",
    "uType", "autoRecip",
]  # fmt: skip


# ---- users_location_access ---------------------------------------------------------------


async def test_location_access_at_the_root_lists_every_user_and_group() -> None:
    async with sandbox_site() as site:
        entries = await site.ok("users_location_access", {"path": "/"})
    users = [entry for entry in entries if entry["uType"] == 1]
    groups = [entry for entry in entries if entry["uType"] == 0]
    assert len(users) == 22 and all(list(entry) == LOCATION_FIELDS for entry in entries)
    assert groups == [{
        "id": 1, "username": "old-contractors", "email": None, "firstName": "", "lastName": "",
        "organization": None, "subAdmin": None, "admin": 0, "uType": 0, "autoRecip": 0,
    }]  # fmt: skip
    assert {k: users[0][k] for k in ("id", "admin")} == {"id": 1, "admin": 1}


async def test_location_access_xml_has_one_user_element_per_entry() -> None:
    async with sandbox_site() as site:
        root = xml_root(await site.call("users_location_access", {"path": "/"}, xml=True))
    assert root.tag == "usersLocationAccess"
    assert {child.tag for child in root} == {"user"} and len(root) == 23
    group = root[-1]
    assert (group.findtext("username"), group.findtext("uType")) == ("old-contractors", "0")


async def test_location_access_xml_nulls_are_empty_elements_as_published() -> None:
    """The published usersLocationAccess samples print nulls as <organization/>, <subAdmin/>;
    user_info keeps the text null (<phoneExt>null</phoneExt>), as its sample does."""
    async with sandbox_site() as site:
        response = await site.call("users_location_access", {"path": "/"}, xml=True)
        info = await site.call("user_info", {"user_id": 1001}, xml=True)
    user, group = xml_root(response)[0], xml_root(response)[-1]
    assert b">null<" not in response.content
    for entry, empty in ((user, ["organization", "subAdmin"]), (group, ["email", "organization"])):
        for tag in empty:
            element = entry.find(tag)
            assert element is not None and element.text is None and len(element) == 0, tag
    assert b"<organization/><subAdmin/>" in response.content
    assert b"<phoneExt>null</phoneExt>" in info.content


async def test_location_access_at_a_workspace_lists_its_members() -> None:
    path = workspace_path("Legacy Scans")
    async with sandbox_site() as site:
        entries = await site.ok("users_location_access", {"path": path})
        deeper = await site.ok("users_location_access", {"path": path + "2024/"})
    assert [entry["username"] for entry in entries] == ["walter", "oscar"]
    assert deeper == entries


async def test_location_access_empty_workspace_is_an_empty_list_and_element() -> None:
    seed = seed_with(workspaces=[{"name": "Empty Room"}])
    async with sandbox_site(seed) as site:
        entries = await site.ok("users_location_access", {"path": "/Empty_Room_workspace/"})
        root = xml_root(
            await site.call("users_location_access", {"path": "/Empty_Room_workspace/"}, xml=True)
        )
    assert entries == []
    assert root.tag == "usersLocationAccess" and len(root) == 0 and not (root.text or "").strip()


async def test_location_access_for_a_member_and_for_others() -> None:
    seed = seed_with(workspaces=[{"name": "Viewing Room", "users": ["viewer", "alice"]}])
    async with sandbox_site(seed) as site:
        member = await site.call(
            "users_location_access", {"path": "/Viewing_Room_workspace/"}, who=VIEWER
        )
        outsider = await site.call(
            "users_location_access", {"path": workspace_path("Legacy Scans")}, who=VIEWER
        )
        unknown = await site.call("users_location_access", {"path": "/Nowhere_workspace/"})
    assert member.status_code == 200
    assert [entry["username"] for entry in member.json()["usersLocationAccess"]] == [
        "viewer",
        "alice",
    ]
    for refused in (outsider, unknown):
        assert refused.status_code == 403
        assert error_of(refused) == (
            "You do not have access privileges for this location",
            "Please try a different location or speak to an administrator",
        )


async def test_location_access_non_admins_only() -> None:
    async with sandbox_site() as site:
        entries = await site.ok("users_location_access", {"path": "/", "type": "nonAdminsOnly"})
    assert all(entry["admin"] == 0 for entry in entries)
    assert "admin" not in [entry["username"] for entry in entries]
    assert len(entries) == 22  # 21 non-admin users and the group


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"path": "Legacy_Scans_workspace/"},
            "path must begin and end with '/'; got 'Legacy_Scans_workspace/'.",
        ),
        (
            {"path": "/Legacy_Scans_workspace"},
            "path must begin and end with '/'; got '/Legacy_Scans_workspace'.",
        ),
        ({}, "The parameter path is required."),
        ({"path": "/", "type": "admins"}, "type must be one of all, nonAdminsOnly; got 'admins'."),
    ],
)
async def test_location_access_parameter_errors(params, message) -> None:
    async with sandbox_site() as site:
        response = await site.call("users_location_access", params)
    assert response.status_code == 400
    assert error_of(response) == ("Users Location Access Failed", message)


# ---- user_permissions_location -----------------------------------------------------------


async def test_permissions_of_an_administrator_are_all_null() -> None:
    async with sandbox_site() as site:
        answer = await site.ok("user_permissions_location", {"path": "/"})
        root = xml_root(await site.call("user_permissions_location", {"path": "/"}, xml=True))
    assert list(answer) == ["admin", *PERMISSION_FIELDS, "userId"]
    assert answer["userId"] == 1 and all(
        answer[field] is None for field in ["admin", *PERMISSION_FIELDS]
    )
    assert root.findtext("uploadFiles") == "null" and root.findtext("userId") == "1"


async def test_permissions_of_a_non_admin_come_from_the_workspace_override() -> None:
    seed = seed_with(workspaces=[
        {"name": "Locked", "users": ["viewer"], "permissions": {"batch_delete_files": True}},
        {"name": "Plain", "users": ["viewer"]},
    ])  # fmt: skip
    async with sandbox_site(seed) as site:
        base = await site.ok("user_permissions_location", {"path": "/"}, who=VIEWER)
        locked = await site.ok(
            "user_permissions_location", {"path": "/Locked_workspace/a/b.txt"}, who=VIEWER
        )
        plain = await site.ok(
            "user_permissions_location", {"path": "/Plain_workspace/"}, who=VIEWER
        )
    on = lambda answer: [field for field in PERMISSION_FIELDS if answer[field]]  # noqa: E731
    assert base["admin"] == 0 and base["userId"] == 2
    assert on(base) == on(plain) == ["uploadFiles", "downloadFiles"]
    assert on(locked) == ["deleteFiles", "batchDeleteFiles"]  # the batch flag forces its base on


async def test_permissions_need_a_path() -> None:
    async with sandbox_site() as site:
        missing = await site.call("user_permissions_location", {})
        relative = await site.call("user_permissions_location", {"path": "x/"})
    assert missing.status_code == relative.status_code == 400
    assert error_of(missing) == (
        "User Permissions Location Failed",
        "The parameter path is required.",
    )
    assert error_of(relative)[1] == "path must begin with '/'; got 'x/'."
