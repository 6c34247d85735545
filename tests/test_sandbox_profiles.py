"""Each profile switch and each fault, shown acting (and its default shown not acting)."""

from __future__ import annotations

import time

import anyio
import httpx
import pytest

from reconciler.sandbox.app import create_app
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings, profile_settings
from tests.support.loopback import EXAMPLE_SEED
from tests.support.sandbox_site import (
    ADMIN,
    BASE_URL,
    METHODS,
    VIEWER,
    Who,
    error_of,
    example_seed,
    sandbox_site,
    xml_root,
)
from tests.support.signing import sign
from tests.support.virtual_time import VirtualTime

pytestmark = pytest.mark.anyio


async def test_errors_as_200_keeps_the_error_body() -> None:
    async with sandbox_site(errors_as_200=True) as site:
        refused = await site.call("workspace_add", {"name": "X"}, who=VIEWER)
        stale = await site.call("workspace_list", xml=True, timestamp=int(time.time()) - 1000)
        fine = await site.call("workspace_list")
    assert refused.status_code == stale.status_code == fine.status_code == 200
    assert error_of(refused) == (
        "Workspace Add Failed",
        "You must be an administrator to call this method",
    )
    assert error_of(stale)[0] == "Authentication Failed" and xml_root(stale).tag == "error"
    assert "workspaceList" in fine.json()


async def test_timestamp_window_setting() -> None:
    old = int(time.time()) - 1000
    async with sandbox_site(timestamp_window=1200) as site:
        assert (await site.call("workspace_list", timestamp=old)).status_code == 200
    async with sandbox_site(timestamp_window=0) as site:
        assert (
            await site.call("workspace_list", timestamp=int(time.time()) - 5)
        ).status_code == 401


async def test_open_workspace_list_shows_a_non_admin_their_workspaces() -> None:
    seed = example_seed()
    seed["workspaces"] = [*seed["workspaces"], {"name": "Mine", "users": ["viewer"]}]
    async with sandbox_site(seed, open_workspace_list=True) as site:
        answer = await site.ok("workspace_list", who=VIEWER)
    assert answer == {
        "workspaces": [
            {"id": 2, "workspaceName": "Mine", "workspacePath": "/Mine_workspace/", "listed": 1}
        ],
        "totalWorkspaces": 1,
    }


async def test_allow_duplicate_workspace_names() -> None:
    async with sandbox_site(allow_duplicate_workspace_names=True) as site:
        answer = await site.ok("workspace_add", {"name": "Legacy Scans,Legacy_Scans"})
        listing = await site.ok("workspace_list")
        members = await site.ok("users_location_access", {"path": "/Legacy_Scans_workspace/"})
    assert answer == {"workspaceId": [2, 3]}
    assert [ws["workspacePath"] for ws in listing["workspaces"]] == ["/Legacy_Scans_workspace/"] * 3
    assert [entry["username"] for entry in members] == ["walter", "oscar"]


async def test_partial_multi_add_creates_the_valid_names_then_errs() -> None:
    async with sandbox_site(partial_multi_add=True) as site:
        response = await site.call("workspace_add", {"name": "Good One,Legacy Scans,,Good Two"})
        state = await site.state()
    assert response.status_code == 400
    title, message = error_of(response)
    assert title == "Workspace Add Failed"
    assert "'Legacy Scans' already exists" in message and "A workspace name is empty." in message
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans", "Good One", "Good Two"]


async def test_omit_groups_in_location_access() -> None:
    async with sandbox_site(omit_groups_in_location_access=True) as site:
        entries = await site.ok("users_location_access", {"path": "/"})
    assert len(entries) == 22 and {entry["uType"] for entry in entries} == {1}


