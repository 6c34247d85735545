"""An in-process sandbox and a small signed caller for the sandbox's tests.

Calls are signed with ``tests.support.signing`` (written from the notes, not from any client)
and sent through ``SandboxTransport`` with httpx, so every test crosses the real ASGI app,
signature check included. The base URL is https, like the real site's.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import httpx
from defusedxml import ElementTree

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.sandbox.app import SandboxApp, create_app
from reconciler.sandbox.seed import load_seed_file
from reconciler.sandbox.settings import SandboxSettings
from reconciler.sandbox.transport import SandboxTransport
from tests.support.signing import signed_get_url, signed_post

BASE_URL = "https://acme.example.net"
EXAMPLE_SEED = (
    Path(__file__).resolve().parents[2] / "reconciler" / "sandbox" / "seeds" / "example.yaml"
)
FORM = {"content-type": "application/x-www-form-urlencoded"}

GET_METHODS = frozenset({
    "user_info", "user_list", "users_location_access", "user_permissions_location",
    "workspace_list", "workspace_info", "user_location_access",
})  # fmt: skip


@dataclass(frozen=True)
class Who:
    """The credentials of one seeded user."""

    api_key: str
    api_secret: str


ADMIN = Who("sandbox-admin-key", "sandbox-admin-secret")
VIEWER = Who("sandbox-viewer-key", "sandbox-viewer-secret")
ADMIN_ID, VIEWER_ID = 1, 2


METHODS = [
    ("user_info", {"user_id": 1001}, "userInfo", "User Info Failed"),
    ("user_list", {}, "userList", "User List Failed"),
    ("users_location_access", {"path": "/"}, "usersLocationAccess", None),
    ("user_permissions_location", {"path": "/"}, "userPermissionsLocation", None),
    ("workspace_list", {}, "workspaceList", "Workspace Listing Failed"),
    ("workspace_info", {"workspace_id": 1}, "workspaceInfo", "Workspace Info Failed"),
    ("workspace_add", {"name": "New One"}, "workspaceAdd", "Workspace Add Failed"),
    ("workspace_delete", {"workspace_id": 1}, "workspaceDelete", "Workspace Delete Failed"),
    ("user_group_add", {"name": "crew"}, "userGroupAdd", "User Group Add Failed"),
    ("user_group_delete", {"user_group_id": 1}, "userGroupDeleted", "User Group Delete Failed"),
    (
        "add_to_user_group",
        {"user_id": 1001, "user_group_ids": "1"},
        "addToUserGroup",
        "Add User to User Group Failed",
    ),
    (
        "remove_from_user_group",
        {"user_id": 1011, "user_group_ids": "1"},
        "removeFromUserGroup",
        "Remove User from User Group Failed",
    ),
    (
        "add_to_workspace",
        {"user_id": 1001, "user_workspace_ids": "1"},
        "addToWorkspace",
        "Add User to Workspace Failed",
    ),
    (
        "remove_from_workspace",
        {"user_id": 1042, "user_workspace_ids": "1"},
        "removeFromWorkspace",
        "Remove User from Workspace Failed",
    ),
    (
        "user_add",
        {"first_name": "Nia", "last_name": "New", "email": "nia@acme.example", "user_name": "nia"},
        "userAdd",
        "User Add Failed",
    ),
    ("user_delete", {"user_id": 1001}, "userDelete", "User Delete Failed"),
]
"""One row per API method: its name, valid parameters (example seed), success key and the
title of its refusal."""


PERMISSION_FIELDS = [
    "uploadFiles", "batchUploadFiles", "downloadFiles", "batchDownloadFiles", "deleteFiles",
    "batchDeleteFiles", "moveCopyFiles", "batchMoveCopyFiles", "renameFiles", "createFolders",
    "sendFiles", "sendFilesNonUser",
]  # fmt: skip
"""The permission fields in ``userPermissionsLocation``'s documented order."""


@functools.cache
def _example_seed() -> dict[str, Any]:
    return load_seed_file(EXAMPLE_SEED)


