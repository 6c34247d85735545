"""Every method, in JSON and XML, with each kind of caller: the reference's keys and titles.

One table row per method holds a valid call; the tests drive each row as an administrator,
as a non-administrator, with a bad signature, with a stale timestamp and with an unknown key.
"""

from __future__ import annotations

import time

import pytest

from tests.support.sandbox_site import (
    ADMIN,
    METHODS,
    VIEWER,
    error_of,
    sandbox_site,
    seed_with,
    xml_root,
)

pytestmark = pytest.mark.anyio

ADMIN_REQUIRED = "You must be an administrator to call this method"
NO_ACCESS_TITLE = "You do not have access privileges for this location"
NO_ACCESS_MESSAGE = "Please try a different location or speak to an administrator"

OPEN_TO_OTHERS = {"workspace_list", "users_location_access", "user_permissions_location"}
ADMIN_ONLY_METHODS = [row for row in METHODS if row[0] not in OPEN_TO_OTHERS]
FORMATS = pytest.mark.parametrize("xml", [False, True], ids=["json", "xml"])
EACH_METHOD = pytest.mark.parametrize(
    ("method", "params", "key", "title"), METHODS, ids=[row[0] for row in METHODS]
)


@FORMATS
@EACH_METHOD
async def test_an_administrator_gets_the_success_key(method, params, key, title, xml) -> None:
    async with sandbox_site() as site:
        response = await site.call(method, params, xml=xml)
    assert response.status_code == 200, response.text
    if xml:
        assert xml_root(response).tag == key
    else:
        assert response.headers["content-type"] == "application/json"
        assert list(response.json()) == [key]


@FORMATS
@pytest.mark.parametrize(
    ("method", "params", "key", "title"),
    ADMIN_ONLY_METHODS,
    ids=[row[0] for row in ADMIN_ONLY_METHODS],
)
async def test_a_non_administrator_is_refused_with_the_methods_title(
    method, params, key, title, xml
) -> None:
    async with sandbox_site() as site:
        response = await site.call(method, params, who=VIEWER, xml=xml)
        assert response.status_code == 403
        assert error_of(response) == (title, ADMIN_REQUIRED)
        assert (await site.state())["workspaces"][0]["members"] == [1019, 1042]  # unchanged


@FORMATS
async def test_a_non_administrator_is_refused_workspace_list_by_default(xml) -> None:
    async with sandbox_site() as site:
        response = await site.call("workspace_list", who=VIEWER, xml=xml)
    assert response.status_code == 403
    assert error_of(response) == ("Workspace Listing Failed", ADMIN_REQUIRED)


@FORMATS
async def test_a_non_administrator_has_no_access_to_the_root(xml) -> None:
    async with sandbox_site() as site:
        response = await site.call("users_location_access", {"path": "/"}, who=VIEWER, xml=xml)
    assert response.status_code == 403
    assert error_of(response) == (NO_ACCESS_TITLE, NO_ACCESS_MESSAGE)


@FORMATS
async def test_a_non_administrator_gets_own_permissions(xml) -> None:
    async with sandbox_site() as site:
        response = await site.call("user_permissions_location", {"path": "/"}, who=VIEWER, xml=xml)
    assert response.status_code == 200
    if xml:
        assert xml_root(response).findtext("userId") == "2"
    else:
        assert response.json()["userPermissionsLocation"]["userId"] == 2


@FORMATS
@EACH_METHOD
async def test_a_bad_signature_is_refused(method, params, key, title, xml) -> None:
    wrong = type(ADMIN)(ADMIN.api_key, "not-the-secret")
    async with sandbox_site() as site:
        response = await site.call(method, params, who=wrong, xml=xml)
        assert (await site.state())["workspaces"][0]["members"] == [1019, 1042]
    assert response.status_code == 401
    found_title, message = error_of(response)
    assert found_title == "Authentication Failed"
    assert "signature does not match" in message