async def test_rate_limit_answers_429_with_retry_after() -> None:
    now = VirtualTime()
    async with sandbox_site(rate_limit=3) as site:
        site.app.sandbox.clock = now.monotonic
        responses = [await site.call("workspace_list") for _ in range(5)]
        limited = responses[-1]
        assert [r.status_code for r in responses] == [200, 200, 200, 429, 429]
        assert limited.headers["retry-after"] == "1"
        assert error_of(limited)[0] == "Rate Limit Exceeded"
        now.now += 0.95
        assert (await site.call("workspace_list")).status_code == 429  # the second is not over
        now.now += 0.1
        assert (await site.call("workspace_list")).status_code == 200


async def test_latency_is_added_per_call_and_calls_overlap() -> None:
    async with sandbox_site(latency_ms=200) as site:
        durations: list[float] = []

        async def one() -> None:
            started = time.monotonic()
            assert (await site.call("workspace_list")).status_code == 200
            durations.append(time.monotonic() - started)

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one)
        total = time.monotonic() - started
    assert min(durations) >= 0.2
    assert total < 0.2 * 8 / 2  # eight calls overlapped instead of queueing


async def test_fail_rate_one_fails_every_call_before_any_effect() -> None:
    async with sandbox_site(fail_rate=1.0, random_seed=7) as site:
        responses = [await site.call("workspace_add", {"name": f"W{n}"}) for n in range(12)]
        state = await site.state()
    assert {r.status_code for r in responses} == {500, 503}
    assert {error_of(r)[0] for r in responses} == {"Workspace Add Failed"}
    assert all("Please try again or contact customer support." in error_of(r)[1] for r in responses)
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans"]


async def test_fail_rate_is_a_share_and_reproducible_with_random_seed() -> None:
    async def run() -> list[int]:
        async with sandbox_site(fail_rate=0.3, random_seed=42) as site:
            return [(await site.call("workspace_list")).status_code for _ in range(100)]

    first, second = await run(), await run()
    assert first == second
    assert 15 <= sum(code != 200 for code in first) <= 45


async def test_drop_after_commit_commits_then_raises_a_transport_error() -> None:
    async with sandbox_site(drop_after_commit_rate=1.0) as site:
        with pytest.raises(httpx.RemoteProtocolError):
            await site.call("workspace_add", {"name": "Ghost"})
        read = await site.call("workspace_list")  # reads are never dropped
        state = await site.state()
    assert read.status_code == 200
    assert [ws["name"] for ws in state["workspaces"]] == ["Legacy Scans", "Ghost"]


async def test_drop_after_commit_rate_is_a_share_of_writes() -> None:
    async with sandbox_site(drop_after_commit_rate=0.5, random_seed=3) as site:
        outcomes = []
        for n in range(40):
            try:
                outcomes.append((await site.call("user_group_add", {"name": f"g{n}"})).status_code)
            except httpx.RemoteProtocolError:
                outcomes.append(None)
        state = await site.state()
    dropped = outcomes.count(None)
    assert 8 <= dropped <= 32 and outcomes.count(200) == 40 - dropped
    assert len(state["groups"]) == 41  # every call committed, answered or not


async def test_refuse_workspace_info() -> None:
    async with sandbox_site(refuse_workspace_info=True) as site:
        response = await site.call("workspace_info", {"workspace_id": 1}, xml=True)
    assert response.status_code == 403
    assert error_of(response) == (
        "Workspace Info Failed",
        "This site does not allow workspace_info.",
    )


async def test_legacy_workspace_list_is_a_bare_list() -> None:
    async with sandbox_site(legacy_workspace_list=True) as site:
        answer = await site.ok("workspace_list")
        root = xml_root(await site.call("workspace_list", xml=True))
    assert answer == [
        {
            "id": 1,
            "workspaceName": "Legacy Scans",
            "workspacePath": "/Legacy_Scans_workspace/",
            "listed": 1,
        }
    ]
    assert root.tag == "workspaceList" and [child.tag for child in root] == ["workspace"]


async def test_seed_settings_apply_and_explicit_settings_override_them() -> None:
    seed = example_seed()
    seed["settings"] = {"legacy_workspace_list": True, "timestamp_window": 60}
    from_seed = create_app(seed=seed).sandbox.settings
    overridden = create_app(
        SandboxSettings(timestamp_window=900, errors_as_200=True), seed=seed
    ).sandbox.settings
    assert (from_seed.legacy_workspace_list, from_seed.timestamp_window) == (True, 60)
    assert (
        overridden.legacy_workspace_list,
        overridden.timestamp_window,
        overridden.errors_as_200,
    ) == (True, 900, True)


