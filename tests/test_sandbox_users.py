"""user_add and user_delete: the published parameters and rules, the sandbox's answers and
refusals, the DELETE verb, and a password that never comes back out."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from reconciler.api.answers import NewUser
from tests.support.sandbox_site import ADMIN_ID, VIEWER, error_of, sandbox_site, xml_root

pytestmark = pytest.mark.anyio

NEW_USER = {
    "first_name": "Nia",
    "last_name": "Newton",
    "email": "nia@acme.example",
    "user_name": "nia.newton",
}
NEXT_ID = 1043  # the example seed's highest user ID is 1042
PASSWORD = "Hunter2-Correct-Horse-Battery"


def _ids(state: dict) -> list[int]:
    return [user["id"] for user in state["users"]]


# ---- user_add ----------------------------------------------------------------------------


async def test_user_add_creates_a_user_seen_like_a_seeded_one() -> None:
    params = {
        **NEW_USER, "password": PASSWORD, "organization": "Acme Labs", "phone": "5551234",
        "phone_ext": "42",
    }  # fmt: skip
    async with sandbox_site() as site:
        answer = await site.ok("user_add", params)
        info = await site.ok("user_info", {"user_id": NEXT_ID})
        listed = await site.ok("user_list", {"search": "newton"})
        root_entries = await site.ok("users_location_access", {"path": "/"})
        state = await site.state()
    assert answer == {"userId": NEXT_ID}
    assert {key: info[key] for key in (
        "id", "username", "firstName", "lastName", "email", "organization", "phone", "phoneExt",
        "admin", "resetPassword", "uploadFiles", "downloadFiles", "deleteFiles",
    )} == {
        "id": NEXT_ID, "username": "nia.newton", "firstName": "Nia", "lastName": "Newton",
        "email": "nia@acme.example", "organization": "Acme Labs", "phone": "5551234",
        "phoneExt": "42", "admin": 0, "resetPassword": 0, "uploadFiles": 1, "downloadFiles": 1,
        "deleteFiles": 0,
    }  # fmt: skip
    assert info["workspaces"] == []
    assert [(user["id"], user["active"], user["admin"]) for user in listed["users"]] == [
        (NEXT_ID, 1, 0)
    ]
    assert [entry for entry in root_entries if entry["id"] == NEXT_ID] == [{
        "id": NEXT_ID, "username": "nia.newton", "email": "nia@acme.example", "firstName": "Nia",
        "lastName": "Newton", "organization": "Acme Labs", "subAdmin": None, "admin": 0,
        "uType": 1, "autoRecip": 0,
    }]  # fmt: skip
    assert state["users"][-1] == {
        "id": NEXT_ID, "username": "nia.newton", "email": "nia@acme.example",
        "first_name": "Nia", "last_name": "Newton", "admin": False, "active": True,
        "permissions": ["download_files", "upload_files"], "notifications": [],
    }  # fmt: skip


async def test_user_add_xml_answer_and_defaults_without_optional_fields() -> None:
    async with sandbox_site() as site:
        root = xml_root(await site.call("user_add", NEW_USER, xml=True))
        info = await site.ok("user_info", {"user_id": NEXT_ID})
    assert root.tag == "userAdd" and [child.tag for child in root] == ["userId"]
    assert root.findtext("userId") == str(NEXT_ID)
    assert (info["organization"], info["phone"], info["phoneExt"], info["admin"]) == (
        None, "", None, 0,
    )  # fmt: skip
    assert info["resetPassword"] == 1  # no password: the site set a temporary one


async def test_user_add_active_0_and_admin_1() -> None:
    async with sandbox_site() as site:
        await site.ok("user_add", {**NEW_USER, "active": 0, "admin": 1})
        inactive = await site.ok("user_list", {"active": "0"})
        admins = await site.ok("users_location_access", {"path": "/"})
    assert [user["id"] for user in inactive["users"]] == [NEXT_ID]
    assert {entry["id"] for entry in admins if entry["admin"] == 1} == {ADMIN_ID, NEXT_ID}


async def test_usernames_may_hold_letters_digits_and_the_four_signs() -> None:
    async with sandbox_site() as site:
        answer = await site.ok("user_add", {**NEW_USER, "user_name": "N1a.b-c_d@e"})
    assert answer == {"userId": NEXT_ID}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"first_name": None}, "The parameter first_name is required."),
        ({"last_name": "   "}, "The parameter last_name is required."),
        ({"email": None}, "The parameter email is required."),
        ({"user_name": ""}, "The parameter user_name is required."),
        (
            {"user_name": "nia newton"},
            "user_name may contain only letters (A-Z, a-z), digits, '-', '_', '.' and '@'; "
            "got 'nia newton'.",
        ),
        ({"user_name": "niña"}, "user_name may contain only letters"),
        ({"user_name": "nia/newton"}, "user_name may contain only letters"),
        ({"email": "nia.acme.example"}, "email must be an e-mail address (name@domain)"),
        ({"email": "nia @acme.example"}, "email must be an e-mail address (name@domain)"),
        ({"phone": "555-1234"}, "phone may contain only digits (0-9); got '555-1234'."),
        ({"phone_ext": "12a"}, "phone_ext may contain only digits (0-9); got '12a'."),
        ({"phone": "\uff15\uff15\uff15"}, "phone may contain only digits (0-9)"),
        ({"active": "2"}, "active must be 0 or 1; got '2'."),
        ({"admin": "yes"}, "admin must be 0 or 1; got 'yes'."),
        ({"first_name": "Ni\x07a"}, "first_name must not contain control characters."),
        ({"organization": "Acme\x00"}, "organization must not contain control characters."),
        (
            {"user_name": "ALICE"},
            "The username 'ALICE' is already taken by user 1001 ('alice'); usernames are "
            "compared regardless of case.",
        ),
        (
            {"email": "Alice@ACME.example"},
            "The e-mail address 'Alice@ACME.example' is already used by user 1001 ('alice').",
        ),
    ],
)
async def test_user_add_refusals_create_nothing(change: dict, message: str) -> None:
    params = {key: value for key, value in {**NEW_USER, **change}.items() if value is not None}
    async with sandbox_site() as site:
        response = await site.call("user_add", params)
        state = await site.state()
    assert response.status_code == 400
    title, said = error_of(response)
    assert title == "User Add Failed" and said.startswith(message)
    assert len(state["users"]) == 22


async def test_a_non_administrator_cannot_add_a_user() -> None:
    async with sandbox_site() as site:
        response = await site.call("user_add", NEW_USER, who=VIEWER, xml=True)
        state = await site.state()
    assert response.status_code == 403
    assert error_of(response) == (
        "User Add Failed",
        "You must be an administrator to call this method",
    )
    assert len(state["users"]) == 22


async def test_the_password_never_comes_back_out(tmp_path: Path) -> None:
    db = tmp_path / "site.sqlite"
    async with sandbox_site(db_path=str(db)) as site:
        answers = [
            await site.call("user_add", {**NEW_USER, "password": PASSWORD}),
            await site.call("user_add", {**NEW_USER, "password": PASSWORD}, xml=True),  # refused
            await site.call("user_info", {"user_id": NEXT_ID}),
            await site.call("user_info", {"user_id": NEXT_ID}, xml=True),
            await site.call("user_list", {"search": "nia"}),
            await site.call("users_location_access", {"path": "/"}, xml=True),
            await site.client.get("/_sandbox/state"),
        ]
    with closing(sqlite3.connect(db)) as conn:
        database = "\n".join(conn.iterdump())
    assert answers[0].status_code == 200 and answers[1].status_code == 400
    for response in answers:
        assert PASSWORD not in response.text
    assert PASSWORD not in database  # not stored at all, not even hashed


@pytest.mark.parametrize("weak", ["Sh0rt!", "alllowercaseletters", "lowerUPPERonly", "12345678901"])
async def test_a_weak_password_is_refused_by_the_policy_without_being_echoed(weak: str) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_add", {**NEW_USER, "password": weak})
        state = await site.state()
    assert response.status_code == 400
    title, message = error_of(response)
    assert title == "User Add Failed"
    assert message == (
        "The password does not meet the site's password policy: at least 8 characters, using "
        "at least 3 of lower-case letters, upper-case letters, digits and other characters."
    )
    assert weak not in response.text
    assert len(state["users"]) == 22


async def test_the_password_policy_is_a_switch() -> None:
    async with sandbox_site(password_min_length=4, password_classes=1) as site:
        assert (await site.call("user_add", {**NEW_USER, "password": "abcd"})).status_code == 200
    async with sandbox_site(password_min_length=0, password_classes=0) as site:
        assert (await site.call("user_add", {**NEW_USER, "password": "x"})).status_code == 200
    async with sandbox_site() as site:  # no password: the site sets a temporary one
        assert (await site.call("user_add", NEW_USER)).status_code == 200


async def test_the_reconcilers_client_never_sends_a_password_so_the_policy_never_bites() -> None:
    """The tool creates users without a password (the site e-mails the log-in): even the
    strictest policy lets its user_add through."""
    async with sandbox_site(password_min_length=64, password_classes=4) as site:
        async with site.site_client() as client:
            new_id = await client.user_add(
                NewUser(username="nia", email="nia@acme.example", first_name="Nia", last_name="N")
            )
        info = await site.ok("user_info", {"user_id": new_id})
    assert info["resetPassword"] == 1


# ---- user_delete -------------------------------------------------------------------------


async def test_user_delete_removes_the_user_from_every_workspace_and_group() -> None:
    async with sandbox_site() as site:
        await site.ok("user_group_add", {"name": "crew", "group_users": "1042,1011"})
        answer = await site.ok("user_delete", {"user_id": 1042})
        xml = xml_root(await site.call("user_delete", {"user_id": 1011}, xml=True))
        gone = await site.call("user_info", {"user_id": 1042})
        members = await site.ok("users_location_access", {"path": "/Legacy_Scans_workspace/"})
        state = await site.state()
    assert answer == {"userId": 1042}
    assert xml.tag == "userDelete" and xml.findtext("userId") == "1011"
    assert gone.status_code == 404 and error_of(gone)[1] == "There is no user with ID 1042."
    assert [entry["username"] for entry in members] == ["walter"]
    assert 1042 not in _ids(state) and 1011 not in _ids(state)
    assert state["workspaces"][0]["members"] == [1019]
    assert [group["members"] for group in state["groups"]] == [[], []]


async def test_deleting_a_member_changes_the_workspaces_modified_time() -> None:
    async with sandbox_site() as site:
        store = site.app.sandbox.store
        before = store.workspace(1)
        store.delete_user(1001, now=2_000_000_000)  # not a member: no workspace changes
        unchanged = store.workspace(1)
        store.delete_user(1042, now=2_000_000_001)
        after = store.workspace(1)
    assert before is not None and unchanged is not None and after is not None
    assert unchanged.modified == before.modified and after.modified == 2_000_000_001


async def test_a_deleted_users_id_is_not_reused_and_their_key_stops_working() -> None:
    async with sandbox_site() as site:
        await site.ok("user_delete", {"user_id": 1042})
        await site.ok("user_delete", {"user_id": 2})  # the viewer, who has an API key
        added = await site.ok("user_add", NEW_USER)
        viewer = await site.call("user_permissions_location", {"path": "/"}, who=VIEWER)
    assert added == {"userId": NEXT_ID}
    assert viewer.status_code == 401 and "api_key is not known" in error_of(viewer)[1]


async def test_user_delete_refuses_to_delete_the_caller() -> None:
    async with sandbox_site() as site:
        response = await site.call("user_delete", {"user_id": ADMIN_ID})
        state = await site.state()
    assert response.status_code == 400
    assert error_of(response) == (
        "User Delete Failed",
        "User 1 is the user whose credentials sign this call, and a user cannot delete "
        "themselves. Sign the call with another administrator's credentials.",
    )
    assert ADMIN_ID in _ids(state)


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "The parameter user_id is required."),
        ({"user_id": "alice"}, 400, "user_id must be an ID (a whole number above 0); got 'alice'."),
        ({"user_id": 4242}, 404, "There is no user with ID 4242."),
    ],
)
async def test_user_delete_parameter_errors(params: dict, status: int, message: str) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_delete", params)
        state = await site.state()
    assert response.status_code == status
    assert error_of(response) == ("User Delete Failed", message)
    assert len(state["users"]) == 22


# ---- the DELETE verb ("POST DELETE" on the published pages) ------------------------------


@pytest.mark.parametrize("xml", [False, True], ids=["json", "xml"])
async def test_user_delete_accepts_the_delete_verb(xml: bool) -> None:
    async with sandbox_site() as site:
        response = await site.delete("user_delete" + (".xml" if xml else ""), {"user_id": 1042})
        refused = await site.delete("user_delete", {"user_id": 1042}, who=VIEWER)
        state = await site.state()
    assert response.status_code == 200, response.text
    if xml:
        assert xml_root(response).findtext("userId") == "1042"
    else:
        assert response.json() == {"userDelete": {"userId": 1042}}
    assert refused.status_code == 403 and error_of(refused)[0] == "User Delete Failed"
    assert 1042 not in _ids(state)


async def test_delete_parameters_travel_in_the_body_and_the_signature_is_checked() -> None:
    async with sandbox_site() as site:
        in_url = await site.client.delete("/api/user_delete?user_id=1042&api_key=k")
        wrong = await site.delete(
            "user_delete", {"user_id": 1042}, who=type(VIEWER)("sandbox-admin-key", "wrong")
        )
        state = await site.state()
    assert in_url.status_code == 400
    assert error_of(in_url) == (
        "Invalid Request",
        "DELETE parameters travel in a form-encoded request body, not in the URL.",
    )
    assert wrong.status_code == 401 and error_of(wrong)[0] == "Authentication Failed"
    assert 1042 in _ids(state)


async def test_only_the_methods_published_as_post_delete_accept_delete() -> None:
    async with sandbox_site() as site:
        workspace = await site.delete("workspace_delete", {"workspace_id": 1})
        by_get = await site.get("user_delete", {"user_id": 1042})
        state = await site.state()
    assert workspace.status_code == 405 and workspace.headers["allow"] == "POST"
    assert by_get.status_code == 405 and by_get.headers["allow"] == "POST, DELETE"
    assert error_of(by_get) == (
        "Invalid Request",
        "user_delete must be called with POST or DELETE.",
    )
    assert len(state["workspaces"]) == 1 and 1042 in _ids(state)


# ---- fault switches apply to the new writes ----------------------------------------------


async def test_fail_rate_refuses_user_add_and_user_delete_before_any_effect() -> None:
    async with sandbox_site(fail_rate=1.0, random_seed=4) as site:
        added = await site.call("user_add", NEW_USER)
        deleted = await site.delete("user_delete", {"user_id": 1042})
        state = await site.state()
    assert {added.status_code, deleted.status_code} <= {500, 503}
    assert error_of(added)[0] == "User Add Failed" and error_of(deleted)[0] == "User Delete Failed"
    assert len(state["users"]) == 22


async def test_drop_after_commit_commits_user_add_and_a_delete_verb_call() -> None:
    async with sandbox_site(drop_after_commit_rate=1.0) as site:
        with pytest.raises(httpx.RemoteProtocolError):
            await site.call("user_add", NEW_USER)
        with pytest.raises(httpx.RemoteProtocolError):
            await site.delete("user_delete", {"user_id": 1042})
        state = await site.state()
    assert NEXT_ID in _ids(state) and 1042 not in _ids(state)


async def test_rate_limit_applies_to_user_add() -> None:
    async with sandbox_site(rate_limit=1) as site:
        first = await site.call("user_add", NEW_USER)
        second = await site.call(
            "user_add", {**NEW_USER, "user_name": "n2", "email": "n2@x.example"}
        )
        state = await site.state()
    assert (first.status_code, second.status_code) == (200, 429)
    assert error_of(second)[0] == "Rate Limit Exceeded"
    assert _ids(state)[-1] == NEXT_ID and len(state["users"]) == 23
