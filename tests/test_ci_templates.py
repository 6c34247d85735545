"""The shipped CI templates run end to end: their shell steps, against the sandbox over loopback
and records in a real PostgreSQL.

``ci/github/site-reconciler.yml`` and ``ci/gitlab/site-reconciler.gitlab-ci.yml`` are parsed,
the jobs each event starts are chosen by the templates' own conditions, and each job's scripts
run with bash (tests/support/ci_runs.py) with only the variables the template declares, fed
from the "secrets" below. Every exit code the docs' table promises is reached: 0 and 2 of plan
and drift, 3 (a used plan) and 4 (records locked elsewhere) of apply, 1 of a broken manifest.
"""

from __future__ import annotations

import json
import re
import secrets as random_secrets
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from reconciler.api.config import check_site_url
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_LOCKED, EXIT_OK, EXIT_REFUSED
from reconciler.state.backend import Holder, StateLocation
from reconciler.state.locate import open_records, parse_location
from tests.support.ci_runs import (
    INSTALL,
    JOB_LOGS,
    GithubContext,
    JobRun,
    github_jobs_for,
    gitlab_job,
    gitlab_jobs_for,
    load_github_workflow,
    load_gitlab_template,
    run_github_job,
    run_gitlab_job,
)
from tests.support.forge_api import CommentsApi, comments_api
from tests.support.loopback import (
    ADMIN_KEY,
    ADMIN_SECRET,
    EXAMPLE_SITE,
    REPO,
    LoopbackSite,
    loopback_site,
)
from tests.support.postgres import PostgresServer

MARKER = re.compile(r"<!-- site-reconciler:plan site=\S+ records=\w+ part=(\d+)/(\d+) -->\n")
FAILED = "<!-- site-reconciler:plan failed -->"
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


@dataclass
class Repo:
    """A checkout of a repository that keeps the example site in ``site/``; the site, the
    records (PostgreSQL), the forge's comment API and the artefact store of one pipeline."""

    checkout: Path
    artifacts: Path
    site: LoopbackSite
    records: str
    secrets: dict[str, str]
    forge: CommentsApi

    @property
    def location(self) -> StateLocation:
        return parse_location(self.records, base_dir=self.checkout)

    @property
    def manifest(self) -> Path:
        return self.checkout / "site" / "site.yaml"

    def edit(self, old: str, new: str) -> None:
        text = self.manifest.read_text(encoding="utf-8")
        assert old in text, old
        self.manifest.write_text(text.replace(old, new, 1), encoding="utf-8")

    def github(self, event: str, pull_request: int | None = None) -> GithubContext:
        return GithubContext(event, self.secrets, self.forge.url, pull_request, self.forge.token)

    def versions(self) -> int:
        """How many versions of the records PostgreSQL holds for this site."""
        with open_records(self.location, check_site_url(self.site.url)) as records:
            return len(records.history())


@pytest.fixture
def repo(tmp_path: Path, postgres_server: PostgresServer, postgres_url: str) -> Iterator[Repo]:
    (tmp_path / "server").mkdir()
    (tmp_path / "checkout" / "site").mkdir(parents=True)
    shutil.copy(EXAMPLE_SITE, tmp_path / "checkout" / "site" / "site.yaml")
    token = "forge-" + random_secrets.token_hex(8)
    with loopback_site(tmp_path / "server") as site, comments_api(token) as forge:
        secrets = {
            "SITE_URL": site.url,
            "SITE_API_KEY": ADMIN_KEY,
            "SITE_API_SECRET": ADMIN_SECRET,
            "RECONCILER_STATE": postgres_url,
            "RECORDS_DB_PASSWORD": postgres_server.app_password,
            "RECONCILER_PLAN_KEY": random_secrets.token_hex(24),
            "DRIFT_WEBHOOK": f"{forge.url}/hook",
        }
        yield Repo(
            tmp_path / "checkout", tmp_path / "artifacts", site, postgres_url, secrets, forge
        )
        outputs = [path.read_text() for path in tmp_path.glob("checkout-*/*.md")]
        site.transcript.extend(outputs)  # the suite's secret scan reads them too
        hidden = [secrets[name] for name in ("RECORDS_DB_PASSWORD", "RECONCILER_PLAN_KEY")]
        for text in [
            *outputs,
            *JOB_LOGS,
            *(c["body"] for cs in forge.comments.values() for c in cs),
        ]:
            assert not any(value in text for value in [*hidden, token]), "a secret in the output"
            assert "deprecated" not in text  # the templates use the RECONCILER_ names


# --- GitHub Actions -------------------------------------------------------------------------

WORKFLOW = load_github_workflow()