# method, parameters that make it fail (example seed), its title as the samples print it
PUBLISHED_REFUSALS = [
    ("workspace_delete", {"workspace_id": 99}, "'Workspace Delete Failed"),
    ("user_group_add", {"name": " "}, "'User Group Add Failed"),
    ("user_group_delete", {"user_group_id": 99}, "'User Group Delete Failed"),
    (
        "add_to_user_group",
        {"user_id": 1001, "user_group_ids": "99"},
        "'Add User to User Group Failed",
    ),
    (
        "remove_from_user_group",
        {"user_id": 1001, "user_group_ids": "99"},
        "'Remove User from User Group Failed",
    ),
    (
        "remove_from_workspace",
        {"user_id": 1001, "user_workspace_ids": "99"},
        "'Remove User from Workspace Failed",
    ),
    ("user_delete", {"user_id": 4242}, "'User Delete Failed"),
]


@pytest.mark.parametrize("xml", [False, True], ids=["json", "xml"])
@pytest.mark.parametrize(
    ("method", "params", "published"),
    PUBLISHED_REFUSALS,
    ids=[row[0] for row in PUBLISHED_REFUSALS],
)
async def test_published_error_titles_carry_the_stray_quote(method, params, published, xml) -> None:
    async with sandbox_site(published_error_titles=True) as site:
        quoted = await site.call(method, params, xml=xml)
    async with sandbox_site() as site:
        plain = await site.call(method, params, xml=xml)
    assert quoted.status_code == plain.status_code != 200
    assert error_of(quoted) == (published, error_of(plain)[1])
    assert error_of(plain)[0] == published.lstrip("'")


async def test_published_workspace_listing_title_differs_between_json_and_xml() -> None:
    async with sandbox_site(published_error_titles=True) as site:
        as_json = await site.call("workspace_list", who=VIEWER)
        as_xml = await site.call("workspace_list", who=VIEWER, xml=True)
        user_info = await site.call("user_info", {"user_id": 1}, who=VIEWER)
        stale = await site.call("workspace_delete", {"workspace_id": 1}, timestamp=1)
    assert '"title": "\\"Workspace Listing Failed"' in as_json.text  # still valid JSON
    assert error_of(as_json)[0] == '"Workspace Listing Failed'
    assert error_of(as_xml)[0] == "'Workspace Listing Failed"
    # titles the samples print plainly stay plain, and so do authentication failures
    assert error_of(user_info)[0] == "User Info Failed"
    assert error_of(stale)[0] == "Authentication Failed"


LOCATION_PARAMS = {"path": "/Legacy_Scans_workspace/"}


async def test_legacy_location_method_serves_the_old_name_only() -> None:
    async with sandbox_site(legacy_location_method=True) as site:
        old = await site.ok("user_location_access", LOCATION_PARAMS)
        old_xml = xml_root(await site.call("user_location_access", LOCATION_PARAMS, xml=True))
        new = await site.call("users_location_access", LOCATION_PARAMS)
        new_xml = await site.call("users_location_access", LOCATION_PARAMS, xml=True)
        refused = await site.call("user_location_access", {"path": "/"}, who=VIEWER)
    assert [entry["username"] for entry in old] == ["walter", "oscar"]
    assert old_xml.tag == "usersLocationAccess" and len(old_xml) == 2
    for response in (new, new_xml):  # exactly the answer to any unknown method
        assert response.status_code == 404
        assert error_of(response) == (
            "Unknown Method",
            "There is no API method 'users_location_access' on this site.",
        )
    assert refused.status_code == 403
    assert error_of(refused)[0] == "You do not have access privileges for this location"


