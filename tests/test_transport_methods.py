"""Every API method of the method table, signed and sent through the real network transport
(aiohttp, ``api/transport.py``) to the sandbox served over loopback.

The sandbox checks every signature, so a URL re-quoted on its way out (``%2F`` sent as ``/``,
``%20`` as ``+``) fails here as "signature does not match". Parameters that need quoting are
chosen on purpose: the site root ``/``, a search with a space, a slash, a plus and non-ASCII
letters, workspace names with spaces. Both answer formats, JSON and XML.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.api import methods
from reconciler.api.answers import NewUser, WorkspaceSettings
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.api.methods import ApiMethod
from reconciler.api.transport import AiohttpTransport
from tests.support.loopback import ADMIN_KEY, ADMIN_SECRET, LoopbackSite, loopback_site

FORMATS = ("json", "xml")
TABLE = {row.name for row in vars(methods).values() if isinstance(row, ApiMethod)}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path_factory.mktemp("transport")) as running:
        yield running


def _client(site: LoopbackSite, response_format: str) -> SiteClient:
    config = ClientConfig(
        site.url, ADMIN_KEY, Secret(ADMIN_SECRET), response_format=response_format
    )
    return SiteClient(config)  # no transport given: the network one, as the CLI uses


async def _every_method(client: SiteClient, tag: str) -> None:
    assert isinstance(client._caller._transport, AiohttpTransport)
    assert (await client.user_info(1001)).username == "alice"
    assert {user.username for user in await client.user_list()} >= {"alice", "bob"}
    assert await client.user_search("Ünïcode / a+b c") == []  # quoted, found nobody
    assert any(entry.name == "alice" for entry in await client.users_location_access("/"))
    assert (await client.user_permissions_location("/")).admin is None
    listed = await client.workspace_list()
    settings = WorkspaceSettings(user_ids=(1001,), permissions=frozenset({"upload_files"}))
    ids = await client.workspace_add([f"Transport {tag} one", f"Transport {tag} two"], settings)
    assert len(await client.workspace_list()) == len(listed) + 2
    assert (await client.workspace_info(ids[0])).name == f"Transport {tag} one"
    group = await client.user_group_add(f"transport {tag}", [1001])
    await client.add_to_user_group(1002, [group.id])
    await client.remove_from_user_group(1002, [group.id])
    await client.add_to_workspace(1002, ids)
    await client.remove_from_workspace(1002, ids)
    user_id = await client.user_add(NewUser(f"transport.{tag}", f"{tag}@t.example", "T", tag))
    assert await client.user_delete(user_id) == user_id
    assert await client.user_group_delete(group.id) == group.id
    for workspace_id in ids:
        assert await client.workspace_delete(workspace_id) == workspace_id


@pytest.mark.anyio
@pytest.mark.parametrize("response_format", FORMATS)
async def test_every_method_is_signed_and_sent_through_the_network_transport(
    site: LoopbackSite, response_format: str
) -> None:
    site.control("calls/reset", {})
    async with _client(site, response_format) as client:
        await _every_method(client, response_format)
    site.faults(legacy_location_method=True)  # a FileGenius-era site: the old method name
    try:
        async with _client(site, response_format) as client:
            assert any(entry.name == "alice" for entry in await client.users_location_access())
    finally:
        site.faults(legacy_location_method=False)
    called = set(site.control("calls")["methods"])
    assert called == TABLE, f"not sent: {sorted(TABLE - called)}"


def test_the_table_has_every_method_of_the_reference() -> None:
    assert len(TABLE) == 17  # the reference's 16, and the old name of users_location_access


def test_a_client_made_outside_an_event_loop_opens_its_connections_in_the_loop(
    tmp_path: Path,
) -> None:
    """The aiohttp session is made at the first call, in the loop that runs it; a client
    made before any loop runs (as the CLI makes it) works."""
    with loopback_site(tmp_path) as running:
        client = _client(running, "json")

        async def go() -> str:
            async with client:
                return (await client.user_info(1001)).username

        assert asyncio.run(go()) == "alice"
