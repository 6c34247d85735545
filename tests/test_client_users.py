"""The users-as-code methods, and the FileGenius-era name of ``users_location_access``.

The sandbox does not emulate ``user_add``/``user_delete`` nor serve the old method name, so
small real servers on 127.0.0.1 play the site here: they check each request's signature the
way the public documentation describes it (an independent signer, ``tests/support/signing``)
and answer in the shapes the notes publish or leave open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from reconciler.api.answers import LocationEntry, NewUser
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.errors import (
    InvalidRequest,
    NotFound,
    OutcomeUnknown,
    PermissionDenied,
)
from tests.support.hostile_server import (
    HostileServer,
    Reply,
    Request,
    hostile_server,
    json_reply,
    text_reply,
)
from tests.support.signing import sign

pytestmark = pytest.mark.anyio
KEY, SECRET = "sandbox-admin-key", "sandbox-admin-secret"
Respond = Callable[[Request], Reply]


def client_of(server: HostileServer, **options: Any) -> SiteClient:
    return SiteClient(ClientConfig(server.url, KEY, Secret(SECRET), **options))


def signature_checked(respond: Respond) -> Respond:
    """``respond``, behind the documented signature check (401 when it fails)."""

    def check(request: Request) -> Reply:
        base = f"http://{request.headers['Host']}"
        if request.verb == "POST":
            message = base + request.path
        else:
            message = base + request.target.rsplit("&signature=", 1)[0]
        if request.params.get("signature") != sign(SECRET, message):
            return json_reply({"error": {"title": "Authentication Failed", "message": ""}}, 401)
        return respond(request)

    return check


@contextmanager
def site(respond: Respond) -> Iterator[HostileServer]:
    with hostile_server(signature_checked(respond)) as server:
        yield server


# --- user_add and user_delete -------------------------------------------------------------

ALICE = NewUser("alice", "alice@acme.example", "Alice", "Archer")
SHAPES: list[tuple[str, str]] = [
    ("json", '{"userAdd": {"userId": 1234}}'),
    ("json", '{"userAdd": 1234}'),
    ("json", '{"userAdd": {"id": "1234"}}'),
    ("json", '{"userAdd": {"user": {"id": 1234, "username": "alice"}}}'),
    ("xml", "<userAdd><userId>1234</userId></userAdd>"),
    ("xml", "<userAdd>1234</userAdd>"),
    ("xml", "<userAdd><user><id>1234</id></user></userAdd>"),
]


@pytest.mark.parametrize(("response_format", "body"), SHAPES)
async def test_user_add_sends_the_published_parameters_and_reads_the_new_id(
    response_format: str, body: str
) -> None:
    with site(lambda request: text_reply(body, 200, "text/plain")) as server:
        async with client_of(server, response_format=response_format) as client:
            assert await client.user_add(ALICE) == 1234
    (request,) = server.requests
    suffix = ".xml" if response_format == "xml" else ""
    assert (request.verb, request.path) == ("POST", f"/api/user_add{suffix}")
    params = request.params
    assert {k: v for k, v in params.items() if k not in ("timestamp", "signature")} == {
        "api_key": KEY,
        "user_name": "alice",
        "email": "alice@acme.example",
        "first_name": "Alice",
        "last_name": "Archer",
        "active": "1",
        "admin": "0",
    }


async def test_user_add_never_sends_a_password_and_sends_optional_fields_when_given() -> None:
    user = NewUser(
        "bob.b@x",
        "bob@acme.example",
        "Bob",
        "Baker",
        organization="Acme",
        phone="5551234",
        phone_ext="12",
        active=False,
        admin=True,
    )
    with site(lambda request: json_reply({"userAdd": {"userId": 7}})) as server:
        async with client_of(server) as client:
            assert await client.user_add(user) == 7
    params = server.requests[0].params
    assert not any("pass" in name for name in params)
    assert (params["organization"], params["phone"], params["phone_ext"]) == (
        "Acme",
        "5551234",
        "12",
    )
    assert (params["user_name"], params["active"], params["admin"]) == ("bob.b@x", "0", "1")


async def test_a_refused_user_add_quotes_the_site() -> None:
    error = {"title": "'User Add Failed", "message": "That user_name is already taken."}
    with site(lambda request: json_reply({"error": error}, 400)) as server:
        async with client_of(server) as client:
            with pytest.raises(InvalidRequest, match="already taken") as caught:
                await client.user_add(ALICE)
    assert caught.value.title == "User Add Failed" and len(server.requests) == 1


async def test_a_user_add_without_an_answer_is_outcome_unknown_and_not_sent_again() -> None:
    unanswered = Reply(raw=b"")  # the connection closes without a response
    with site(lambda request: unanswered) as server:
        async with client_of(server) as client:
            with pytest.raises(OutcomeUnknown):
                await client.user_add(ALICE)
    assert len(server.requests) == 1


async def test_user_delete_answers_the_deleted_user() -> None:
    with site(lambda request: json_reply({"userDelete": {"userId": 1003}})) as server:
        async with client_of(server) as client:
            assert await client.user_delete(1003) == 1003
    (request,) = server.requests
    assert (request.verb, request.params["user_id"]) == ("POST", "1003")


async def test_a_refused_user_delete_names_the_published_title() -> None:
    error = {
        "title": "'User Delete Failed",
        "message": "You must be an administrator to call this method",
    }
    with site(lambda request: json_reply({"error": error}, 403)) as server:
        async with client_of(server) as client:
            with pytest.raises(PermissionDenied) as caught:
                await client.user_delete(1003)
    assert caught.value.title == "User Delete Failed"


# --- users_location_access on a FileGenius-era site ---------------------------------------

ENTRIES = [
    {"id": 1, "username": "admin", "email": "a@x", "admin": 1, "uType": 1},
    {"id": 501, "username": "old-contractors", "email": "", "admin": 0, "uType": 0},
]
EXPECTED = [
    LocationEntry(1, "admin", "a@x", is_group=False, admin=True),
    LocationEntry(501, "old-contractors", None, is_group=True, admin=False),
]
XML_ENTRIES = "".join(
    f"<user><id>{e['id']}</id><username>{e['username']}</username><email>{e['email']}</email>"
    f"<admin>{e['admin']}</admin><uType>{e['uType']}</uType></user>"
    for e in ENTRIES
)
UNKNOWN_METHOD = {
    "title": "Unknown Method",
    "message": "There is no API method 'users_location_access' on this site.",
}
MISSING: dict[str, Reply] = {
    "404, API body": json_reply({"error": UNKNOWN_METHOD}, 404),
    "404 page": text_reply("<!DOCTYPE html><html><body>404 Not Found</body></html>", 404),
    "errors as 200": json_reply({"error": UNKNOWN_METHOD}),
    "404, no title": json_reply({"error": {"title": "", "message": "Not found"}}, 404),
}


def legacy_site(missing: Reply) -> Respond:
    """A site that knows ``user_location_access`` only."""

    def respond(request: Request) -> Reply:
        if request.method != "user_location_access":
            return missing
        if request.xml:
            return text_reply(f"<userLocationAccess>{XML_ENTRIES}</userLocationAccess>")
        return json_reply({"userLocationAccess": ENTRIES})

    return respond


@pytest.mark.parametrize("response_format", ["json", "xml"])
@pytest.mark.parametrize("missing", MISSING, ids=str)
async def test_the_old_method_name_is_tried_once_and_then_kept(
    missing: str, response_format: str
) -> None:
    with site(legacy_site(MISSING[missing])) as server:
        async with client_of(server, response_format=response_format) as client:
            assert await client.users_location_access("/") == EXPECTED
            assert await client.users_location_access("/", non_admins_only=True) == EXPECTED
            assert await client.users_location_access("/Team_A_workspace/") == EXPECTED
    assert [r.method for r in server.requests] == [
        "users_location_access",
        "user_location_access",
        "user_location_access",
        "user_location_access",
    ]
    assert server.requests[2].params["type"] == "nonAdminsOnly"
    assert client.stats.calls == {"users_location_access": 1, "user_location_access": 3}


async def test_a_site_with_neither_name_reports_the_documented_one_and_is_not_probed_again() -> (
    None
):
    with site(lambda request: MISSING["404, API body"]) as server:
        async with client_of(server) as client:
            for _ in range(2):
                with pytest.raises(NotFound, match="users_location_access"):
                    await client.users_location_access("/")
    assert [r.method for r in server.requests] == [
        "users_location_access",
        "user_location_access",
        "users_location_access",
    ]


async def test_an_unknown_location_is_not_taken_for_an_unknown_method() -> None:
    error = {"title": "Users Location Access Failed", "message": "That folder does not exist."}
    with site(lambda request: json_reply({"error": error}, 404)) as server:
        async with client_of(server) as client:
            with pytest.raises(NotFound, match="does not exist"):
                await client.users_location_access("/Gone_workspace/")
    assert [r.method for r in server.requests] == ["users_location_access"]


async def test_a_current_site_never_hears_the_old_name() -> None:
    current = json_reply({"usersLocationAccess": ENTRIES})
    with site(lambda request: current) as server:
        async with client_of(server) as client:
            for _ in range(3):
                assert await client.users_location_access("/") == EXPECTED
    assert {r.method for r in server.requests} == {"users_location_access"}


async def test_a_refusal_of_the_old_name_is_reported_and_the_old_name_kept() -> None:
    def respond(request: Request) -> Reply:
        if request.method == "users_location_access":
            return MISSING["404 page"]
        error = {"title": "You do not have access privileges for this location", "message": ""}
        return json_reply({"error": error}, 403)

    with site(respond) as server:
        async with client_of(server) as client:
            for _ in range(2):
                with pytest.raises(PermissionDenied):
                    await client.users_location_access("/")
    assert [r.method for r in server.requests] == [
        "users_location_access",
        "user_location_access",
        "user_location_access",
    ]