async def test_the_old_location_method_name_is_unknown_by_default() -> None:
    async with sandbox_site() as site:
        old = await site.call("user_location_access", LOCATION_PARAMS)
        new = await site.call("users_location_access", LOCATION_PARAMS)
    assert old.status_code == 404
    assert error_of(old) == (
        "Unknown Method",
        "There is no API method 'user_location_access' on this site.",
    )
    assert new.status_code == 200


# ---- the published profile: only what the public pages show -------------------------------

PUBLISHED = profile_settings("published").to_dict()


@pytest.mark.parametrize("xml", [False, True], ids=["json", "xml"])
@pytest.mark.parametrize(("method", "params", "key", "title"), METHODS, ids=[r[0] for r in METHODS])
async def test_published_profile_answers_every_method_in_both_forms(
    method, params, key, title, xml
) -> None:
    async with sandbox_site(**PUBLISHED) as site:
        stranger = await site.call(method, params, who=Who("no-such-key", "x"), xml=xml)
        viewer = await site.call(method, params, who=VIEWER, xml=xml)
        success = await site.call(method, params, xml=xml)
    assert stranger.status_code == viewer.status_code == success.status_code == 200
    assert (xml_root(success).tag if xml else next(iter(success.json()))) == key
    assert error_of(stranger) == (
        "Authentication Failed",
        "Authentication parameters missing or invalid.",
    )
    if title is not None:  # an administrator-only method (workspace_list too, by default)
        shown_title, message = error_of(viewer)
        assert shown_title.lstrip("'\"") == title
        assert message == "You must be an administrator to call this method"


async def test_published_profile_words_every_sandbox_explanation_generically() -> None:
    async with sandbox_site(**PUBLISHED) as site:
        unknown = await site.call("workspace_info", {"workspace_id": 999})
        bad = await site.call("workspace_add", {"name": "a,b" * 30})
    for response, title in ((unknown, "Workspace Info Failed"), (bad, "Workspace Add Failed")):
        assert response.status_code == 200
        assert error_of(response) == (title, "Please try again or contact customer support.")


async def test_published_profile_writes_json_as_php_does() -> None:
    async with sandbox_site(**PUBLISHED) as site:
        response = await site.call("workspace_list")
    assert b'"workspacePath":"\\/Legacy_Scans_workspace\\/"' in response.content.replace(b" ", b"")
    entry = response.json()["workspaceList"]["workspaces"][0]
    assert entry["workspacePath"] == "/Legacy_Scans_workspace/"  # the same value, once parsed


async def test_strict_signing_checks_the_sites_own_encoding_not_the_bytes_sent() -> None:
    """A client that writes a space as ``+`` and signs exactly what it sent passes a site that
    checks the bytes, and fails one that rebuilds the URL its own way (RFC 3986, ``%20``)."""
    timestamp = int(time.time())
    query = f"api_key={ADMIN.api_key}&path=%2FLegacy+Scans%2F&timestamp={timestamp}"
    url = f"{BASE_URL}/api/users_location_access?{query}"
    signed = f"{url}&signature={sign(ADMIN.api_secret, url)}"
    async with sandbox_site() as site:
        lenient = await site.client.get(signed)
    async with sandbox_site(strict_signing=True) as site:
        strict = await site.client.get(signed)
        canonical = await site.call("users_location_access", {"path": "/"})
    assert "signature does not match" not in lenient.text  # 403: no such location, but signed
    assert strict.status_code == 401 and "signature does not match" in strict.text
    assert canonical.status_code == 200


@pytest.mark.e2e
def test_serve_takes_a_profile_and_refuses_an_unknown_one(tmp_path) -> None:
    from click.testing import CliRunner

    from reconciler.cli import cli

    result = CliRunner().invoke(cli, ["sandbox", "serve", "--profile", "nope"])
    assert result.exit_code != 0 and "nope" in result.output
    with running_sandbox(EXAMPLE_SEED, profile_settings("published")) as url:
        served = httpx.get(f"{url}/_sandbox/settings").json()
    assert {name: served[name] for name in PUBLISHED} == PUBLISHED
