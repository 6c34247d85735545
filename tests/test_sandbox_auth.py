"""Authentication as the notes describe it, checked on the bytes the sandbox receives."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest

from tests.support.sandbox_site import (
    ADMIN,
    BASE_URL,
    FORM,
    Who,
    error_of,
    example_seed,
    sandbox_site,
)
from tests.support.signing import sign, signed_get_url, signed_post

pytestmark = pytest.mark.anyio

DOC_GET_MESSAGE = "https://acme.example.net/api/user_info?api_key=K&timestamp=1700000000&user_id=42"


def _now() -> str:
    return str(int(time.time()))


def _signed(unsigned_url: str, secret: str = ADMIN.api_secret) -> str:
    return f"{unsigned_url}&signature={sign(secret, unsigned_url)}"


def test_the_test_signer_builds_the_documented_get_message() -> None:
    url = signed_get_url(
        BASE_URL, "user_info", {"user_id": 42}, api_key="K", api_secret="S", timestamp=1700000000
    )
    message, _, signature = url.rpartition("&signature=")
    assert message == DOC_GET_MESSAGE
    assert len(signature) == 64 and signature == signature.lower()


async def test_a_get_signed_over_what_is_sent_passes() -> None:
    query = urlencode([("api_key", ADMIN.api_key), ("path", "/"), ("timestamp", _now())], safe="")
    assert "path=%2F" in query
    async with sandbox_site() as site:
        response = await site.client.get(_signed(f"{BASE_URL}/api/users_location_access?{query}"))
    assert response.status_code == 200, response.text


async def test_a_signature_over_other_bytes_than_those_sent_fails() -> None:
    """Signed with `path=/` but sent with `path=%2F`: the sandbox does not re-encode."""
    now = _now()
    signed_form = (
        f"{BASE_URL}/api/users_location_access?api_key={ADMIN.api_key}&path=/&timestamp={now}"
    )
    sent = f"{BASE_URL}/api/users_location_access?api_key={ADMIN.api_key}&path=%2F&timestamp={now}"
    async with sandbox_site() as site:
        response = await site.client.get(f"{sent}&signature={sign(ADMIN.api_secret, signed_form)}")
    assert response.status_code == 401
    title, message = error_of(response)
    assert title == "Authentication Failed"
    assert message.startswith("The signature does not match the request.")


async def test_the_host_is_part_of_the_signed_message() -> None:
    url = signed_get_url(
        "https://other.example.net",
        "workspace_list",
        {},
        api_key=ADMIN.api_key,
        api_secret=ADMIN.api_secret,
    )
    async with sandbox_site() as site:
        response = await site.client.get(url.replace("https://other.example.net", BASE_URL))
    assert response.status_code == 401
    assert "signature does not match" in error_of(response)[1]


async def test_a_post_signs_the_method_url_alone() -> None:
    url = f"{BASE_URL}/api/user_group_add"
    body = urlencode(
        [
            ("api_key", ADMIN.api_key),
            ("name", "crew"),
            ("timestamp", _now()),
            ("signature", sign(ADMIN.api_secret, url)),
        ]
    )
    async with sandbox_site() as site:
        response = await site.client.post(url, content=body, headers=FORM)
    assert response.status_code == 200, response.text


async def test_the_signature_must_be_lowercase_hex() -> None:
    url = signed_get_url(
        BASE_URL, "workspace_list", {}, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
    )
    message, _, signature = url.rpartition("&signature=")
    async with sandbox_site() as site:
        response = await site.client.get(f"{message}&signature={signature.upper()}")
    assert response.status_code == 401
    assert "signature does not match" in error_of(response)[1]


@pytest.mark.parametrize("missing", ["api_key", "timestamp", "signature"])
async def test_a_missing_credential_is_named(missing: str) -> None:
    params = [("api_key", ADMIN.api_key), ("timestamp", _now())]
    params = [(name, value) for name, value in params if name != missing]
    unsigned = f"{BASE_URL}/api/workspace_list?{urlencode(params)}"
    url = unsigned if missing == "signature" else _signed(unsigned)
    async with sandbox_site() as site:
        response = await site.client.get(url)
    assert response.status_code == 401
    title, message = error_of(response)
    assert title == "Authentication Failed"
    assert f"carries no {missing}" in message


async def test_the_signature_must_be_the_last_parameter() -> None:
    unsigned = f"{BASE_URL}/api/user_info?api_key={ADMIN.api_key}&timestamp={_now()}"
    url = f"{unsigned}&signature={sign(ADMIN.api_secret, unsigned)}&user_id=1001"
    async with sandbox_site() as site:
        response = await site.client.get(url)
    assert response.status_code == 400
    assert error_of(response) == ("Invalid Request", "signature must be the last parameter.")


async def test_get_parameters_must_be_in_alphabetical_order() -> None:
    unsigned = f"{BASE_URL}/api/user_info?user_id=1001&api_key={ADMIN.api_key}&timestamp={_now()}"
    async with sandbox_site() as site:
        response = await site.client.get(_signed(unsigned))
    assert response.status_code == 400
    title, message = error_of(response)
    assert title == "Invalid Request"
    assert "alphabetical order" in message and "'api_key' must come before 'user_id'" in message


async def test_a_parameter_given_twice_is_refused() -> None:
    unsigned = (
        f"{BASE_URL}/api/user_info?api_key={ADMIN.api_key}&timestamp={_now()}&user_id=1&user_id=2"
    )
    async with sandbox_site() as site:
        response = await site.client.get(_signed(unsigned))
    assert response.status_code == 400
    assert "appears more than once" in error_of(response)[1]


async def test_a_timestamp_that_is_not_a_number_is_refused() -> None:
    unsigned = f"{BASE_URL}/api/workspace_list?api_key={ADMIN.api_key}&timestamp=yesterday"
    async with sandbox_site() as site:
        response = await site.client.get(_signed(unsigned))
    assert response.status_code == 401
    assert "Unix time in whole seconds" in error_of(response)[1]


@pytest.mark.parametrize(("offset", "status"), [(-290, 200), (290, 200), (-320, 401), (320, 401)])
async def test_the_timestamp_window_is_300_seconds_either_way(offset: int, status: int) -> None:
    async with sandbox_site() as site:
        response = await site.call("workspace_list", timestamp=int(time.time()) + offset)
    assert response.status_code == status
    if status == 401:
        assert ("ahead of" if offset > 0 else "behind") in error_of(response)[1]


async def test_post_parameters_in_the_url_are_refused() -> None:
    url, body = signed_post(
        BASE_URL,
        "user_group_add",
        {"name": "crew"},
        api_key=ADMIN.api_key,
        api_secret=ADMIN.api_secret,
    )
    async with sandbox_site() as site:
        response = await site.client.post(f"{url}?{body}")
        assert (await site.state())["groups"] == [
            {"id": 1, "name": "old-contractors", "members": [1011]}
        ]
    assert response.status_code == 400
    assert "form-encoded request body" in error_of(response)[1]


async def test_a_post_body_that_is_not_form_encoded_is_refused() -> None:
    url, body = signed_post(
        BASE_URL,
        "user_group_add",
        {"name": "crew"},
        api_key=ADMIN.api_key,
        api_secret=ADMIN.api_secret,
    )
    async with sandbox_site() as site:
        response = await site.client.post(
            url, content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert "application/x-www-form-urlencoded" in error_of(response)[1]


async def test_a_wrong_http_verb_is_refused_with_405() -> None:
    url = signed_get_url(
        BASE_URL, "workspace_add", {"name": "x"}, api_key=ADMIN.api_key, api_secret=ADMIN.api_secret
    )
    async with sandbox_site() as site:
        response = await site.client.get(url)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert error_of(response) == ("Invalid Request", "workspace_add must be called with POST.")


async def test_an_unknown_method_is_404() -> None:
    async with sandbox_site() as site:
        response = await site.get("file_list.xml", {"path": "/"})
    assert response.status_code == 404
    assert error_of(response) == (
        "Unknown Method",
        "There is no API method 'file_list' on this site.",
    )


async def test_a_deactivated_users_key_is_refused() -> None:
    seed = example_seed()
    seed["users"] = [
        *seed["users"],
        {
            "username": "gone",
            "email": "gone@acme.example",
            "active": False,
            "api_key": "gone-key",
            "api_secret": "gone-secret",
        },
    ]
    async with sandbox_site(seed) as site:
        response = await site.call(
            "user_permissions_location", {"path": "/"}, who=Who("gone-key", "gone-secret")
        )
    assert response.status_code == 401
    assert "deactivated" in error_of(response)[1]
