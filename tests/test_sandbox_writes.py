"""The write methods: the reference's rules for workspace_add, deletes, groups and memberships."""

from __future__ import annotations

import pytest

from reconciler.spec import workspace_path
from tests.support.sandbox_site import error_of, sandbox_site, xml_root

pytestmark = pytest.mark.anyio


def _by_name(state: dict, kind: str = "workspaces") -> dict[str, dict]:
    return {entry["name"]: entry for entry in state[kind]}


# ---- workspace_add -----------------------------------------------------------------------


async def test_one_name_gives_an_integer_id() -> None:
    async with sandbox_site() as site:
        answer = await site.ok("workspace_add", {"name": "Team A"})
        root = xml_root(await site.call("workspace_add", {"name": "Team B"}, xml=True))
        state = await site.state()
    assert answer == {"workspaceId": 2}
    assert root.tag == "workspaceAdd" and root.findtext("workspaceId") == "3"
    team_a = _by_name(state)["Team A"]
    assert team_a["path"] == workspace_path("Team A") == "/Team_A_workspace/"
    assert team_a["root_access"] is True and team_a["override_permissions"] is False


async def test_a_comma_list_creates_several_with_the_same_settings() -> None:
    params = {
        "name": " North ,South,  East West",
        "root_access": 0,
        "workspace_users": "1001, 1002",
        "workspace_override_permissions": 1,
        "workspace_override_upload_files": 1,
        "workspace_override_notifications": 1,
        "workspace_override_download_notifications": 1,
    }
    async with sandbox_site() as site:
        answer = await site.ok("workspace_add", params)
        root = xml_root(await site.call("workspace_add", {"name": "X,Y"}, xml=True))
        state = await site.state()
    assert answer == {"workspaceId": [2, 3, 4]}
    assert root.findtext("workspaceId") == "5,6"
    workspaces = _by_name(state)
    for name in ("North", "South", "East West"):
        ws = workspaces[name]
        assert ws["path"] == workspace_path(name)
        assert (ws["root_access"], ws["members"]) == (False, [1001, 1002])
        assert (ws["permissions"], ws["notifications"]) == (
            ["upload_files"],
            ["download_notifications"],
        )


@pytest.mark.parametrize(
    ("batch", "base"),
    [
        ("batch_upload_files", "upload_files"),
        ("batch_download_files", "download_files"),
        ("batch_delete_files", "delete_files"),
        ("batch_move_copy_files", "move_copy_files"),
        ("send_files_non_user", "send_files"),
    ],
)
async def test_a_batch_flag_forces_its_base_flag_on(batch: str, base: str) -> None:
    params = {
        "name": "Batch",
        "workspace_override_permissions": 1,
        f"workspace_override_{batch}": 1,
    }
    async with sandbox_site() as site:
        await site.ok("workspace_add", params)
        state = await site.state()
    assert _by_name(state)["Batch"]["permissions"] == sorted([batch, base])


async def test_override_flags_without_their_switch_have_no_effect() -> None:
    params = {
        "name": "Loose",
        "workspace_override_rename_files": 1,
        "workspace_override_upload_notifications": 1,
    }
    async with sandbox_site() as site:
        await site.ok("workspace_add", params)
        info = await site.ok("workspace_info", {"workspace_id": 2})
        state = await site.state()
    loose = _by_name(state)["Loose"]
    assert (loose["override_permissions"], loose["permissions"], loose["notifications"]) == (
        False,
        [],
        [],
    )
    assert set(info["workspaceOverridePermissions"].values()) == {0}
    assert set(info["workspaceOverrideNotifications"].values()) == {0}


@pytest.mark.parametrize(
    ("params", "status", "fragment"),
    [
        ({}, 400, "The parameter name is required."),
        ({"name": "A" * 41}, 400, "has 41 characters; at most 40 are allowed"),
        ({"name": "Fine,,Also Fine"}, 400, "A workspace name is empty."),
        ({"name": "Fine, "}, 400, "A workspace name is empty."),
        ({"name": "Legacy Scans"}, 400, "A workspace named 'Legacy Scans' already exists."),
        (
            {"name": "Legacy_Scans"},
            400,
            "gives the path /Legacy_Scans_workspace/, which the workspace 'Legacy Scans' "
            "already has",
        ),
        ({"name": "Twice,Twice"}, 400, "A workspace named 'Twice' already exists."),
        (
            {"name": "P", "workspace_override_permissions": 1},
            400,
            "at least one workspace_override_* permission flag must be 1",
        ),
        (
            {
                "name": "P",
                "workspace_override_permissions": 1,
                "workspace_override_upload_notifications": 1,
            },
            400,
            "at least one",
        ),
        ({"name": "P", "root_access": 2}, 400, "root_access must be 0 or 1; got '2'."),
        (
            {"name": "P", "workspace_override_create_folders": "yes"},
            400,
            "workspace_override_create_folders must be 0 or 1",
        ),
        (
            {"name": "P", "workspace_users": "1001,abc"},
            400,
            "workspace_users must be a comma-separated list of IDs",
        ),
        (
            {"name": "P", "workspace_users": "1001,5555,6666"},
            404,
            "There is no user with the IDs 5555, 6666.",
        ),
    ],
)
async def test_workspace_add_refusals_create_nothing(params, status, fragment) -> None:
    async with sandbox_site() as site:
        response = await site.call("workspace_add", params)
        state = await site.state()
    assert response.status_code == status
    title, message = error_of(response)
    assert title == "Workspace Add Failed" and fragment in message
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans"]