@FORMATS
@EACH_METHOD
async def test_a_stale_timestamp_is_refused(method, params, key, title, xml) -> None:
    async with sandbox_site() as site:
        response = await site.call(method, params, xml=xml, timestamp=int(time.time()) - 400)
    assert response.status_code == 401
    found_title, message = error_of(response)
    assert found_title == "Authentication Failed"
    assert "check the clock of the calling machine" in message.lower()
    assert "behind" in message


@FORMATS
@EACH_METHOD
async def test_an_unknown_api_key_is_refused(method, params, key, title, xml) -> None:
    stranger = type(ADMIN)("no-such-key", "whatever")
    async with sandbox_site() as site:
        response = await site.call(method, params, who=stranger, xml=xml)
    assert response.status_code == 401
    found_title, message = error_of(response)
    assert found_title == "Authentication Failed"
    assert "api_key is not known" in message


@EACH_METHOD
async def test_the_json_suffix_answers_json_like_the_plain_name(method, params, key, title) -> None:
    """Both brands' pages: ``/api/<method>.json`` is the JSON form (it was a 404 here)."""
    async with sandbox_site() as site:
        suffixed = await site.call(method, params, suffix=".json")
    async with sandbox_site() as site:
        plain = await site.call(method, params)
    assert suffixed.status_code == 200, suffixed.text
    assert suffixed.headers["content-type"] == "application/json"
    assert list(suffixed.json()) == [key]
    assert suffixed.json().keys() == plain.json().keys()


async def test_the_json_suffix_is_counted_under_the_methods_name() -> None:
    async with sandbox_site() as site:
        await site.call("user_info", {"user_id": 1001}, suffix=".json")
        calls = (await site.client.get("/_sandbox/calls")).json()
    assert calls["methods"] == {"user_info": 1}


@FORMATS
@EACH_METHOD
async def test_a_filegenius_auth_code_is_refused_not_ignored(
    method, params, key, title, xml
) -> None:
    """An old FileGenius client sends ``auth_code`` to act as another user; running the call as
    the key's own user instead would be a silent surprise, so the site refuses it."""
    async with sandbox_site() as site:
        response = await site.call(method, {**params, "auth_code": "abc123"}, xml=xml)
        assert (await site.state())["workspaces"][0]["members"] == [1019, 1042]
    assert response.status_code == 400
    found_title, message = error_of(response)
    assert found_title == "Invalid Request"
    assert "auth_code" in message and "FileGenius" in message
    assert "abc123" not in message


async def test_an_administrator_has_every_flag_in_user_info_and_null_flags_at_a_location() -> None:
    """The reference: administrators have full permissions at every location (flags null in
    ``user_permissions_location``); so ``user_info`` shows each of their flags as 1."""
    async with sandbox_site() as site:
        info = await site.ok("user_info", {"user_id": 1})
        location = await site.ok("user_permissions_location", {"path": "/"})
    flags = [
        "uploadFiles", "batchUploadFiles", "sendFiles", "sendFilesNonUser", "downloadFiles",
        "batchDownloadFiles", "moveCopyFiles", "batchMoveCopyFiles", "renameFiles",
        "deleteFiles", "batchDeleteFiles", "createFolders",
    ]  # fmt: skip
    assert info["admin"] == 1
    assert {name: info[name] for name in flags} == dict.fromkeys(flags, 1)
    assert location["userId"] == 1
    assert {name: location[name] for name in flags} == dict.fromkeys(flags)


@FORMATS
async def test_user_list_entries_carry_the_phone(xml) -> None:
    seed = seed_with(
        users=[{"id": 77, "username": "pho", "email": "pho@x.example", "phone": "5550100"}]
    )
    async with sandbox_site(seed) as site:
        response = await site.call("user_list", {"search": "pho"}, xml=xml)
    assert response.status_code == 200
    if xml:
        assert [user.findtext("phone") for user in xml_root(response).iter("user")] == ["5550100"]
    else:
        assert [user["phone"] for user in response.json()["userList"]["users"]] == ["5550100"]
