"""The operator jobs of both templates, run as a person runs them: no laptop, no database
access, only "Run workflow" with inputs (GitHub) or a manual job played with variables on a
pipeline run by hand (GitLab), in the protected ``site`` environment.

Each runbook of docs/ci.md is played here: adopt what exists, move a record (``state mv``),
drop a record of what is gone (``state forget``), apply a part of the manifest
(``targeted-apply``); onboarding an empty site is in tests/test_ci_scenarios.py. Inputs are
checked before anything runs, and never read as shell code.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.ci_pipelines import FORGES, Team, TeamFactory, ci_tool, make_team
from tests.support.loopback import EXAMPLE_SITE

__all__ = ["ci_tool", "make_team"]  # fixtures
EXAMPLE = yaml.safe_load(EXAMPLE_SITE.read_text(encoding="utf-8"))
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.parametrize("forge", FORGES)]


def _manifest(**changes: Any) -> str:
    return yaml.safe_dump({**EXAMPLE, **changes}, sort_keys=False)


def _managed_site(make_team: TeamFactory, forge: str) -> Team:
    """A team whose manifest is applied and recorded, as a merge leaves it: the runbooks
    start there (the merge's own jobs are tests/test_ci_templates.py's, on both forges)."""
    team = make_team(forge)
    team.apply_from_main()
    return team


def test_adopt_takes_what_exists_under_management_without_changing_the_site(
    make_team: TeamFactory, forge: str
) -> None:
    legacy = {"name": "Legacy Scans", "users": ["oscar", "walter"], "permissions": None}
    team = make_team(
        forge,
        manifest=_manifest(
            workspaces=[*EXAMPLE["workspaces"], legacy],
            groups=[*EXAMPLE["groups"], {"name": "old-contractors", "members": ["mallory"]}],
        ),
    )
    before = team.site.state()
    adopted = team.operate("adopt")
    assert adopted.exit_code == EXIT_OK, adopted.log
    assert "Adopted 2 objects" in adopted.log
    assert team.site.state() == before
    records = team.records()
    assert records is not None
    assert records["workspaces"]["Legacy Scans"]["origin"] == "adopted"
    assert records["groups"]["old-contractors"]["origin"] == "adopted"


def test_state_mv_moves_a_record_so_a_rename_deletes_nothing(
    make_team: TeamFactory, forge: str
) -> None:
    team = _managed_site(make_team, forge)
    legal = team.site.workspaces()["Legal"]["id"]
    team.edit("name: Legal\n", "name: Counsel\n")  # renamed without `previously:`
    review = team.pull_request(11)
    assert '+ workspace "Counsel"' in team.forge_api.comments[11][0]["body"], review.log

    moved = team.operate("state-mv", kind="workspace", name="Legal", new_name="Counsel")
    assert moved.exit_code == EXIT_OK, moved.log
    records = team.records()
    assert records is not None and records["workspaces"]["Counsel"]["id"] == legal
    assert "Legal" not in records["workspaces"]
    team.site.control("calls/reset", {})
    merged = team.merge()
    assert merged.plan.exit_code == EXIT_OK, merged.plan.log
    calls = team.site.control("calls")["methods"]
    assert "workspace_add" not in calls and "workspace_delete" not in calls


def test_state_forget_drops_the_record_of_a_workspace_deleted_by_hand(
    make_team: TeamFactory, forge: str
) -> None:
    team = _managed_site(make_team, forge)
    marketing = team.site.workspaces()["Marketing"]["id"]
    team.site.api(lambda client: client.workspace_delete(marketing))  # by hand, for good
    kept = [ws for ws in EXAMPLE["workspaces"] if ws["name"] != "Marketing"]
    team.manifest.write_text(_manifest(workspaces=kept), encoding="utf-8")  # and undeclared
    reported = team.nightly()
    assert reported.exit_code == EXIT_CHANGES and "Marketing" in reported.log + "".join(
        path.read_text() for path in team.root.glob("run-*/artifacts/*/drift.md")
    )

    forgot = team.operate("state-forget", kind="workspace", name="Marketing")
    assert forgot.exit_code == EXIT_OK, forgot.log
    records = team.records()
    assert records is not None and "Marketing" not in records["workspaces"]
    nightly = team.nightly()
    assert nightly.exit_code == EXIT_OK, nightly.log


def test_a_targeted_apply_changes_only_what_its_inputs_name(
    make_team: TeamFactory, forge: str
) -> None:
    team = _managed_site(make_team, forge)
    workspaces = [
        {**ws, "users": [*ws["users"], "oscar"]} if ws["name"] in ("Finance", "Legal") else ws
        for ws in EXAMPLE["workspaces"]
    ]
    team.manifest.write_text(_manifest(workspaces=workspaces), encoding="utf-8")
    done = team.operate("targeted-apply", target=" Finance , Legal,", exclude="workspace:Legal")
    assert done.exit_code == EXIT_OK, done.log
    members = {name: ws["members"] for name, ws in team.site.workspaces().items()}
    oscar = 1042
    assert oscar in members["Finance"] and oscar not in members["Legal"]


def test_a_targeted_apply_whose_exclude_names_nothing_fails_and_deletes_nothing(
    make_team: TeamFactory, forge: str
) -> None:
    """Issue 42: a one-letter typo in `exclude`, meant to keep Marketing from prune, was only
    noted, and the job deleted Marketing. The tool refuses it; the job fails with its message."""
    team = _managed_site(make_team, forge)
    kept = [ws for ws in EXAMPLE["workspaces"] if ws["name"] != "Marketing"]
    pruning = {**EXAMPLE["policy"], "prune": True}
    team.manifest.write_text(_manifest(workspaces=kept, policy=pruning), encoding="utf-8")
    typo = team.operate("targeted-apply", exclude="workspace:Markting")
    assert typo.exit_code == EXIT_ERROR, typo.log
    assert '--exclude "workspace:Markting" names no workspace, group or user' in typo.log
    assert "targeted-apply failed (exit 1): see its message above." in typo.log
    assert "Marketing" in team.site.workspaces()


def test_operator_inputs_are_checked_and_never_run_as_shell(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    missing = team.operate("state-mv", kind="group", name="auditors")
    assert missing.exit_code == EXIT_ERROR and "state-mv needs the" in missing.log
    assert ("new_name" if forge == "github" else "RECORD_NEW_NAME") in missing.log
    nothing = team.operate("targeted-apply")
    assert nothing.exit_code == EXIT_ERROR and "needs" in nothing.log
    control = team.operate("state-forget", kind="user", name="nina\nrm -rf /")
    assert control.exit_code == EXIT_ERROR and "control character" in control.log
    hostile = team.operate("state-forget", kind="workspace", name="$(touch pwned); `touch pwned`")
    assert hostile.exit_code == EXIT_ERROR, hostile.log
    assert 'No workspace "$(touch pwned); `touch pwned`" is recorded' in hostile.log
    assert not list(team.root.glob("run-*/runners/*/work/pwned"))
    assert team.site.workspaces().keys() == {"Legacy Scans"}  # nothing ran against the site