async def test_a_name_of_exactly_40_characters_is_accepted() -> None:
    async with sandbox_site() as site:
        assert await site.ok("workspace_add", {"name": "N" * 40}) == {"workspaceId": 2}


async def test_one_invalid_name_among_several_creates_nothing_by_default() -> None:
    async with sandbox_site() as site:
        response = await site.call("workspace_add", {"name": "Good One," + "B" * 41 + ",Good Two"})
        state = await site.state()
    assert response.status_code == 400
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans"]


# ---- workspace_delete --------------------------------------------------------------------


async def test_workspace_delete_removes_the_workspace_and_its_memberships() -> None:
    async with sandbox_site() as site:
        answer = await site.ok("workspace_delete", {"workspace_id": 1})
        oscar = await site.ok("user_info", {"user_id": 1042})
        again = await site.call("workspace_delete", {"workspace_id": 1})
        new = await site.ok("workspace_add", {"name": "Legacy Scans"})
    assert answer == {"workspaceId": 1}
    assert oscar["workspaces"] == []
    assert again.status_code == 404
    assert error_of(again) == ("Workspace Delete Failed", "There is no workspace with ID 1.")
    assert new == {"workspaceId": 2}  # the name is free again; the ID is never reused


async def test_workspace_delete_xml_and_parameter_errors() -> None:
    async with sandbox_site() as site:
        root = xml_root(await site.call("workspace_delete", {"workspace_id": 1}, xml=True))
        missing = await site.call("workspace_delete", {})
    assert root.tag == "workspaceDelete" and root.findtext("workspaceId") == "1"
    assert missing.status_code == 400
    assert error_of(missing) == (
        "Workspace Delete Failed",
        "The parameter workspace_id is required.",
    )


# ---- user groups -------------------------------------------------------------------------


async def test_user_group_add_answers_id_and_comma_members() -> None:
    async with sandbox_site() as site:
        answer = await site.ok(
            "user_group_add", {"name": " Crew ", "group_users": "1001, 1003,1001"}
        )
        empty = xml_root(await site.call("user_group_add", {"name": "Nobody"}, xml=True))
        state = await site.state()
    assert answer == {"userGroupId": 2, "userGroupMembers": "1001,1003"}
    assert empty.tag == "userGroupAdd" and empty.findtext("userGroupId") == "3"
    assert empty.find("userGroupMembers") is not None and empty.findtext("userGroupMembers") == ""
    assert _by_name(state, "groups")["Crew"] == {"id": 2, "name": "Crew", "members": [1001, 1003]}


async def test_duplicate_group_names_are_allowed() -> None:
    async with sandbox_site() as site:
        first = await site.ok("user_group_add", {"name": "old-contractors"})
        state = await site.state()
    assert first["userGroupId"] == 2
    assert [group["name"] for group in state["groups"]] == ["old-contractors", "old-contractors"]


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "The parameter name is required."),
        ({"name": "   "}, 400, "The parameter name is required."),
        ({"name": "G", "group_users": "1001,4242"}, 404, "There is no user with ID 4242."),
    ],
)
async def test_user_group_add_refusals(params, status, message) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_group_add", params)
        state = await site.state()
    assert response.status_code == status
    assert error_of(response) == ("User Group Add Failed", message)
    assert len(state["groups"]) == 1


async def test_user_group_delete_removes_group_and_memberships() -> None:
    async with sandbox_site() as site:
        answer = await site.ok("user_group_delete", {"user_group_id": 1})
        root_entries = await site.ok("users_location_access", {"path": "/"})
        again = await site.call("user_group_delete.xml", {"user_group_id": 1})
        state = await site.state()
    assert answer == {"userGroupId": 1}
    assert state["groups"] == [] and all(entry["uType"] == 1 for entry in root_entries)
    assert again.status_code == 404
    assert error_of(again) == ("User Group Delete Failed", "There is no user group with ID 1.")


