"""Least privilege in the shipped CI templates, checked by the tools a security review runs and
by running the jobs.

zizmor (the default persona, offline) finds nothing in the GitHub workflow, hadolint nothing
of warning or error in the Dockerfile, and check-jsonschema validates both templates against
the forges' schemas (all three from the test extras, offline). Every action is pinned to a
commit with its version beside it, and no checkout keeps the job's token. Secrets live in
environments only, and the pull-request plan holds the least that can plan: no plan key, a
database role that can only read (the API has no read-only administrator: reading
workspaces and users takes an administrator's key, so that is what it holds). The comment
step touches only comments the pipeline's own identity wrote.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.state.locate import parse_location
from tests.support.ci_github import GITHUB_WORKFLOW, load_github_workflow
from tests.support.ci_gitlab import (
    GITLAB_TEMPLATE,
    environment_name,
    gitlab_job,
    load_gitlab_template,
)
from tests.support.ci_pipelines import FORGES, OPERATIONS, TeamFactory, ci_tool, make_team
from tests.support.forge_api import Author
from tests.support.loopback import REPO

__all__ = ["ci_tool", "make_team"]  # fixtures
WORKFLOW = load_github_workflow()
TEMPLATE = load_gitlab_template()
FAILED = "<!-- site-reconciler:plan failed -->"


def _tool(name: str) -> str:
    """A command of the test extras, beside this interpreter (or on PATH)."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is missing: install the test extras (pip install -e '.[test]')"
    return found


def test_zizmor_finds_nothing_in_the_workflow() -> None:
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-config", "--format", "json", str(GITHUB_WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = json.loads(done.stdout)
    summary = [(f["ident"], f["determinations"]["severity"]) for f in findings]
    assert summary == [], summary
    assert done.returncode == 0, done.stderr