def example_seed() -> dict[str, Any]:
    """The example seed (a fresh copy, so a test may extend it)."""
    seed = _example_seed()
    return {key: list(value) if isinstance(value, list) else value for key, value in seed.items()}


def seed_with(**extra: list[dict[str, Any]]) -> dict[str, Any]:
    """The example seed with ``extra`` entries appended to its sections."""
    seed = example_seed()
    for key, entries in extra.items():
        seed[key] = [*seed.get(key, []), *entries]
    return seed


@dataclass
class Site:
    """A sandbox app and a client bound to it."""

    app: SandboxApp
    client: httpx.AsyncClient

    async def get(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        who: Who = ADMIN,
        timestamp: int | None = None,
    ) -> httpx.Response:
        url = signed_get_url(
            BASE_URL, method, params or {}, api_key=who.api_key, api_secret=who.api_secret,
            timestamp=timestamp,
        )  # fmt: skip
        return await self.client.get(url)

    async def post(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        who: Who = ADMIN,
        timestamp: int | None = None,
        verb: str = "POST",
    ) -> httpx.Response:
        """A signed call with the parameters in a form body: POST, or ``verb`` (DELETE),
        which the notes sign and send the same way."""
        url, body = signed_post(
            BASE_URL, method, params or {}, api_key=who.api_key, api_secret=who.api_secret,
            timestamp=timestamp,
        )  # fmt: skip
        return await self.client.request(verb, url, content=body, headers=FORM)

    async def delete(
        self, method: str, params: Mapping[str, object] | None = None, *, who: Who = ADMIN
    ) -> httpx.Response:
        """A signed DELETE, for the methods published as "POST DELETE"."""
        return await self.post(method, params, who=who, verb="DELETE")

    async def call(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        who: Who = ADMIN,
        xml: bool = False,
        timestamp: int | None = None,
        suffix: str = "",
    ) -> httpx.Response:
        """Call ``method`` with its documented verb; ``xml`` asks for the .xml variant,
        ``suffix`` (``".json"``) for another one."""
        send = self.get if method in GET_METHODS else self.post
        suffix = ".xml" if xml else suffix
        return await send(method + suffix, params, who=who, timestamp=timestamp)

    async def ok(self, method: str, params: Mapping[str, object] | None = None, **kw: Any) -> Any:
        """The success value of a JSON call (asserting status 200 and the success key)."""
        response = await self.call(method, params, **kw)
        assert response.status_code == 200, response.text
        (value,) = response.json().values()
        return value

    def site_client(self, who: Who = ADMIN) -> SiteClient:
        """The tool's own client of this sandbox (in-process, no network)."""
        config = ClientConfig(BASE_URL, who.api_key, Secret(who.api_secret))
        return SiteClient(config, transport=SandboxTransport(self.app))

    async def state(self) -> dict[str, Any]:
        response = await self.client.get("/_sandbox/state")
        assert response.status_code == 200
        return response.json()  # type: ignore[no-any-return]


@asynccontextmanager
async def sandbox_site(
    seed: Mapping[str, Any] | None = None, *, db_path: str | None = None, **settings: Any
) -> AsyncIterator[Site]:
    """A fresh sandbox (the example seed unless ``seed``; in memory unless ``db_path``)."""
    app = create_app(
        SandboxSettings(**settings), seed=example_seed() if seed is None else seed, db_path=db_path
    )
    transport = SandboxTransport(app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield Site(app, client)
    finally:
        app.sandbox.store.close()


def error_of(response: httpx.Response) -> tuple[str, str]:
    """(title, message) of an error body, JSON or XML, checking its exact documented shape."""
    if response.headers["content-type"].startswith("application/xml"):
        root = xml_root(response)
        assert root.tag == "error"
        assert [child.tag for child in root] == ["title", "message"]
        return root.findtext("title") or "", root.findtext("message") or ""
    body = response.json()
    assert list(body) == ["error"] and sorted(body["error"]) == ["message", "title"], body
    return body["error"]["title"], body["error"]["message"]


def xml_root(response: httpx.Response) -> Element:
    assert response.headers["content-type"].startswith("application/xml")
    return ElementTree.fromstring(response.content)  # type: ignore[no-any-return]
