"""Issue 42, item 5: where the site spells an object otherwise, the plan says which one it acts
on; and ``state mv`` never moves a record to a name no manifest could hold.

On a site that keeps the spaces around a name (the sandbox's ``keep_name_spaces``), a
hand-made `` Legal`` is, as the site compares names, the manifest's ``Legal``: the plan may
act on it, but a reviewer must see the site's spelling beside the manifest's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.api.answers import WorkspaceSettings
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.sandbox.settings import SandboxSettings
from tests.support.loopback import LoopbackSite, loopback_site
from tests.support.sandbox_site import EXAMPLE_SEED

LEGAL = {"version": 1, "workspaces": [{"name": "Legal", "users": ["alice"]}]}


@pytest.fixture
def spaced(tmp_path: Path) -> Iterator[tuple[LoopbackSite, int]]:
    """A site that keeps outer spaces, with `` Legal`` made by hand (bob in it)."""
    settings = SandboxSettings(keep_name_spaces=True)
    with loopback_site(tmp_path, EXAMPLE_SEED, settings) as site:

        async def by_hand(client: Any) -> int:
            (made,) = await client.workspace_add([" Legal"], WorkspaceSettings())
            await client.add_to_workspace(1002, [made])
            return int(made)

        yield site, site.api(by_hand)


def test_a_plan_shows_the_sites_spelling_of_the_workspace_it_acts_on(
    spaced: tuple[LoopbackSite, int],
) -> None:
    site, legal_id = spaced
    site.write_manifest("site.yaml", LEGAL)
    text = site.run("plan", "site.yaml")
    assert text.returncode == EXIT_OK, text.output
    assert f'~ workspace "Legal" (id {legal_id}, on the site " Legal")' in text.stdout
    data = json.loads(site.run("plan", "site.yaml", "--format", "json").stdout)
    (change,) = [c for c in data["changes"] if c["kind"] == "workspace"]
    assert change["id"] == legal_id and change["site_name"] == " Legal"
    markdown = site.run("plan", "site.yaml", "--format", "markdown").stdout
    assert "on the site" in markdown and "Legal" in markdown


def test_a_plan_file_without_a_site_spelling_has_no_such_key(site: LoopbackSite) -> None:
    """The common case writes plan files as before: the key appears only where needed."""
    site.write_manifest("site.yaml", {"version": 1, "workspaces": [{"name": "Legacy Scans"}]})
    data = json.loads(site.run("plan", "site.yaml", "--format", "json").stdout)
    assert all("site_name" not in change for change in data["changes"])


@pytest.mark.parametrize(
    ("kind", "name", "problem"),
    [
        ("workspace", "Legal, Compliance", "contains a comma"),
        ("workspace", "L" * 41, "is 41 characters long"),
        ("workspace", " Legal", "starts with whitespace"),
        ("group", "crew\u200b", "contains the invisible or control character U+200B"),
        ("user", "nina smith", "a username holds only letters"),
    ],
    ids=["comma", "too-long", "outer-space", "zero-width", "username"],
)
def test_state_mv_refuses_a_name_no_manifest_could_hold(
    site: LoopbackSite, kind: str, name: str, problem: str
) -> None:
    manifest: dict[str, Any] = {
        "version": 1,
        "workspaces": [{"name": "Legal", "users": ["frank"]}],
        "groups": [{"name": "crew", "members": ["alice"]}],
        "users": [
            {"username": "nina", "email": "nina@acme.example", "first_name": "N", "last_name": "N"}
        ],
    }
    site.write_manifest("site.yaml", manifest)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    old = {"workspace": "Legal", "group": "crew", "user": "nina"}[kind]
    before = site.run("state", "show", "site.yaml").stdout

    refused = site.run("state", "mv", kind, old, name, "site.yaml")
    assert refused.returncode == EXIT_ERROR, refused.output
    assert f"cannot be the name of a {kind} in a manifest" in refused.stderr
    assert problem in refused.stderr
    assert site.run("state", "show", "site.yaml").stdout == before  # nothing moved
