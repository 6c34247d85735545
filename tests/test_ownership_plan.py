"""Ownership against a site (issue 46, items 2, 4 and 6): the example directory of a central
file and two teams' files validated, planned and applied against the sandbox; each change
names whose approval it needs; a creation only a team's file asks for is refused, --force or
not; a team file that oversteps is refused at its place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from reconciler.manifest import load_manifest
from reconciler.ownership.owners import owners_of_workspace
from tests.support.loopback import REPO, LoopbackSite

EXAMPLE = REPO / "examples" / "teams"
IT, FINANCE = "@acme/it", "@acme/finance-leads"
MARKETING = ("@acme/marketing-leads", "mona@acme.example")


@pytest.fixture
def teams(site: LoopbackSite) -> Path:
    """The example directory, copied into the site's workdir as ``acme/``."""
    shutil.copytree(EXAMPLE, site.workdir / "acme")
    return site.workdir / "acme"


def _owners(plan_json: str) -> dict[tuple[str, str], list[str]]:
    plan = json.loads(plan_json)
    return {(c["kind"], c["name"]): c.get("owners", []) for c in plan["changes"]}


def test_the_example_directory_validates_with_its_teams_files(site: LoopbackSite, teams: Path):
    result = site.run("validate", "acme/")
    assert result.returncode == EXIT_OK, result.output
    assert result.stdout.strip() == "acme/: valid (4 workspaces, 1 group)"


def test_each_change_names_whose_approval_it_needs(site: LoopbackSite, teams: Path) -> None:
    plan = site.run("plan", "acme/", "--format", "json")
    assert plan.returncode == EXIT_OK, plan.output
    assert _owners(plan.stdout) == {
        ("group", "finance-approvers"): [IT, FINANCE],  # created: the central file declares it
        ("workspace", "Finance"): [IT, FINANCE],
        ("workspace", "Marketing"): [IT, *MARKETING],
        ("workspace", "Campaigns 2025"): [IT, *MARKETING],
        ("workspace", "Operations"): [IT],
    }
    text = site.run("plan", "acme/")
    assert f'+ workspace "Finance"\n    approval: {IT}, {FINANCE}\n' in text.stdout
    markdown = site.run("plan", "acme/", "--format", "markdown")
    assert f"    approval: {IT}, {', '.join(MARKETING)}" in markdown.stdout

    assert site.run("apply", "acme/", "--auto-approve").returncode == EXIT_OK
    finance = teams / "teams" / "finance.yaml"
    finance.write_text(
        finance.read_text().replace("[alice, bob, erin]", "[alice, bob, erin, ivan]")
    )
    site_file = teams / "site.yaml"
    site_file.write_text(site_file.read_text().replace("[frank, grace]", "[frank]"))
    changed = site.run("plan", "acme/", "--format", "json")
    assert _owners(changed.stdout) == {
        ("workspace", "Finance"): [FINANCE],  # its users are the team's alone to change
        ("workspace", "Operations"): [IT],
    }


def test_a_plan_of_a_manifest_without_ownership_names_no_owners(site: LoopbackSite) -> None:
    plan = json.loads(site.run("plan", "site.yaml", "--format", "json").stdout)
    assert plan["changes"] and all("owners" not in change for change in plan["changes"])


