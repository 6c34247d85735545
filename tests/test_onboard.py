"""export and adopt: bring an existing site under management (real CLI, real sandbox)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

from reconciler.core.records import Records
from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.manifest import load_manifest
from reconciler.manifest.export import export_site
from reconciler.model import LiveGroup, LiveSite, LiveUser, LiveWorkspace
from reconciler.render.manifest import render_manifest
from reconciler.spec import NOTIFICATION_KEYS, PERMISSION_KEYS
from tests.support.loopback import ADMIN_KEY, ADMIN_SECRET, loopback_site

SAFE_PERMISSIONS = sorted(PERMISSION_KEYS)


def hand_made_site(workspaces: int = 60, groups: int = 12, users: int = 40) -> dict[str, Any]:
    """A seed for a site built by hand over the years: overrides, memberships and groups."""
    rng = random.Random(2026)
    people = [
        {"id": 2000 + n, "username": f"user{n:02}", "email": f"user{n:02}@acme.example"}
        for n in range(users)
    ]
    admin = {
        "id": 1,
        "username": "admin",
        "email": "admin@acme.example",
        "admin": True,
        "api_key": ADMIN_KEY,
        "api_secret": ADMIN_SECRET,
    }
    spaces = []
    for n in range(workspaces):
        entry: dict[str, Any] = {
            "name": f"Project {n:02}",
            "root_access": rng.random() < 0.7,
            "users": [p["username"] for p in rng.sample(people, rng.randint(0, 8))],
        }
        if n % 3 == 0:
            entry["permissions"] = {flag: True for flag in rng.sample(SAFE_PERMISSIONS, 3)}
        if n % 4 == 0:
            entry["notifications"] = {flag: True for flag in sorted(NOTIFICATION_KEYS)[: 1 + n % 2]}
        spaces.append(entry)
    teams = [
        {"name": f"team-{n:02}", "members": [p["username"] for p in rng.sample(people, 4)]}
        for n in range(groups)
    ]
    return {"users": [admin, *people], "workspaces": spaces, "groups": teams}


def test_export_round_trips_and_adopt_enables_prune(tmp_path: Path) -> None:
    with loopback_site(tmp_path, seed=hand_made_site()) as site:
        exported = site.run("export", "-o", "site.yaml")
        assert exported.returncode == EXIT_OK, exported.stderr
        assert load_manifest([tmp_path / "site.yaml"]).desired is not None
        text = (tmp_path / "site.yaml").read_text()
        assert "not reported by the site" in text  # root_access could not be read
        assert "cannot report group members" in text

        plan = site.run("plan", "site.yaml", "--detailed-exitcode")
        assert plan.returncode == EXIT_OK, plan.stdout
        assert "No changes." in plan.stdout

        adopted = site.run("adopt", "site.yaml")
        assert adopted.returncode == EXIT_OK, adopted.stderr
        assert "Adopted 72 objects" in adopted.stdout
        assert site.run("plan", "site.yaml", "--detailed-exitcode").returncode == EXIT_OK

        document = yaml.safe_load(text)
        document["workspaces"] = [w for w in document["workspaces"] if w["name"] != "Project 07"]
        document["policy"] = {"prune": True}
        site.write_manifest("site.yaml", yaml.safe_dump(document))
        plan = site.run("plan", "site.yaml", "--detailed-exitcode")
        assert plan.returncode == EXIT_CHANGES
        assert 'workspace "Project 07"' in plan.stdout and "will be DELETED" in plan.stdout
        assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
        assert "Project 07" not in site.workspaces()


def test_export_to_a_directory_and_adopt_in_one_go(tmp_path: Path) -> None:
    with loopback_site(tmp_path, seed=hand_made_site(workspaces=8, groups=3)) as site:
        result = site.run("export", "-o", "live/", "--adopt")
        assert result.returncode == EXIT_OK, result.stderr
        files = sorted(p.name for p in (tmp_path / "live").glob("*.yaml"))
        assert files[:2] == ["groups.yaml", "site.yaml"] and len(files) == 10
        assert "Adopted 11 objects" in result.stdout
        assert site.run("plan", "live", "--detailed-exitcode").returncode == EXIT_OK


def test_export_reports_duplicate_live_names(tmp_path: Path) -> None:
    seed = hand_made_site(workspaces=2, groups=0)
    seed["workspaces"].append({"name": "Project 01", "users": []})
    seed["settings"] = {"allow_duplicate_workspace_names": True}
    with loopback_site(tmp_path, seed=seed) as site:
        result = site.run("export", "-o", "site.yaml")
        assert result.returncode == EXIT_OK
        assert result.stderr.count("another workspace has the same name") == 2
        assert load_manifest([tmp_path / "site.yaml"]).desired is not None


def test_names_that_cannot_round_trip_are_reported_not_changed() -> None:
    live = LiveSite(
        users=(LiveUser(5, "", "ghost@acme.example"), LiveUser(6, "ann", "ann@acme.example")),
        workspaces=(
            LiveWorkspace(
                1, "Sales, EMEA", "/Sales,_EMEA_workspace/", frozenset(), None, None, True
            ),
            LiveWorkspace(
                2, "X" * 41, "/" + "X" * 41 + "_workspace/", frozenset(), None, None, True
            ),
            LiveWorkspace(3, "Ops", "/Ops_workspace/", frozenset({5, 6}), None, None, True),
        ),
        groups=(LiveGroup(9, "g"),),
        groups_listed=True,
    )
    result = export_site(live, Records(site="https://acme.example.net"), "https://acme.example.net")
    problems = "\n".join(result.problems)
    assert 'workspace "Sales, EMEA" (id 1) was not exported: its name contains a comma' in problems
    assert "its name is 41 characters long; at most 40 are allowed" in problems
    assert 'user 5 in workspace "Ops" has no username' in problems
    text = render_manifest(result)
    document = yaml.safe_load(text)
    assert [w["name"] for w in document["workspaces"]] == ["Ops"]
    assert document["workspaces"][0]["users"] == [5, "ann"]
    assert "# not exported: Sales, EMEA (id 1)" in text


def test_a_guess_written_by_export_is_never_recorded_as_a_fact(tmp_path: Path) -> None:
    """export writes root_access: true as a guess; after export --adopt and a correction to
    false, the plan must not claim a recorded difference (which --replace would "fix" by
    destroying every file): root_access stays unobservable."""
    with loopback_site(tmp_path, seed=hand_made_site(workspaces=3, groups=1)) as site:
        assert site.run("export", "-o", "site.yaml", "--adopt").returncode == EXIT_OK
        text = (tmp_path / "site.yaml").read_text()
        assert "root_access: true    # not reported by the site" in text
        site.write_manifest("site.yaml", text.replace("root_access: true", "root_access: false"))
        plan = site.run("plan", "site.yaml", "--detailed-exitcode")
        assert plan.returncode == EXIT_OK, plan.stdout
        assert "needs replacement" not in plan.stdout
        assert "root_access: the site does not report it" in plan.stdout


def test_export_users_round_trips_and_adopt_records_them(tmp_path: Path) -> None:
    with loopback_site(tmp_path, seed=hand_made_site(workspaces=2, groups=1)) as site:
        exported = site.run("export", "-o", "site.yaml", "--users", "--adopt")
        assert exported.returncode == EXIT_OK, exported.stderr
        document = yaml.safe_load((tmp_path / "site.yaml").read_text())
        assert {"username": "admin", "email": "admin@acme.example"}.items() <= (
            document["users"][0].items()
        )
        assert "user" in exported.stdout and "adopted" in exported.stdout
        plan = site.run("plan", "site.yaml", "--detailed-exitcode")
        assert plan.returncode == EXIT_OK, plan.stdout
        shown = site.run("state", "show", "site.yaml")
        assert '"origin": "adopted"' in shown.stdout and '"admin"' in shown.stdout