def github_job(repo: Repo, name: str, event: GithubContext, **overrides: str) -> JobRun:
    """A job the event runs (its ``if:`` is true), run to its end."""
    run = run_github_job(WORKFLOW, name, repo.checkout, repo.artifacts, event, overrides=overrides)
    assert run is not None, f"{name} was skipped"
    return run


def test_the_workflow_is_triggered_as_documented_and_installs_this_version() -> None:
    assert set(WORKFLOW["on"]) == {"pull_request", "push", "schedule", "workflow_dispatch"}
    assert WORKFLOW["env"]["RECONCILER_VERSION"] == VERSION
    assert WORKFLOW["permissions"] == {"contents": "read"}  # write only where a job needs it
    installs = [
        step["run"].strip()
        for job in WORKFLOW["jobs"].values()
        for step in job["steps"]
        if "pip install" in step.get("run", "")
    ]
    assert installs == [INSTALL] * len(WORKFLOW["jobs"])
    assert WORKFLOW["jobs"]["apply"]["needs"] == "merge-plan"
    assert WORKFLOW["jobs"]["apply"]["environment"] == "site"  # reviewers can gate it


@pytest.mark.e2e
def test_a_pull_request_gets_one_plan_comment_updated_on_each_push(repo: Repo) -> None:
    event = repo.github("pull_request", pull_request=7)
    assert github_jobs_for(WORKFLOW, event) == ["plan"]
    first = github_job(repo, "plan", event)
    assert first.exit_code == EXIT_OK, first.log
    assert "The plan has changes" in first.log
    (comment,) = repo.forge.comments[7]
    found = MARKER.match(comment["body"])
    assert found and found.groups() == ("1", "1"), comment["body"][:200]
    assert comment["body"][found.end() :].startswith("### site-reconciler plan")
    assert "14 to create" in comment["body"]
    assert "14 to create" in first.summary
    assert (repo.artifacts / "plan" / "plan.json").exists()
    assert (repo.artifacts / "plan" / "comments" / "comment-1.md").exists()

    repo.edit("name: Payments", "name: Payments-2")  # a second push to the pull request
    second = github_job(repo, "plan", event)
    assert second.exit_code == EXIT_OK, second.log
    (updated,) = repo.forge.comments[7]  # the same comment, not a new one
    assert updated["id"] == comment["id"] and "Payments-2" in updated["body"]
    assert [r for r in repo.forge.requests if r.startswith("PATCH")] == [
        f"PATCH /repos/acme/site/issues/comments/{comment['id']}"
    ]


@pytest.mark.e2e
def test_a_broken_manifest_fails_the_plan_job_and_says_so_in_the_comment(repo: Repo) -> None:
    repo.edit("version: 1", "version: 99")
    event = repo.github("pull_request", pull_request=8)
    run = github_job(repo, "plan", event)
    assert run.exit_code == EXIT_ERROR
    assert "::error::reconciler plan failed (exit 1)" in run.log
    (comment,) = repo.forge.comments[8]
    assert comment["body"] == f"{FAILED}\n**reconciler plan failed (exit 1)**: see the job's log.\n"
    assert run.steps_run[-1] == "Verdict"

    repo.edit("version: 99", "version: 1")  # the fix is pushed: the plan replaces the note
    fixed = github_job(repo, "plan", event)
    assert fixed.exit_code == EXIT_OK, fixed.log
    (plan,) = repo.forge.comments[8]
    assert MARKER.match(plan["body"]) and "14 to create" in plan["body"]
    assert f"DELETE /repos/acme/site/issues/comments/{comment['id']}" in repo.forge.requests


def _many_workspaces(repo: Repo, count: int) -> None:
    manifest = yaml.safe_load(repo.manifest.read_text(encoding="utf-8"))
    manifest["workspaces"] = [
        {"name": f"Project {n:04d}", "users": ["alice", "bob", "carol", "dave"]}
        for n in range(count)
    ]
    manifest.pop("teams", None)
    repo.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")


@pytest.mark.e2e
def test_a_long_plan_is_one_comment_a_part_and_parts_that_go_away_are_deleted(
    repo: Repo,
) -> None:
    _many_workspaces(repo, 600)
    event = repo.github("pull_request", pull_request=9)
    long = github_job(repo, "plan", event)
    assert long.exit_code == EXIT_OK, long.log
    parts = repo.forge.comments[9]
    numbers = [MARKER.match(part["body"]).groups() for part in parts]  # type: ignore[union-attr]
    total = str(len(parts))
    assert len(parts) >= 2 and numbers == [(str(n), total) for n in range(1, len(parts) + 1)]
    assert all(len(part["body"]) <= 65_535 for part in parts)

    _many_workspaces(repo, 3)  # the next push plans far less: one part
    short = github_job(repo, "plan", event)
    assert short.exit_code == EXIT_OK, short.log
    (only,) = repo.forge.comments[9]
    assert only["id"] == parts[0]["id"]  # part 1 edited, the others deleted
    assert MARKER.match(only["body"]).groups() == ("1", "1")  # type: ignore[union-attr]


