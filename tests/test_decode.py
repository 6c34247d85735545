"""The pure decoders and the boundary: every quirk of the notes, every error shape, junk.

Cases are data: each row is (method row, body as the site would send it, expected record).
JSON and XML bodies go through the same ``load_document`` the client uses and the value is
found under one of the row's success keys, so a row checks the format handling, the table
row and its decoder. Error bodies go through the client's ``Boundary``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.api import boundary, decode, methods
from reconciler.api.answers import (
    GroupCreated,
    LocationEntry,
    LocationPermissions,
    MembershipAnswer,
    UserInfo,
    UserSummary,
    WorkspaceEntry,
    WorkspaceInfo,
    WorkspaceMember,
    WorkspaceRef,
)
from reconciler.api.boundary import Answer, Boundary
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.decode import Payload
from reconciler.api.errors import (
    AuthenticationError,
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    PermissionDenied,
    ProtocolError,
    RateLimited,
    ServerError,
    SiteError,
    SiteRefusal,
)
from reconciler.api.methods import ApiMethod
from reconciler.api.payload import read_entries
from reconciler.api.xmlcodec import load_document

Method = ApiMethod[Any]
BOUNDARY = Boundary(ClientConfig("https://acme.example.net", "key-for-tests", Secret("s3cret!")))

ALL_PERMISSIONS = frozenset(
    {
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
    }
)


def decoded(
    method: Method, body: str | dict[str, Any], params: dict[str, str] | None = None
) -> Any:
    """``body`` (JSON or XML) read as ``method``'s answer: its one top-level key must be one of
    the row's success keys, and the value under it goes through the row's decoder."""
    raw = json.dumps(body).encode() if isinstance(body, dict) else body.encode()
    document = load_document(raw, method=method.name)
    (key,) = document
    assert key in method.keys
    return method.decoder(Payload(document[key], method.name, key, params or {}))


USER_INFO_JSON = {
    "userInfo": {
        "id": 1001,
        "username": "alice",
        "firstName": "Alice",
        "lastName": "Archer",
        "email": "alice@acme.example",
        "organization": None,
        "phone": "",
        "phoneExt": None,
        "created": "04/07/15 at 09:05 am EDT",
        "modified": "04/07/15 at 09:05 am EDT",
        "admin": 0,
        "uploadFiles": 1,
        "batchUploadFiles": "1",
        "downloadFiles": 1,
        "renameFiles": 0,
        "uploadNotifications": 1,
        "downloadNotifications": 0,
        "workspaces": [
            {"workspace": {"id": 7, "name": "Team A"}},
            {"workspace": {"id": "8", "name": "Team B"}},
        ],
    }
}
USER_INFO_XML = """<?xml version="1.0" encoding="UTF-8"?>
<userInfo><id>1001</id><username>alice</username><firstName>Alice</firstName>
<lastName>Archer</lastName><email>alice@acme.example</email><organization/>
<phoneExt>null</phoneExt><admin>0</admin><uploadFiles>1</uploadFiles>
<batchUploadFiles>1</batchUploadFiles><downloadFiles>1</downloadFiles><renameFiles>0</renameFiles>
<uploadNotifications>1</uploadNotifications><downloadNotifications>0</downloadNotifications>
<workspaces><workspace><id>7</id><name>Team A</name></workspace>
<workspace><id>8</id><name>Team B</name></workspace></workspaces></userInfo>"""
ALICE = UserInfo(
    id=1001,
    username="alice",
    email="alice@acme.example",
    first_name="Alice",
    last_name="Archer",
    admin=False,
    permissions=frozenset({"upload_files", "batch_upload_files", "download_files"}),
    notifications=frozenset({"upload_notifications"}),
    workspaces=(WorkspaceRef(7, "Team A"), WorkspaceRef(8, "Team B")),
)
BARE_USER = UserInfo(1, "admin", "", None, None, True, frozenset(), frozenset(), ())

LOCATION_XML = """<usersLocationAccess>
<user><id>1</id><username>admin</username><email>a@x</email><admin>1</admin><uType>1</uType>
<subAdmin>null</subAdmin></user>
<user><id>501</id><username>old-contractors</username><email/><admin>0</admin><uType>0</uType></user>
</usersLocationAccess>"""
LOCATION_ENTRIES = (
    LocationEntry(1, "admin", "a@x", is_group=False, admin=True),
    LocationEntry(501, "old-contractors", None, is_group=True, admin=False),
)

WS_ENTRY = {"id": 3, "workspaceName": "Team A", "workspacePath": "/Team_A_workspace/", "listed": 1}
TEAM_A = WorkspaceEntry(3, "Team A", "/Team_A_workspace/", True)

WORKSPACE_INFO_JSON = {
    "workspaceInfo": {
        "id": "3",
        "name": "Team A",
        "path": "/Team_A_workspace/",
        "created": "04/07/15 at 09:05 am EDT",
        "users": [{"user": {"id": 1001, "username": "alice", "email": "alice@acme.example"}}],
        "workspaceOverridePermissions": {"uploadFiles": 1, "downloadFiles": "1", "renameFiles": 0},
        "workspaceOverrideNotifications": {"uploadNotifications": 0, "downloadNotifications": 1},
    }
}
WORKSPACE_INFO_XML = """<workspaceInfo><id>3</id><name>Team A</name><path>/Team_A_workspace/</path>
<users><user><id>1001</id><username>alice</username><email>alice@acme.example</email></user></users>
<workspaceOverridePermissions><uploadFiles>1</uploadFiles><downloadFiles>1</downloadFiles>
</workspaceOverridePermissions><workspaceOverrideNotifications><uploadNotifications>0
</uploadNotifications><downloadNotifications>1</downloadNotifications>
</workspaceOverrideNotifications></workspaceInfo>"""
TEAM_A_INFO = WorkspaceInfo(
    3,
    "Team A",
    "/Team_A_workspace/",
    (WorkspaceMember(1001, "alice", "alice@acme.example"),),
    frozenset({"upload_files", "download_files"}),
    frozenset({"download_notifications"}),
)

CASES: list[tuple[str, Method, str | dict[str, Any], object]] = [
    ("user_info json", methods.USER_INFO, USER_INFO_JSON, ALICE),
    ("user_info xml", methods.USER_INFO, USER_INFO_XML, ALICE),
    (
        "user_info minimal, optional fields missing",
        methods.USER_INFO,
        {"userInfo": {"id": "1", "username": "admin", "admin": "1"}},
        BARE_USER,
    ),
    (
        "user_info xml, empty workspaces element",
        methods.USER_INFO,
        "<userInfo><id>1</id><username>admin</username><admin>1</admin><workspaces/></userInfo>",
        BARE_USER,
    ),
    (
        "user_info, one unwrapped workspace",
        methods.USER_INFO,
        {
            "userInfo": {
                "id": 1,
                "username": "admin",
                "admin": 1,
                "workspaces": {"id": 7, "name": "X"},
            }
        },
        UserInfo(
            1, "admin", "", None, None, True, frozenset(), frozenset(), (WorkspaceRef(7, "X"),)
        ),
    ),
    (
        "user_list page, wrapped and unwrapped",
        methods.USER_LIST,
        {
            "userList": {
                "users": [
                    {"user": {"id": 1, "username": "a", "email": "a@x", "admin": 1}},
                    {"id": "2", "siteId": 9, "username": "b", "email": "b@x", "firstName": "B"},
                ]
            }
        },
        (UserSummary(1, "a", "a@x", admin=True), UserSummary(2, "b", "b@x", first_name="B")),
    ),
    (
        "user_list xml",
        methods.USER_LIST,
        "<userList><users><user><id>2</id><username>b</username><email>b@x</email>"
        "<lastName>null</lastName></user></users></userList>",
        (UserSummary(2, "b", "b@x"),),
    ),
    ("user_list xml empty", methods.USER_LIST, "<userList><users/></userList>", ()),
    ("user_list json empty", methods.USER_LIST, {"userList": {"users": []}}, ()),
    ("location access xml", methods.USERS_LOCATION_ACCESS, LOCATION_XML, LOCATION_ENTRIES),
    (
        "location access json",
        methods.USERS_LOCATION_ACCESS,
        {
            "usersLocationAccess": [
                {"id": 1, "username": "admin", "email": "a@x", "admin": 1, "uType": 1},
                {"id": "501", "username": "old-contractors", "email": None, "uType": "0"},
            ]
        },
        LOCATION_ENTRIES,
    ),
    (
        "location access xml empty",
        methods.USERS_LOCATION_ACCESS,
        "<usersLocationAccess/>",
        (),
    ),
    (
        "location access xml null",
        methods.USERS_LOCATION_ACCESS,
        "<usersLocationAccess>null</usersLocationAccess>",
        (),
    ),
    (
        "location access json null",
        methods.USERS_LOCATION_ACCESS,
        {"usersLocationAccess": None},
        (),
    ),
    (
        "permissions of an admin: nulls",
        methods.USER_PERMISSIONS_LOCATION,
        {"userPermissionsLocation": {"userId": 1, "admin": None, "uploadFiles": None}},
        LocationPermissions(1, None, dict.fromkeys(sorted(ALL_PERMISSIONS))),
    ),
    (
        "permissions xml: null text and numbers",
        methods.USER_PERMISSIONS_LOCATION,
        "<userPermissionsLocation><userId>2</userId><admin>0</admin><uploadFiles>1</uploadFiles>"
        "<deleteFiles>0</deleteFiles><renameFiles>null</renameFiles></userPermissionsLocation>",
        LocationPermissions(
            2,
            False,
            {**dict.fromkeys(ALL_PERMISSIONS), "upload_files": True, "delete_files": False},
        ),
    ),
    (
        "workspace_list current form",
        methods.WORKSPACE_LIST,
        {"workspaceList": {"workspaces": [WS_ENTRY], "totalWorkspaces": 1}},
        (TEAM_A,),
    ),
    (
        "workspace_list legacy bare list",
        methods.WORKSPACE_LIST,
        {"workspaceList": [WS_ENTRY]},
        (TEAM_A,),
    ),
    (
        "workspace_list wrapped entries",
        methods.WORKSPACE_LIST,
        {"workspaceList": {"workspaces": [{"workspace": WS_ENTRY}], "totalWorkspaces": "1"}},
        (TEAM_A,),
    ),
    (
        "workspace_list xml current form",
        methods.WORKSPACE_LIST,
        "<workspaceList><workspaces><workspace><id>3</id><workspaceName>Team A</workspaceName>"
        "<workspacePath>/Team_A_workspace/</workspacePath><listed>1</listed></workspace>"
        "</workspaces><totalWorkspaces>1</totalWorkspaces></workspaceList>",
        (TEAM_A,),
    ),
    (
        "workspace_list xml legacy",
        methods.WORKSPACE_LIST,
        "<workspaceList><workspace><id>3</id><workspaceName>Team A</workspaceName>"
        "<workspacePath>/Team_A_workspace/</workspacePath><listed>1</listed></workspace>"
        "</workspaceList>",
        (TEAM_A,),
    ),
    (
        "workspace_list xml empty",
        methods.WORKSPACE_LIST,
        "<workspaceList><workspaces/><totalWorkspaces>0</totalWorkspaces></workspaceList>",
        (),
    ),
    ("workspace_list xml legacy empty", methods.WORKSPACE_LIST, "<workspaceList/>", ()),
    (
        "workspace_list, path missing: derived",
        methods.WORKSPACE_LIST,
        {"workspaceList": [{"id": 3, "workspaceName": "Team A"}]},
        (WorkspaceEntry(3, "Team A", "/Team_A_workspace/", None),),
    ),
    ("workspace_info json", methods.WORKSPACE_INFO, WORKSPACE_INFO_JSON, TEAM_A_INFO),
    ("workspace_info xml", methods.WORKSPACE_INFO, WORKSPACE_INFO_XML, TEAM_A_INFO),
    (
        "workspace_info without overrides or users",
        methods.WORKSPACE_INFO,
        "<workspaceInfo><id>3</id><name>Team A</name><users/><workspaceOverridePermissions/>"
        "</workspaceInfo>",
        WorkspaceInfo(3, "Team A", "/Team_A_workspace/", (), frozenset(), frozenset()),
    ),
    (
        "workspace_add one id",
        methods.WORKSPACE_ADD,
        {"workspaceAdd": {"workspaceId": 12}},
        (12,),
    ),
    (
        "workspace_add list",
        methods.WORKSPACE_ADD,
        {"workspaceAdd": {"workspaceId": [12, "13"]}},
        (12, 13),
    ),
    (
        "workspace_add comma string",
        methods.WORKSPACE_ADD,
        {"workspaceAdd": {"workspaceId": "12,13"}},
        (12, 13),
    ),
    (
        "workspace_add xml comma text",
        methods.WORKSPACE_ADD,
        "<workspaceAdd><workspaceId>12,13</workspaceId></workspaceAdd>",
        (12, 13),
    ),
    (
        "workspace_add xml repeated elements",
        methods.WORKSPACE_ADD,
        "<workspaceAdd><workspaceId>12</workspaceId><workspaceId>13</workspaceId></workspaceAdd>",
        (12, 13),
    ),
    (
        "workspace_delete",
        methods.WORKSPACE_DELETE,
        {"workspaceDelete": {"workspaceId": "12"}},
        12,
    ),
    (
        "user_group_add comma string",
        methods.USER_GROUP_ADD,
        {"userGroupAdd": {"userGroupId": 77, "userGroupMembers": "4561,4567"}},
        GroupCreated(77, (4561, 4567)),
    ),
    (
        "user_group_add list",
        methods.USER_GROUP_ADD,
        {"userGroupAdd": {"userGroupId": "77", "userGroupMembers": [4561, "4567"]}},
        GroupCreated(77, (4561, 4567)),
    ),
    (
        "user_group_add single integer",
        methods.USER_GROUP_ADD,
        {"userGroupAdd": {"userGroupId": 77, "userGroupMembers": 4561}},
        GroupCreated(77, (4561,)),
    ),
    (
        "user_group_add no members (xml empty element)",
        methods.USER_GROUP_ADD,
        "<userGroupAdd><userGroupId>77</userGroupId><userGroupMembers/></userGroupAdd>",
        GroupCreated(77, ()),
    ),
    (
        "user_group_delete",
        methods.USER_GROUP_DELETE,
        {"userGroupDeleted": {"userGroupId": 77}},
        77,
    ),
    (
        "add_to_user_group",
        methods.ADD_TO_USER_GROUP,
        {"addToUserGroup": {"userId": 1001, "userGroupIds": "77, 78"}},
        MembershipAnswer(1001, (77, 78)),
    ),
    (
        "remove_from_workspace xml",
        methods.REMOVE_FROM_WORKSPACE,
        "<removeFromWorkspace><userId>1001</userId><userWorkspaceIds>3</userWorkspaceIds>"
        "</removeFromWorkspace>",
        MembershipAnswer(1001, (3,)),
    ),
]


@pytest.mark.parametrize(
    ("method", "body", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_decoders_tolerate_every_published_quirk(
    method: Method, body: str | dict[str, Any], expected: object
) -> None:
    assert decoded(method, body) == expected


BAD_PAYLOADS: list[tuple[str, Method, object, str]] = [
    ("id not a number", methods.USER_INFO, {"id": "abc", "username": "a"}, "userInfo.id"),
    ("id missing", methods.USER_INFO, {"username": "a"}, "userInfo.id"),
    ("id is a bool", methods.USER_INFO, {"id": True, "username": "a"}, "userInfo.id"),
    ("username missing", methods.USER_INFO, {"id": 1}, "userInfo.username"),
    ("payload is a string", methods.USER_INFO, "oops", "userInfo"),
    (
        "flag is a word",
        methods.USER_INFO,
        {"id": 1, "username": "a", "admin": "yes"},
        "admin",
    ),
    (
        "workspaces is a number",
        methods.USER_INFO,
        {"id": 1, "username": "a", "workspaces": 5},
        "workspaces",
    ),
    ("entry is a list", methods.USER_LIST, {"users": [[1, 2]]}, "userList.users[0]"),
    ("huge id", methods.WORKSPACE_DELETE, {"workspaceId": "9" * 5000}, "workspaceId"),
    ("unicode digits", methods.WORKSPACE_DELETE, {"workspaceId": "²"}, "workspaceId"),
    ("ids with junk", methods.WORKSPACE_ADD, {"workspaceId": "12,x"}, "workspaceId"),
    ("workspace list a number", methods.WORKSPACE_LIST, 42, "workspaceList"),
    ("location entry without id", methods.USERS_LOCATION_ACCESS, [{"username": "a"}], "id"),
    (
        "override flags as a list",
        methods.WORKSPACE_INFO,
        {"id": 1, "name": "A", "workspaceOverridePermissions": [1, 2]},
        "workspaceOverridePermissions",
    ),
]


@pytest.mark.parametrize(
    ("method", "value", "field"), [c[1:] for c in BAD_PAYLOADS], ids=[c[0] for c in BAD_PAYLOADS]
)
def test_unreadable_success_bodies_are_protocol_errors_naming_the_field(
    method: Method, value: object, field: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        method.decoder(Payload(value, method.name, method.keys[0]))
    assert field in caught.value.message
    assert caught.value.hint and "API" in caught.value.hint


# --- error bodies and classification ------------------------------------------------------

CLASSIFY: list[tuple[int, str, str, type[SiteRefusal]]] = [
    (
        401,
        "Authentication Failed",
        "The signature does not match the request.",
        AuthenticationError,
    ),
    (403, "User Info Failed", "You must be an administrator to call this method", PermissionDenied),
    (404, "Workspace Delete Failed", "There is no workspace with ID 9.", NotFound),
    (400, "Workspace Add Failed", "name is too long", InvalidRequest),
    (422, "Workspace Add Failed", "name is too long", InvalidRequest),
    (429, "Too Many Requests", "Slow down", RateLimited),
    (500, "User Info Failed", "Please try again or contact customer support.", ServerError),
    (503, "Anything", "", ServerError),
    # status 200 (or an unusual code): the words decide
    (200, "Authentication Failed", "The api_key is not known to this site.", AuthenticationError),
    (200, "Authentication Failed", "The timestamp is 900 seconds behind", AuthenticationError),
    (200, "Invalid Request", "signature must be the last parameter.", InvalidRequest),
    (
        200,
        "Workspace Listing Failed",
        "You must be an administrator to call this method",
        PermissionDenied,
    ),
    (
        200,
        "You do not have access privileges for this location",
        "Please try a different location or speak to an administrator",
        PermissionDenied,
    ),
    (200, "User Does Not Exist", "Please contact your site administrator.", NotFound),
    (200, "User Info Failed", "There is no user with ID 9999.", NotFound),
    (200, "Rate Limit Exceeded", "Too many requests", RateLimited),
    (200, "User Group Add Failed", "Please try again or contact customer support.", ServerError),
    (200, "Internal Server Error", "", ServerError),
    (200, "Workspace Add Failed", "name must be at most 40 characters", InvalidRequest),
    (418, "Odd", "nothing known", InvalidRequest),
]


@pytest.mark.parametrize(("status", "title", "message", "expected"), CLASSIFY)
def test_classify_by_status_when_informative_else_by_words(
    status: int, title: str, message: str, expected: type[SiteRefusal]
) -> None:
    assert boundary.classify(status, title, message) is expected


def _answer(body: bytes | str | dict[str, Any], status: int = 200, **kw: Any) -> Answer:
    if isinstance(body, dict):
        body = json.dumps(body)
    content = body.encode() if isinstance(body, str) else body
    return Answer(status, content, **kw)


def _refusal(
    answer: Answer, method: Method = methods.USER_INFO, params: dict[str, str] | None = None
) -> SiteError:
    outcome = BOUNDARY.answer(method, params or {}, answer)
    assert outcome.error is not None and outcome.value is None
    assert outcome.status == answer.status
    return outcome.error


def test_an_error_body_with_200_is_a_refusal_with_stray_quotes_stripped() -> None:
    body = {
        "error": {"title": " 'User Group Add Failed", "message": "You must be an administrator"}
    }
    error = _refusal(_answer(body))
    assert isinstance(error, PermissionDenied)
    assert error.title == "User Group Add Failed"
    assert "user_info" in error.message and "You must be an administrator" in error.message
    assert error.hint == boundary.HINTS[PermissionDenied]


def test_xml_error_body_is_the_same_refusal() -> None:
    body = (
        "<error><title>Authentication Failed</title>"
        "<message>The timestamp is 400 seconds ahead of the site's clock</message></error>"
    )
    error = _refusal(_answer(body, 401))
    assert isinstance(error, AuthenticationError)
    assert error.hint is not None and "clock" in error.hint


def test_a_bad_signature_suggests_checking_the_credentials() -> None:
    error = _refusal(
        _answer({"error": {"title": "Authentication Failed", "message": "bad signature"}}, 401)
    )
    assert error.hint is not None and "RECONCILER_API_SECRET" in error.hint


def test_rate_limited_carries_retry_after() -> None:
    error = _refusal(_answer({"error": {"title": "x", "message": "y"}}, 429, retry_after=2.0))
    assert isinstance(error, RateLimited) and error.retry_after == 2.0
    assert error.hint is not None and "--rate-limit" in error.hint


@pytest.mark.parametrize(
    ("status", "expected"), [(502, ServerError), (503, ServerError), (429, RateLimited)]
)
def test_a_proxy_page_with_a_telling_status_is_classified_by_status(
    status: int, expected: type[SiteError]
) -> None:
    error = _refusal(_answer("<html><body>Bad gateway</body></html>", status))
    assert type(error) is expected


JUNK: list[tuple[str, bytes | str | dict[str, Any], int]] = [
    ("html 404 page", "<!DOCTYPE html><html><body>Not Found</body></html>", 404),
    ("html 200 page", "<html><body>Welcome</body></html>", 200),
    ("plain text", "OK", 200),
    ("empty body", "", 200),
    ("truncated json", '{"userInfo": {"id": 1, "user', 200),
    ("truncated xml", "<userInfo><id>1</id><user", 200),
    ("json array", "[1, 2, 3]", 200),
    ("json string", '"userInfo"', 200),
    ("other key", {"somethingElse": {}}, 200),
    ("invalid utf-8", b'{"userInfo": "\xff\xfe"}', 200),
    ("deep json", "[" * 100_000 + "]" * 100_000, 200),
    ("deep xml", "<a>" * 200 + "</a>" * 200, 200),
    ("redirect page", "", 302),
    (
        "billion laughs",
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
        "<userInfo><id>&lol3;</id></userInfo>",
        200,
    ),
    (
        "external entity",
        '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        "<userInfo><id>&x;</id></userInfo>",
        200,
    ),
    ("bare dtd", '<!DOCTYPE userInfo SYSTEM "x.dtd"><userInfo><id>1</id></userInfo>', 200),
]


@pytest.mark.parametrize(("body", "status"), [c[1:] for c in JUNK], ids=[c[0] for c in JUNK])
def test_a_body_that_is_neither_success_nor_error_is_a_protocol_error(
    body: bytes | str | dict[str, Any], status: int
) -> None:
    error = _refusal(_answer(body, status))
    assert type(error) is ProtocolError
    assert error.message.startswith("user_info:")
    assert error.hint is not None and "URL" in error.hint


def test_a_method_row_accepts_each_of_its_success_keys() -> None:
    for key in ("userGroupDeleted", "userGroupDelete"):
        answer = Answer(200, json.dumps({key: {"userGroupId": 5}}).encode())
        assert BOUNDARY.answer(methods.USER_GROUP_DELETE, {}, answer).value == 5


# --- the new user methods and what write decoders promise ---------------------------------

USER_ADD_SHAPES: list[str | dict[str, Any]] = [
    {"userAdd": {"userId": 1234}},
    {"userAdd": {"userId": "1234"}},
    {"userAdd": 1234},
    {"userAdd": "1234"},
    {"userAdd": {"id": 1234}},
    {"userAdd": {"user": {"id": 1234}}},
    {"userAdd": {"user": {"userId": 1234}}},
    {"userAdded": {"userId": 1234}},
    "<userAdd><userId>1234</userId></userAdd>",
    "<userAdd>1234</userAdd>",
    "<userAdd><id>1234</id></userAdd>",
    "<userAdd><user><id>1234</id><username>newbie</username></user></userAdd>",
]


@pytest.mark.parametrize("body", USER_ADD_SHAPES, ids=str)
def test_user_add_accepts_every_reasonable_success_shape(body: str | dict[str, Any]) -> None:
    assert decoded(methods.USER_ADD, body) == 1234


@pytest.mark.parametrize(
    "value", [{}, {"userId": "x"}, {"user": {"name": "a"}}, [1234], None, "abc"], ids=str
)
def test_an_unreadable_user_add_answer_is_a_protocol_error(value: object) -> None:
    with pytest.raises(ProtocolError, match="userAdd"):
        methods.USER_ADD.decoder(Payload(value, "user_add", "userAdd"))


def test_user_delete_answers_the_deleted_user() -> None:
    assert decoded(methods.USER_DELETE, {"userDelete": {"userId": "77"}}) == 77
    assert decoded(methods.USER_DELETE, "<userDelete><userId>77</userId></userDelete>") == 77


@pytest.mark.parametrize(
    ("ids", "names", "words"),
    [
        ([12], "A,B", "1 ID(s) for 2 name(s)"),
        ([12, 13, 14], "A,B", "3 ID(s) for 2 name(s)"),
        ([12, 12], "A,B", "repeated IDs for 2 name(s)"),
        ([], "A", "0 ID(s) for 1 name(s)"),
    ],
)
def test_workspace_add_must_answer_one_distinct_id_per_name(
    ids: list[int], names: str, words: str
) -> None:
    with pytest.raises(ProtocolError, match=re.escape(words)):
        decoded(methods.WORKSPACE_ADD, {"workspaceAdd": {"workspaceId": ids}}, {"name": names})
    assert decoded(
        methods.WORKSPACE_ADD, {"workspaceAdd": {"workspaceId": "5,6"}}, {"name": "A,B"}
    ) == (5, 6)


# --- the boundary: what writes' failures mean, and nothing of the credentials gets through --


@pytest.mark.parametrize(
    "answer",
    [
        Answer(200, b'{"workspaceAdd": {"workspaceId": [12]}}'),
        Answer(200, b"<html>Thanks!</html>"),
        Answer(200, b'{"workspaceAdd": {"workspaceId": 1'),
        Answer(201, b'{"somethingElse": 1}'),
        Answer(502, b"<html>Bad gateway</html>"),
        Answer(200, b"", defect="more than 32 MiB (decompressed)"),
    ],
    ids=["one id for two names", "html", "truncated", "other key", "gateway", "too large"],
)
def test_an_unreadable_answer_to_a_write_is_outcome_unknown(answer: Answer) -> None:
    error = _refusal(answer, methods.WORKSPACE_ADD, {"name": "A,B"})
    assert type(error) is OutcomeUnknown
    assert "may or may not have applied" in error.message
    assert error.hint == boundary.UNKNOWN_OUTCOME_HINT
    read = BOUNDARY.answer(methods.WORKSPACE_LIST, {}, answer).error
    assert isinstance(read, ProtocolError | ServerError)  # the same answer to a read


def test_rate_limit_words_in_a_message_do_not_make_a_rate_limit() -> None:
    body = {"error": {"title": "Workspace Add Failed", "message": "'Too many cooks' exists"}}
    error = _refusal(_answer(body), methods.WORKSPACE_ADD)
    assert type(error) is InvalidRequest
    assert boundary.classify(200, "Rate Limit Exceeded", "") is RateLimited


SIGNATURE = "0123456789abcdef" * 4


def test_credentials_and_signatures_in_an_answer_never_reach_a_record_or_an_error() -> None:
    echo = (
        f"GET /api/user_info?api_key=key-for-tests&signature={SIGNATURE} "
        f"s3cret! {hashlib.sha1(b's3cret!').hexdigest()} api_secret%3Dabc by key-for-tests"
    )
    record = BOUNDARY.answer(
        methods.USER_INFO, {}, _answer({"userInfo": {"id": 1, "username": echo}})
    ).value
    refused = _refusal(_answer({"error": {"title": echo, "message": echo}}, 400))
    junk = _refusal(_answer({echo: {"id": echo}}))
    texts = [record.username, refused.message, refused.title or "", junk.message, str(junk)]
    for text in texts:
        for forbidden in (SIGNATURE, "s3cret!", "key-for-tests", "abc", "6c0b"):
            assert forbidden not in text, text
    assert record.username.endswith("by key-…ests")  # the key is shown masked, as everywhere


# --- fuzz: nothing but records and ProtocolError comes out --------------------------------

METHODS: list[Method] = [c[1] for c in CASES]
ALL_METHODS: list[Method] = [row for row in vars(methods).values() if isinstance(row, ApiMethod)]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "username",
                    "email",
                    "admin",
                    "uType",
                    "workspaces",
                    "users",
                    "userId",
                    "workspaceId",
                    "userGroupId",
                    "userGroupMembers",
                    "userGroupIds",
                    "workspace",
                    "user",
                    "workspaceName",
                    "name",
                    "uploadFiles",
                    "workspaceOverridePermissions",
                    "totalWorkspaces",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=6,
        )
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(value=json_values, which=st.integers(min_value=0, max_value=len(METHODS) - 1))
def test_random_payloads_decode_or_raise_protocol_error(value: object, which: int) -> None:
    method = METHODS[which]
    with contextlib.suppress(ProtocolError):
        method.decoder(Payload(value, method.name, method.keys[0], {"name": "A,B"}))


@settings(max_examples=300, deadline=None)
@given(
    body=st.binary(max_size=64) | st.text(max_size=64).map(str.encode),
    status=st.sampled_from([200, 400, 401, 404, 418, 429, 500, 503]),
    method=st.sampled_from(ALL_METHODS),
)
def test_random_bodies_give_a_record_or_a_site_error(
    body: bytes, status: int, method: Method
) -> None:
    outcome = BOUNDARY.answer(method, {}, Answer(status, body))
    assert (outcome.error is None) != (outcome.value is None) or outcome.value == ()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_random_documents_give_a_record_or_a_site_error(value: object) -> None:
    body = json.dumps({"error": value} if isinstance(value, dict) else value).encode()
    outcome = BOUNDARY.answer(methods.USER_INFO, {}, Answer(200, body))
    assert outcome.error is not None or isinstance(outcome.value, UserInfo)


def test_a_workspace_list_shorter_than_its_total_is_a_protocol_error() -> None:
    """Read as a smaller site, a cut-off list would make managed workspaces look deleted."""
    entries = [{"id": 1, "workspaceName": "A", "workspacePath": "/A_workspace/"}]
    answer = {"workspaceList": {"workspaces": entries, "totalWorkspaces": 3}}
    with pytest.raises(ProtocolError, match="totalWorkspaces says 3"):
        decoded(methods.WORKSPACE_LIST, answer)
    answer["workspaceList"]["totalWorkspaces"] = 1
    assert len(decoded(methods.WORKSPACE_LIST, answer)) == 1


# --- entries read plainly -----------------------------------------------------------------

_ODD_VALUES = st.sampled_from(
    [-1, 0, 1, 2, 7, True, False, "0", "1", " 7 ", "true", "", "x", None, 0.0, 1.0, [1], {}]
)
_PLAIN_READERS = {
    "user_list": (
        "user",
        decode._user_summary,
        decode._plain_user_summary,
        {"id": 5, "username": "u", "email": "e", "firstName": "f", "lastName": "l", "admin": 1,
         "active": 0},
    ),
    "users_location_access": (
        "user",
        decode._location_entry,
        decode._plain_location_entry,
        {"id": 5, "username": "u", "name": "n", "email": "e", "uType": 1, "admin": 0},
    ),
    "workspace_list": (
        "workspace",
        decode._workspace_entry,
        decode._plain_workspace_entry,
        {"id": 5, "workspaceName": "w", "name": "n", "workspacePath": "/w/", "path": "/p/",
         "listed": 1},
    ),
    "workspace_info": (
        "user",
        decode._workspace_member,
        decode._plain_member,
        {"id": 5, "username": "u", "email": "e"},
    ),
}  # fmt: skip


@settings(max_examples=400)
@pytest.mark.parametrize("answer", sorted(_PLAIN_READERS))
@given(data=st.data())
def test_entries_read_plainly_are_read_as_fields_read_them(answer: str, data: Any) -> None:
    """The plain readers (no ``Fields`` for an entry of ints and texts) give what the
    ``Fields`` readers give, and fail where they fail: an entry of the usual values with up
    to two of them odd or left out, as it is or wrapped as the site may wrap it."""
    wrapper, read, plain, usual = _PLAIN_READERS[answer]
    entry: Any = dict(usual)
    for key in data.draw(st.lists(st.sampled_from(sorted(usual)), max_size=2, unique=True)):
        value = data.draw(st.one_of(_ODD_VALUES, st.just("left out")))
        if value == "left out":
            del entry[key]
        else:
            entry[key] = value
    entry = data.draw(st.sampled_from([entry, {wrapper: entry}, {"x": entry}, [entry], 1]))

    def outcome(with_plain: bool) -> object:
        try:
            return read_entries([entry], "x", wrapper, read, "m", plain if with_plain else None)
        except ProtocolError as error:
            return ("refused", error.message)

    assert outcome(True) == outcome(False)
