"""The shipped CI templates do what docs/ci.md says each job does on each exit code.

``ci/github/site-reconciler.yml`` and ``ci/gitlab/site-reconciler.gitlab-ci.yml`` are read as
the forges read them, the jobs an event starts are chosen by the templates' own conditions,
and each job runs unedited on a fresh runner (tests/support/ci_pipelines.py): the tool
installed by its own install step, the site a sandbox on loopback, the records in a real
PostgreSQL. Every exit code the docs' table promises is reached: 0 and 2 of plan and drift,
3 (a used plan) and 4 (records locked elsewhere) of apply, 1 of a broken manifest.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from reconciler.api.config import check_site_url
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_LOCKED, EXIT_OK, EXIT_REFUSED
from reconciler.state.backend import Holder
from reconciler.state.locate import open_records, parse_location
from tests.support.ci_github import load_github_workflow
from tests.support.ci_gitlab import environment_name, gitlab_job, load_gitlab_template
from tests.support.ci_pipelines import (
    FORGES,
    OPERATIONS,
    Team,
    TeamFactory,
    ci_tool,
    make_team,
)
from tests.support.ci_runs import VERSION
from tests.support.loopback import REPO

__all__ = ["ci_tool", "make_team"]  # fixtures
MARKER = re.compile(r"<!-- site-reconciler:plan site=\S+ records=\w+ part=(\d+)/(\d+) -->\n")
FAILED = "<!-- site-reconciler:plan failed -->"
WORKFLOW = load_github_workflow()
TEMPLATE = load_gitlab_template()
INSTALL_NAME = "Install site-reconciler"


def _install_scripts() -> list[str]:
    github = [step["run"] for job in WORKFLOW["jobs"].values() for step in job["steps"]
              if step.get("name") == INSTALL_NAME]  # fmt: skip
    return [*github, *gitlab_job(TEMPLATE, ".reconciler")["before_script"]]


def test_every_job_installs_the_tool_with_one_script_from_one_documented_variable() -> None:
    scripts = _install_scripts()
    assert len(scripts) == len(WORKFLOW["jobs"]) + 1  # every GitHub job, GitLab's base job
    assert len(set(scripts)) == 1, "the install steps differ"
    assert "$RECONCILER_INSTALL" in scripts[0] and "RECONCILER_VERSION" not in scripts[0]
    default = f"site-reconciler=={VERSION}"
    assert (
        WORKFLOW["env"]["RECONCILER_INSTALL"]
        == f"${{{{ vars.RECONCILER_INSTALL || '{default}' }}}}"
    )
    assert TEMPLATE["variables"]["RECONCILER_INSTALL"] == default
    for job in TEMPLATE:
        if job.startswith("reconciler:"):
            assert "before_script" not in TEMPLATE[job], f"{job} replaces the install"


def test_the_workflow_is_triggered_as_documented() -> None:
    assert set(WORKFLOW["on"]) == {"pull_request", "push", "schedule", "workflow_dispatch"}
    assert WORKFLOW["permissions"] == {"contents": "read"}  # write only where a job needs it
    assert WORKFLOW["jobs"]["apply"]["needs"] == "merge-plan"
    assert WORKFLOW["jobs"]["apply"]["environment"] == "site"  # reviewers can gate it


def test_the_gitlab_template_tolerates_only_drift() -> None:
    assert gitlab_job(TEMPLATE, "reconciler:drift")["allow_failure"] == {"exit_codes": [2]}
    assert "allow_failure" not in gitlab_job(TEMPLATE, "reconciler:apply")
    assert gitlab_job(TEMPLATE, "reconciler:apply")["needs"] == ["reconciler:merged-plan"]


def test_every_operator_job_waits_behind_the_protected_site_environment() -> None:
    workflow = WORKFLOW
    dispatch = workflow["on"]["workflow_dispatch"]["inputs"]
    assert dispatch["operation"]["options"] == ["drift", *OPERATIONS]
    assert workflow["jobs"]["operate"]["environment"] == "site"
    template = TEMPLATE
    for operation in OPERATIONS:
        job = gitlab_job(template, f"reconciler:{operation}")
        assert environment_name(job) == "site" and job["resource_group"] == "site"
        assert [rule.get("when") for rule in job["rules"]] == ["manual"]
        assert job["variables"] == {"OPERATION": operation}


def test_every_template_is_valid_yaml_without_tabs() -> None:
    for path in (REPO / "ci").rglob("*.yml"):
        text = path.read_text(encoding="utf-8")
        assert "\t" not in text, path
        assert isinstance(yaml.safe_load(text), dict), path


@pytest.mark.parametrize("forge", FORGES)
@pytest.mark.e2e
@pytest.mark.slow
def test_a_pull_request_gets_one_plan_comment_updated_on_each_push(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    first = team.pull_request(7)
    assert first.exit_code == EXIT_OK, first.log
    assert "The plan has changes" in first.log
    (comment,) = team.forge_api.comments[7]
    found = MARKER.match(comment["body"])
    assert found and found.groups() == ("1", "1"), comment["body"][:200]
    assert comment["body"][found.end() :].startswith("### site-reconciler plan")
    assert "14 to create" in comment["body"]
    kept = next(team.root.glob("run-*/artifacts/*/comments/comment-1.md"))
    assert kept.read_text() == comment["body"]
    assert not list(team.root.glob("run-*/artifacts/**/plan.json"))  # a plan for review only

    team.edit("name: Payments", "name: Payments-2")  # a second push to the pull request
    second = team.pull_request(7)
    assert second.exit_code == EXIT_OK, second.log
    (updated,) = team.forge_api.comments[7]  # the same comment, not a new one
    assert updated["id"] == comment["id"] and "Payments-2" in updated["body"]
    edits = [r for r in team.forge_api.requests if r.split()[0] in ("PATCH", "PUT")]
    assert len(edits) == 1 and edits[0].endswith(f"/{comment['id']}")


@pytest.mark.e2e
@pytest.mark.slow
def test_a_broken_manifest_fails_the_plan_job_and_says_so_in_the_comment(
    make_team: TeamFactory,
) -> None:
    team = make_team("github")
    team.edit("version: 1", "version: 99")
    run = team.pull_request(8)
    assert run.exit_code == EXIT_ERROR
    assert "::error::reconciler plan failed (exit 1)" in run.log
    (comment,) = team.forge_api.comments[8]
    assert comment["body"] == f"{FAILED}\n**reconciler plan failed (exit 1)**: see the job's log.\n"
    assert run.steps_run[-1] == "Verdict"

    team.edit("version: 99", "version: 1")  # the fix is pushed: the plan replaces the note
    fixed = team.pull_request(8)
    assert fixed.exit_code == EXIT_OK, fixed.log
    (plan,) = team.forge_api.comments[8]
    assert MARKER.match(plan["body"]) and "14 to create" in plan["body"]
    assert f"DELETE /repos/acme/site/issues/comments/{comment['id']}" in team.forge_api.requests


def _many_workspaces(team: Team, count: int) -> None:
    manifest = yaml.safe_load(team.manifest.read_text(encoding="utf-8"))
    manifest["workspaces"] = [
        {"name": f"Project {n:04d}", "users": ["alice", "bob", "carol", "dave"]}
        for n in range(count)
    ]
    manifest.pop("teams", None)
    team.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")


@pytest.mark.e2e
@pytest.mark.slow
def test_a_long_plan_is_one_comment_a_part_and_parts_that_go_away_are_deleted(
    make_team: TeamFactory,
) -> None:
    team = make_team("github")
    _many_workspaces(team, 600)
    long = team.pull_request(9)
    assert long.exit_code == EXIT_OK, long.log
    parts = team.forge_api.comments[9]
    numbers = [MARKER.match(part["body"]).groups() for part in parts]  # type: ignore[union-attr]
    total = str(len(parts))
    assert len(parts) >= 2 and numbers == [(str(n), total) for n in range(1, len(parts) + 1)]
    assert all(len(part["body"]) <= 65_535 for part in parts)

    _many_workspaces(team, 3)  # the next push plans far less: one part
    short = team.pull_request(9)
    assert short.exit_code == EXIT_OK, short.log
    (only,) = team.forge_api.comments[9]
    assert only["id"] == parts[0]["id"]  # part 1 edited, the others deleted
    assert MARKER.match(only["body"]).groups() == ("1", "1")  # type: ignore[union-attr]


@pytest.mark.parametrize("forge", FORGES)
@pytest.mark.e2e
@pytest.mark.slow
def test_a_merge_applies_its_plan_once_waiting_out_a_lock_with_4_and_refusing_reuse_with_3(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    merge = team.start_merge()
    assert merge.plan().exit_code == EXIT_OK
    location = parse_location(team.settings["site"]["RECONCILER_STATE"], base_dir=team.root)
    records = open_records(location, check_site_url(team.site.url))
    with records, records.lock(Holder.current("apply")):  # another runner holds the lock
        locked = merge.apply(LOCK_TIMEOUT="1")
    assert locked.exit_code == EXIT_LOCKED, locked.log
    assert "locked by another" in locked.log and "waited 1 s" in locked.log
    assert "Payments" not in team.site.workspaces()

    retried = merge.apply()
    assert retried.exit_code == EXIT_OK, retried.log
    assert "Applied: the site matches the merged manifest." in retried.log
    report = sorted(team.root.glob("run-*/artifacts/*/apply.json"))[-1]
    assert "Payments" in json.dumps(json.loads(report.read_text()))  # every action
    assert "Payments" in team.site.workspaces()
    assert team.records() is not None  # in PostgreSQL, not on the runner
    assert not list(team.root.glob("run-*/runners/*/work/**/.reconciler"))

    again = merge.apply()  # the same plan once more (a re-run job)
    assert again.exit_code == EXIT_REFUSED, again.log
    assert "Refused for safety (exit 3)" in again.log


@pytest.mark.parametrize("forge", FORGES)
@pytest.mark.e2e
@pytest.mark.slow
def test_the_nightly_drift_passes_in_sync_fails_on_drift_and_tells_the_webhook_news_once(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    assert team.merge().applied
    in_sync = team.nightly()
    assert in_sync.exit_code == EXIT_OK, in_sync.log
    assert "In sync" in in_sync.log

    team.edit("name: Payments", "name: Payments-2")  # the site no longer matches
    drifted = team.nightly()
    assert drifted.exit_code == EXIT_CHANGES, drifted.log
    assert "drifted" in drifted.log
    report = sorted(team.root.glob("run-*/artifacts/*/drift.md"))[-1]  # this run's artefact
    assert "Payments-2" in report.read_text()
    # the webhook heard the first report (in sync, the unmanaged objects), then the drift
    first, told = team.forge_api.hooks
    assert first["in_sync"] is True and told["in_sync"] is False
    assert "Payments-2" in told["text"] and "Payments-2" not in first["text"]
    again = team.nightly()
    assert again.exit_code == EXIT_CHANGES and len(team.forge_api.hooks) == 2  # nothing new
    if forge == "github":
        assert "::warning::The site has drifted" in drifted.log
        assert "drift report" in drifted.summary
        tolerated = team.nightly(FAIL_ON_DRIFT="false")
        assert tolerated.exit_code == EXIT_OK, tolerated.log
    else:
        assert drifted.allowed_to_fail  # orange, not red