def _merge(repo: Repo) -> tuple[GithubContext, dict[str, str]]:
    event = repo.github("push")
    assert github_jobs_for(WORKFLOW, event) == ["merge-plan", "apply"]
    planned = github_job(repo, "merge-plan", event)
    assert planned.exit_code == EXIT_OK, planned.log
    event.needs["merge-plan"] = planned.outputs
    return event, planned.outputs


@pytest.mark.e2e
def test_a_merge_plans_then_applies_into_postgresql_records_and_a_second_has_nothing_to_do(
    repo: Repo,
) -> None:
    event, outputs = _merge(repo)
    assert outputs == {"changes": "true"}
    applied = github_job(repo, "apply", event)
    assert applied.exit_code == EXIT_OK, applied.log
    assert "Applied: the site matches the merged manifest." in applied.log
    report = json.loads((repo.artifacts / "apply-report" / "apply.json").read_text())
    assert report and "Payments" in json.dumps(report)  # every action, for the run's record
    assert "Payments" in repo.site.workspaces()
    assert repo.versions() >= 1  # the records are in PostgreSQL, not in the runner
    assert not list(repo.checkout.parent.glob("checkout-*/**/.reconciler"))

    event, outputs = _merge(repo)
    assert outputs == {"changes": "false"}
    assert run_github_job(WORKFLOW, "apply", repo.checkout, repo.artifacts, event) is None


@pytest.mark.e2e
def test_apply_refuses_a_used_plan_with_3_and_waits_out_a_lock_with_4(repo: Repo) -> None:
    event, _ = _merge(repo)
    first = github_job(repo, "apply", event)
    assert first.exit_code == EXIT_OK, first.log
    again = github_job(repo, "apply", event)
    assert again.exit_code == EXIT_REFUSED, again.log
    assert "::error::Refused for safety (exit 3)" in again.log

    repo.edit("name: Payments", "name: Payments-2")
    event, outputs = _merge(repo)
    assert outputs == {"changes": "true"}
    holder = Holder.current("apply")
    records = open_records(repo.location, check_site_url(repo.site.url))
    with records, records.lock(holder):  # another runner holds the lock
        locked = github_job(repo, "apply", event, LOCK_TIMEOUT="1")
    assert locked.exit_code == EXIT_LOCKED, locked.log
    assert "::error::The records are locked by another run (exit 4, waited 1 s)" in locked.log
    assert "Payments-2" not in repo.site.workspaces()
    retried = github_job(repo, "apply", event)
    assert retried.exit_code == EXIT_OK, retried.log
    assert "Payments-2" in repo.site.workspaces()


@pytest.mark.e2e
def test_the_nightly_drift_passes_in_sync_and_fails_on_drift(repo: Repo) -> None:
    event, _ = _merge(repo)
    github_job(repo, "apply", event)
    nightly = repo.github("schedule")
    assert github_jobs_for(WORKFLOW, nightly) == ["drift"]
    in_sync = github_job(repo, "drift", nightly)
    assert in_sync.exit_code == EXIT_OK, in_sync.log
    assert "In sync" in in_sync.log

    repo.edit("name: Payments", "name: Payments-2")  # the site no longer matches
    drifted = github_job(repo, "drift", nightly)
    assert drifted.exit_code == EXIT_CHANGES, drifted.log
    assert "::warning::The site has drifted" in drifted.log
    # the webhook heard the first report (in sync, the unmanaged objects), then the drift
    first, told = repo.forge.hooks
    assert first["in_sync"] is True and told["in_sync"] is False
    assert "Payments-2" in told["text"] and "Payments-2" not in first["text"]
    again = github_job(repo, "drift", nightly)
    assert again.exit_code == EXIT_CHANGES and len(repo.forge.hooks) == 2  # nothing new
    assert "drift report" in drifted.summary
    assert (repo.artifacts / "drift" / "drift.md").exists()
    tolerated = github_job(repo, "drift", nightly, FAIL_ON_DRIFT="false")
    assert tolerated.exit_code == EXIT_OK, tolerated.log


# --- GitLab CI ------------------------------------------------------------------------------

TEMPLATE = load_gitlab_template()


