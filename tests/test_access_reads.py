"""What ``reconciler access`` reads: no more than a full plan, and for ``--user`` and
``--workspace`` only what the report on them needs. The real engine and client against the
sandbox mounted in-process; the calls are those the sandbox received."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.access.job import access_report
from reconciler.access.model import AccessReport, ReportScope
from reconciler.access.read import NothingSelected
from reconciler.core.planning import PlanOptions
from reconciler.errors import EXIT_ERROR
from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite
from reconciler.sandbox.settings import SandboxSettings
from tests.support.engine_site import EngineSite, engine_site

SUPPORT = Path(__file__).parent / "support"
SEED: dict[str, Any] = yaml.safe_load((SUPPORT / "access_seed.yaml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.anyio


def manifest() -> DesiredSite:
    loaded = load_manifest([str(SUPPORT / "access_site.yaml")]).desired
    assert loaded is not None
    return loaded


async def report(
    site: EngineSite, users: tuple[str, ...] = (), workspaces: tuple[str, ...] = ()
) -> tuple[AccessReport, Counter[str]]:
    site.app.sandbox.calls.clear()
    made = await access_report(site.site, ReportScope(users, workspaces), manifest())
    return made, Counter(site.app.sandbox.calls)


def people(made: AccessReport) -> list[tuple[str, str]]:
    return [(e.person, e.workspace) for e in made.entries]


async def test_the_whole_site_is_read_as_a_full_plan_reads_it(tmp_path: Path) -> None:
    """A plan of a manifest declaring every workspace reads them all; so does the report,
    and nothing else (own permissions would be a user_info call a person)."""
    everything = yaml.safe_load((SUPPORT / "access_site.yaml").read_text(encoding="utf-8"))
    everything["workspaces"].append({"name": "Archive", "users": ["erin"]})
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump(everything), encoding="utf-8")
    whole = load_manifest([str(path)]).desired
    assert whole is not None
    async with engine_site(SEED, tmp_path) as site:
        site.app.sandbox.calls.clear()
        await site.plan(whole, PlanOptions())
        plan_calls = Counter(site.app.sandbox.calls)
        made, calls = await report(site)
    assert calls == plan_calls  # the very same reads, method by method
    assert "user_info" not in calls
    assert ("carol", "Finance") in people(made) and ("boss", "Archive") in people(made)


async def test_a_workspace_report_reads_its_members_and_nothing_of_the_others(
    tmp_path: Path,
) -> None:
    async with engine_site(SEED, tmp_path) as site:
        made, calls = await report(site, workspaces=("Legal",))
    assert calls == {
        "workspace_list": 1,
        "workspace_info": 1,
        "users_location_access": 1,  # every user's e-mail and administrator flag
        "user_list": 1,  # active=0: the deactivated accounts
        "user_info": 2,  # bob and dave: Legal has no override, their own settings apply
    }
    assert people(made) == [
        ("admin", "Legal"),
        ("bob", "Legal"),
        ("boss", "Legal"),
        ("dave", "Legal"),
    ]
    bob = next(e for e in made.entries if e.person == "bob")
    assert (bob.permissions, bob.permissions_from) == ({"download_files"}, "user")
    assert bob.notifications == {"upload_notifications"}
    assert made.usual_domains == ("acme.example",)  # judged on every user, not on four


async def test_a_workspace_report_knows_who_is_deactivated(tmp_path: Path) -> None:
    async with engine_site(SEED, tmp_path) as site:
        made, _ = await report(site, workspaces=("Fin*",))
    carol = next(e for e in made.entries if e.person == "carol")
    assert carol.active is False
    assert [f.kind for f in made.findings if f.person == "carol"] == ["deactivated"]
    assert all(e.active is True for e in made.entries if e.person != "carol")


async def test_a_user_report_reads_that_person_and_their_workspaces(tmp_path: Path) -> None:
    async with engine_site(SEED, tmp_path) as site:
        made, calls = await report(site, users=("bob@acme.example",))
    assert calls == {
        "user_list": 1,  # the site's search for the name
        "user_info": 1,  # their own settings and their workspaces
        "workspace_info": 1,  # Legal's overrides
        "users_location_access": 1,  # the site's usual e-mail domains
    }
    assert people(made) == [("bob", "Legal")]


async def test_an_administrator_s_report_lists_every_workspace(tmp_path: Path) -> None:
    async with engine_site(SEED, tmp_path) as site:
        made, calls = await report(site, users=("boss",))
    assert calls["workspace_list"] == 1 and "workspace_info" not in calls
    assert people(made) == [("boss", "Archive"), ("boss", "Finance"), ("boss", "Legal")]
    assert {e.permissions_from for e in made.entries} == {"administrator"}


async def test_user_and_workspace_together_narrow_to_both(tmp_path: Path) -> None:
    async with engine_site(SEED, tmp_path) as site:
        made, calls = await report(site, users=("alice",), workspaces=("Finance",))
    assert people(made) == [("alice", "Finance")]
    assert calls["user_info"] == 1


@pytest.mark.parametrize(
    ("users", "workspaces", "says"),
    [
        (("nobody",), (), '--user "nobody" names no user on the site.'),
        ((), ("Nothing*",), '--workspace "Nothing*" names no workspace on the site.'),
        (("nobody",), ("Legal",), '--user "nobody" names no user on the site.'),
    ],
)
async def test_a_name_that_names_nothing_is_an_error(
    tmp_path: Path, users: tuple[str, ...], workspaces: tuple[str, ...], says: str
) -> None:
    async with engine_site(SEED, tmp_path) as site:
        with pytest.raises(NothingSelected) as raised:
            await report(site, users, workspaces)
    assert raised.value.message == says and raised.value.exit_code == EXIT_ERROR


async def test_a_site_that_refuses_workspace_info_is_said_to(tmp_path: Path) -> None:
    settings = SandboxSettings(refuse_workspace_info=True)
    async with engine_site(SEED, tmp_path, settings) as site:
        whole, _ = await report(site)
        legal, _ = await report(site, workspaces=("Legal",))
    assert any("refuses workspace_info" in note for note in whole.notes)
    assert {e.via for e in whole.entries} == {"administrator"}  # members could not be read
    assert any('members of "Legal" could not be read' in note for note in legal.notes)