def test_hadolint_finds_no_warning_in_the_dockerfile() -> None:
    done = subprocess.run(
        [_tool("hadolint"), "--format", "json", "--no-fail", str(REPO / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = json.loads(done.stdout)
    serious = [
        f"{f['code']} {f['message']}" for f in findings if f["level"] in ("warning", "error")
    ]
    assert serious == []


@pytest.mark.parametrize(
    ("schema", "template"),
    [("vendor.github-workflows", GITHUB_WORKFLOW), ("vendor.gitlab-ci", GITLAB_TEMPLATE)],
)
def test_the_templates_are_valid_for_their_forge(schema: str, template: Path) -> None:
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", schema, str(template)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_action_is_pinned_to_a_commit_with_its_version_beside_it() -> None:
    uses = re.findall(r"^\s*-?\s*uses: (.*)$", GITHUB_WORKFLOW.read_text(), re.MULTILINE)
    assert uses
    for line in uses:
        assert re.fullmatch(r"actions/[\w-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+", line), line
    checkouts = [
        step
        for job in WORKFLOW["jobs"].values()
        for step in job["steps"]
        if step.get("uses", "").startswith("actions/checkout@")
    ]
    assert len(checkouts) == len(WORKFLOW["jobs"])
    assert all(step["with"]["persist-credentials"] is False for step in checkouts)


def test_secrets_live_in_environments_and_the_review_plan_has_no_plan_key() -> None:
    assert "secrets." not in json.dumps(WORKFLOW["env"])
    environments = {}
    for name, job in WORKFLOW["jobs"].items():
        if "secrets." in json.dumps(job):
            environments[name] = job["environment"]
    assert environments == {
        "plan": "site-review",
        "merge-plan": "site-main",
        "drift": "site-main",
        "apply": "site",
        "operate": "site",
    }
    review = WORKFLOW["jobs"]["plan"]
    assert "RECONCILER_PLAN_KEY" not in json.dumps(review)
    assert all(" -o " not in step.get("run", "") for step in review["steps"])
    writes = {name: job.get("permissions", {}) for name, job in WORKFLOW["jobs"].items()}
    assert {name for name, p in writes.items() if "write" in p.values()} == {"plan"}

    gitlab = {
        name: environment_name(gitlab_job(TEMPLATE, name))
        for name in TEMPLATE
        if name.startswith("reconciler:")
    }
    assert gitlab == {
        "reconciler:plan": "site-review",
        "reconciler:review-check": None,  # the review file alone: no secrets
        "reconciler:merged-plan": "site-main",
        "reconciler:drift": "site-main",
        "reconciler:apply": "site",
        **{f"reconciler:{op}": "site" for op in OPERATIONS},
    }
    assert " -o " not in "\n".join(gitlab_job(TEMPLATE, "reconciler:plan")["script"])


@pytest.mark.e2e
@pytest.mark.slow
def test_the_review_role_reads_the_records_and_cannot_write_them(
    make_team: TeamFactory,
) -> None:
    team = make_team("github")
    review = team.settings["site-review"]
    location = parse_location(review["RECONCILER_STATE"], base_dir=team.root)
    with psycopg.connect(location.target, password=review["PGPASSWORD"]) as conn:
        schema = location.schema
        assert conn.execute(f"SELECT count(*) FROM {schema}.versions").fetchone() == (0,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(f"INSERT INTO {schema}.journal (site, entry) VALUES ('x', '{{}}'::jsonb)")
    run = team.pull_request(21)
    assert run.exit_code == EXIT_OK, run.log
    assert "Saved the plan" not in run.log


@pytest.mark.e2e
@pytest.mark.slow
def test_a_pull_request_before_the_first_run_on_main_plans_from_no_records(
    make_team: TeamFactory,
) -> None:
    """The first pull request of a new team, before anything ran on main: the reviewer's
    read-only role cannot create the records' tables, and needs none: it finds no records,
    says so, and plans; the merge then creates them with the writer's role."""
    team = make_team("gitlab", records_ready=False)
    run = team.pull_request(22)
    assert run.exit_code == EXIT_OK, run.log
    assert "this database role may not create them: reading them as empty" in run.log
    assert "Traceback" not in run.log
    merged = team.merge()
    assert merged.apply.exit_code == EXIT_OK, merged.apply.log
    assert team.pull_request(23).exit_code == EXIT_OK


@pytest.mark.parametrize("forge", FORGES)
@pytest.mark.e2e
@pytest.mark.slow
def test_the_comment_step_leaves_comments_by_anyone_else_alone(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    mallory = Author("mallory", 31)
    failed = team.forge_api.post_as(mallory, 23, f"{FAILED}\nI quote the old failure note.\n")
    first = team.pull_request(23)
    assert first.exit_code == EXIT_OK, first.log
    (mine,) = team.forge_api.authored(23)
    original = mine["body"]
    copy = team.forge_api.post_as(mallory, 23, original)  # a look-alike of the plan

    team.edit("name: Payments", "name: Payments-2")
    second = team.pull_request(23)
    assert second.exit_code == EXIT_OK, second.log
    (updated,) = team.forge_api.authored(23)
    assert updated["id"] == mine["id"] and "Payments-2" in updated["body"]
    assert team.forge_api.authored(23, mallory) == [failed, copy]
    assert copy["body"] == original and failed["body"].startswith(FAILED)
    touched = [r for r in team.forge_api.requests if r.split()[0] in ("PATCH", "PUT", "DELETE")]
    assert all(not r.endswith((f"/{failed['id']}", f"/{copy['id']}")) for r in touched)


@pytest.mark.parametrize("forge", FORGES)
@pytest.mark.e2e
@pytest.mark.slow
def test_a_token_the_forge_refuses_fails_the_comment_step_in_one_line(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    team.forge_token = "revoked-" + team.forge_token
    run = team.pull_request(24)
    assert run.exit_code == EXIT_ERROR, run.log
    assert "Cannot update the plan" in run.log and "HTTP Error 401" in run.log
    assert "Traceback" not in run.log
    assert team.forge_api.comments.get(24) is None