def _gitlab_variables(repo: Repo, **event: str) -> dict[str, str]:
    renamed = {"SITE_URL": "RECONCILER_SITE_URL", "SITE_API_KEY": "RECONCILER_API_KEY",
               "SITE_API_SECRET": "RECONCILER_API_SECRET",
               "DRIFT_WEBHOOK": "RECONCILER_NOTIFY_URL"}  # fmt: skip
    # GitLab's variables reach the tool as they are named: by the tool's own names
    secrets = {renamed.get(name, name): value for name, value in repo.secrets.items()}
    secrets["PGPASSWORD"] = secrets.pop("RECORDS_DB_PASSWORD")
    return {
        **secrets,
        "GITLAB_API_TOKEN": repo.forge.token,
        "CI_API_V4_URL": f"{repo.forge.url}/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_DEFAULT_BRANCH": "main",
        "CI": "true",
        **event,
    }


def test_the_gitlab_template_installs_this_version_and_tolerates_only_drift() -> None:
    assert TEMPLATE["variables"]["RECONCILER_VERSION"] == VERSION
    assert gitlab_job(TEMPLATE, "reconciler:drift")["allow_failure"] == {"exit_codes": [2]}
    assert "allow_failure" not in gitlab_job(TEMPLATE, "reconciler:apply")
    assert gitlab_job(TEMPLATE, "reconciler:apply")["needs"] == ["reconciler:merged-plan"]


@pytest.mark.e2e
def test_the_gitlab_pipeline_notes_the_plan_applies_on_merge_and_reports_drift(
    repo: Repo,
) -> None:
    mr = _gitlab_variables(repo, CI_PIPELINE_SOURCE="merge_request_event",
                           CI_MERGE_REQUEST_IID="5")  # fmt: skip
    assert gitlab_jobs_for(TEMPLATE, mr) == ["reconciler:plan"]
    for _ in range(2):  # two pushes to the merge request: one note, updated
        run = run_gitlab_job(TEMPLATE, "reconciler:plan", repo.checkout, repo.artifacts, mr)
        assert run.exit_code == EXIT_OK, run.log
    (note,) = repo.forge.comments[5]
    assert MARKER.match(note["body"]) and "14 to create" in note["body"]
    assert [r.split()[0] for r in repo.forge.requests] == ["GET", "POST", "GET", "PUT"]

    merged = _gitlab_variables(repo, CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main")
    assert gitlab_jobs_for(TEMPLATE, merged) == ["reconciler:merged-plan", "reconciler:apply"]
    for job in ("reconciler:merged-plan", "reconciler:apply"):
        run = run_gitlab_job(TEMPLATE, job, repo.checkout, repo.artifacts, merged)
        assert run.exit_code == EXIT_OK, run.log
    assert "Applied: the site matches the merged manifest." in run.log
    assert json.loads((repo.artifacts / "reconciler:apply" / "apply.json").read_text())
    assert repo.versions() >= 1

    nightly = _gitlab_variables(repo, CI_PIPELINE_SOURCE="schedule", CI_COMMIT_BRANCH="main")
    assert gitlab_jobs_for(TEMPLATE, nightly) == ["reconciler:drift"]
    in_sync = run_gitlab_job(TEMPLATE, "reconciler:drift", repo.checkout, repo.artifacts, nightly)
    assert in_sync.exit_code == EXIT_OK, in_sync.log
    repo.edit("name: Payments", "name: Payments-2")
    drifted = run_gitlab_job(TEMPLATE, "reconciler:drift", repo.checkout, repo.artifacts, nightly)
    assert drifted.exit_code == EXIT_CHANGES, drifted.log
    assert "Payments-2" in (repo.artifacts / "reconciler:drift" / "drift.md").read_text()
    assert [hook["in_sync"] for hook in repo.forge.hooks] == [True, False]
    assert "Payments-2" in repo.forge.hooks[-1]["text"]


@pytest.mark.e2e
def test_the_gitlab_apply_refuses_a_used_plan_and_skips_when_nothing_changed(
    repo: Repo,
) -> None:
    merged = _gitlab_variables(repo, CI_PIPELINE_SOURCE="push", CI_COMMIT_BRANCH="main")
    for job in ("reconciler:merged-plan", "reconciler:apply"):
        assert run_gitlab_job(TEMPLATE, job, repo.checkout, repo.artifacts, merged).exit_code == 0
    used = run_gitlab_job(TEMPLATE, "reconciler:apply", repo.checkout, repo.artifacts, merged)
    assert used.exit_code == EXIT_REFUSED and "Refused for safety (exit 3)" in used.log
    run_gitlab_job(TEMPLATE, "reconciler:merged-plan", repo.checkout, repo.artifacts, merged)
    idle = run_gitlab_job(TEMPLATE, "reconciler:apply", repo.checkout, repo.artifacts, merged)
    assert idle.exit_code == EXIT_OK and "Nothing to apply." in idle.log


def test_every_template_is_valid_yaml_without_tabs() -> None:
    for path in (REPO / "ci").rglob("*.yml"):
        text = path.read_text(encoding="utf-8")
        assert "\t" not in text, path
        assert isinstance(yaml.safe_load(text), dict), path