def test_a_workspace_only_a_teams_file_declares_is_not_created_even_with_force(
    site: LoopbackSite, teams: Path
) -> None:
    assert site.run("apply", "acme/", "--auto-approve").returncode == EXIT_OK
    finance = teams / "teams" / "finance.yaml"
    finance.write_text(
        finance.read_text().replace(
            "groups:", "  - name: Finance EU\n    users: [alice]\n\ngroups:"
        )
    )
    assert site.run("validate", "acme/").returncode == EXIT_OK  # a name of its globs

    plan = site.run("plan", "acme/")
    refusal = (
        'it creates workspace "Finance EU", which the site does not have and only a team\'s '
        "file declares (teams/finance.yaml): only @acme/it may create it "
        "(ownership.teams[0].may_set has no create), which --force never overrides"
    )
    assert "Apply will refuse this plan:" in plan.stdout and refusal in plan.stdout
    refused = site.run("apply", "acme/", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    forced = site.run("apply", "acme/", "--auto-approve", "--force")
    assert "Finance EU" not in site.workspaces()
    assert forced.returncode != EXIT_OK
    assert "refused at the moment it was to run: " + refusal in forced.output

    site_file = teams / "site.yaml"  # the central owners declare it: their approval
    site_file.write_text(
        site_file.read_text().replace(
            "  - name: Marketing\n", "  - name: Finance EU\n  - name: Marketing\n"
        )
    )
    assert site.run("apply", "acme/", "--auto-approve").returncode == EXIT_OK
    assert site.workspaces()["Finance EU"]["members"] == [1001]


def test_a_team_file_that_oversteps_is_refused_at_its_place(site: LoopbackSite, teams: Path):
    marketing = teams / "teams" / "marketing.yaml"
    marketing.write_text(
        "workspaces:\n"
        "  - name: Marketing\n"
        "    users: [carol, dave]\n"
        "    permissions: {delete_files: true, upload_files: true}\n"
        "  - name: Payroll\n"
        "    users: [mallory]\n"
    )
    result = site.run("validate", "acme/")
    assert result.returncode == EXIT_ERROR
    assert result.stdout.splitlines()[:2] == [
        "acme/teams/marketing.yaml:4:5: error: this file may not set `permissions` of "
        "workspace 'Marketing': only @acme/it may (ownership.teams[1].may_set: users) (at "
        "workspaces[0].permissions) — set it in a central file, or ask @acme/it to add "
        "`permissions` to may_set",
        "acme/teams/marketing.yaml:5:5: error: this file may not declare workspace 'Payroll': "
        "only @acme/it may (ownership.teams[1].workspaces: Marketing*, Campaigns*) (at "
        "workspaces[1].name) — declare it in a central file, or ask @acme/it to add its name "
        "to the team's workspaces",
    ]
    assert site.run("plan", "acme/").returncode == EXIT_ERROR  # the plan refuses it too


def test_the_access_report_names_each_workspaces_owners(site: LoopbackSite, teams: Path) -> None:
    assert site.run("apply", "acme/", "--auto-approve").returncode == EXIT_OK
    report = site.run("access", "acme/", "--format", "json")
    assert report.returncode == EXIT_OK, report.output
    owners = {ws["name"]: ws.get("owners") for ws in json.loads(report.stdout)["workspaces"]}
    assert owners["Finance"] == [FINANCE, IT]  # its users are the team's, its settings IT's
    assert owners["Campaigns 2025"] == [*MARKETING, IT]
    assert owners["Operations"] == [IT]
    assert owners["Legacy Scans"] == [IT]  # not in the manifest: the central owners'
    text = site.run("access", "acme/").stdout
    assert f"notification override: none; owners: {FINANCE}, {IT}" in text

    plain = json.loads(site.run("access", "--format", "json").stdout)  # no manifest given
    assert all("owners" not in ws for ws in plain["workspaces"])


def test_owners_of_workspace_is_one_answer_for_reviewers() -> None:
    desired = load_manifest([EXAMPLE]).desired
    assert desired is not None
    assert owners_of_workspace(desired, "FINANCE") == (FINANCE, IT)  # as the site compares
    assert owners_of_workspace(desired, "Operations") == (IT,)
    assert owners_of_workspace(desired, "Nowhere") == (IT,)
    without = load_manifest([REPO / "examples" / "site.yaml"]).desired
    assert without is not None and owners_of_workspace(without, "Finance") == ()


def test_review_start_assigns_each_workspaces_owners_as_its_reviewers(
    site: LoopbackSite, teams: Path
) -> None:
    """Issue 44 on issue 46: a review's reviewers are the workspace's owners, else
    ``policy.reviewers``."""
    from reconciler.review.files import read_review

    assert site.run("apply", "acme/", "--auto-approve").returncode == EXIT_OK
    started = site.run("review", "start", "acme/", "-o", "q1.json")
    assert started.returncode == EXIT_OK, started.output
    rows = read_review(site.workdir / "q1.json").rows
    reviewer = {row.facts["workspace"]: row.facts["reviewer"] for row in rows}
    assert reviewer["Finance"] == f"{FINANCE}, {IT}"
    assert reviewer["Operations"] == IT