@pytest.mark.parametrize("xml", [False, True], ids=["json", "xml"])
async def test_user_group_delete_accepts_the_delete_verb(xml: bool) -> None:
    async with sandbox_site() as site:
        response = await site.delete(
            "user_group_delete" + (".xml" if xml else ""), {"user_group_id": 1}
        )
        again = await site.delete("user_group_delete", {"user_group_id": 1})
        state = await site.state()
    assert response.status_code == 200, response.text
    if xml:
        assert xml_root(response).findtext("userGroupId") == "1"
    else:
        assert response.json() == {"userGroupDeleted": {"userGroupId": 1}}
    assert again.status_code == 404 and error_of(again)[0] == "User Group Delete Failed"
    assert state["groups"] == []


async def test_add_to_user_group_is_idempotent_and_answers_the_ids() -> None:
    async with sandbox_site() as site:
        await site.ok("user_group_add", {"name": "Second"})
        answer = await site.ok("add_to_user_group", {"user_id": 1011, "user_group_ids": "1,2"})
        root = xml_root(
            await site.call("add_to_user_group", {"user_id": 1011, "user_group_ids": "2"}, xml=True)
        )
        state = await site.state()
    assert answer == {"userId": 1011, "userGroupIds": "1,2"}
    assert root.tag == "addToUserGroup" and root.findtext("userGroupIds") == "2"
    assert [group["members"] for group in state["groups"]] == [[1011], [1011]]


async def test_add_to_user_group_with_an_unknown_group_changes_nothing() -> None:
    async with sandbox_site() as site:
        response = await site.call("add_to_user_group", {"user_id": 1001, "user_group_ids": "1,77"})
        unknown_user = await site.call(
            "add_to_user_group", {"user_id": 4242, "user_group_ids": "1"}
        )
        state = await site.state()
    assert response.status_code == unknown_user.status_code == 404
    assert error_of(response) == (
        "Add User to User Group Failed",
        "There is no user group with ID 77.",
    )
    assert error_of(unknown_user)[1] == "There is no user with ID 4242."
    assert state["groups"][0]["members"] == [1011]


async def test_remove_from_user_group_for_a_non_member_succeeds_without_change() -> None:
    async with sandbox_site() as site:
        removed = await site.ok("remove_from_user_group", {"user_id": 1011, "user_group_ids": "1"})
        not_member = await site.ok(
            "remove_from_user_group", {"user_id": 1001, "user_group_ids": "1"}
        )
        missing = await site.call("remove_from_user_group", {"user_id": 1001})
        state = await site.state()
    assert removed == {"userId": 1011, "userGroupIds": "1"}
    assert not_member == {"userId": 1001, "userGroupIds": "1"}
    assert state["groups"][0]["members"] == []
    assert error_of(missing) == (
        "Remove User from User Group Failed",
        "The parameter user_group_ids is required.",
    )


# ---- workspace memberships ---------------------------------------------------------------


async def test_add_and_remove_from_workspace() -> None:
    async with sandbox_site() as site:
        await site.ok("workspace_add", {"name": "Second"})
        added = await site.ok("add_to_workspace", {"user_id": 1001, "user_workspace_ids": "1,2"})
        again = await site.ok("add_to_workspace", {"user_id": 1001, "user_workspace_ids": "1"})
        removed = xml_root(
            await site.call(
                "remove_from_workspace", {"user_id": 1042, "user_workspace_ids": "1"}, xml=True
            )
        )
        not_member = await site.ok(
            "remove_from_workspace", {"user_id": 1042, "user_workspace_ids": "2"}
        )
        state = await site.state()
    assert added == {"userId": 1001, "userWorkspaceIds": "1,2"}
    assert again == {"userId": 1001, "userWorkspaceIds": "1"}
    assert removed.tag == "removeFromWorkspace" and removed.findtext("userWorkspaceIds") == "1"
    assert not_member == {"userId": 1042, "userWorkspaceIds": "2"}
    assert [ws["members"] for ws in state["workspaces"]] == [[1001, 1019], [1001]]


@pytest.mark.parametrize(
    ("method", "params", "status", "message"),
    [
        (
            "add_to_workspace",
            {"user_id": 1001, "user_workspace_ids": "1,,2"},
            400,
            "user_workspace_ids must be a comma-separated list of IDs (whole numbers); got '1,,2'.",
        ),
        (
            "add_to_workspace",
            {"user_id": 1001, "user_workspace_ids": "1,9"},
            404,
            "There is no workspace with ID 9.",
        ),
        (
            "add_to_workspace",
            {"user_workspace_ids": "1"},
            400,
            "The parameter user_id is required.",
        ),
        (
            "remove_from_workspace",
            {"user_id": 9, "user_workspace_ids": "1"},
            404,
            "There is no user with ID 9.",
        ),
    ],
)
async def test_workspace_membership_refusals_change_nothing(
    method, params, status, message
) -> None:
    title = (
        "Add User to Workspace Failed"
        if method == "add_to_workspace"
        else "Remove User from Workspace Failed"
    )
    async with sandbox_site() as site:
        response = await site.call(method, params)
        state = await site.state()
    assert response.status_code == status
    assert error_of(response) == (title, message)
    assert state["workspaces"][0]["members"] == [1019, 1042]
