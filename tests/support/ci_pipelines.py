"""A team's manifest repository on either forge, as docs/ci.md tells a team to set it up.

``Team`` holds a checkout with the manifest in ``site/``, the sandbox site (on loopback), the
records (a real PostgreSQL: the writer role the tool's tests use, and a read-only role for
pull-request plans, set up as docs/ci.md says), the forge's API (tests/support/forge_api.py)
and the CI settings: the secrets of the three environments by the tool's own names and
``RECONCILER_INSTALL`` pointing at the wheel directory of this checkout. Its events run the
shipped template's jobs, unedited (tests/support/ci_github.py, ci_gitlab.py), so a scenario
is written once and run on both forges.
"""

from __future__ import annotations

import os
import re
import secrets as random_secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.api.config import check_site_url
from reconciler.errors import EXIT_OK
from reconciler.sandbox.settings import SandboxSettings, profile_settings
from reconciler.state.locate import open_records, parse_location
from tests.support.ci_github import (
    GithubEnvironment,
    GithubEvent,
    GithubRepo,
    GithubRun,
    install_step,
    load_github_workflow,
)
from tests.support.ci_gitlab import (
    IMAGES,
    GitlabPipeline,
    GitlabProject,
    GitlabRun,
    ProjectVariable,
    load_gitlab_template,
)
from tests.support.ci_runs import JOB_LOGS, JobRun, ToolBuild, build_tool
from tests.support.cli_runner import run_reconciler
from tests.support.forge_api import CommentsApi, comments_api
from tests.support.loopback import (
    ADMIN_KEY,
    ADMIN_SECRET,
    EXAMPLE_SEED,
    EXAMPLE_SITE,
    REPO,
    LoopbackSite,
    loopback_site,
)
from tests.support.postgres import APP_ROLE, PostgresServer, run_directory

FORGES = ("github", "gitlab")
OPERATIONS = (
    "onboard",
    "adopt",
    "state-forget",
    "state-mv",
    "targeted-apply",
    "review-start",
    "review-close",
)
"""The operator jobs, in the order docs/ci.md and the GitHub inputs list them."""
ENVIRONMENTS = ("site-review", "site-main", "site")
"""Pull-request plans (read-only); the merged plan and drift; apply and the operator jobs."""
ROLES = {
    "github": {
        "plan": "plan",
        "review-check": "review-check",
        "merge-plan": "merge-plan",
        "apply": "apply",
        "drift": "drift",
    },
    "gitlab": {
        "plan": "reconciler:plan",
        "review-check": "reconciler:review-check",
        "merge-plan": "reconciler:merged-plan",
        "apply": "reconciler:apply",
        "drift": "reconciler:drift",
    },
}
GITLAB_INPUTS = {
    "kind": "RECORD_KIND",
    "name": "RECORD_NAME",
    "new_name": "RECORD_NEW_NAME",
    "target": "APPLY_TARGET",
    "exclude": "APPLY_EXCLUDE",
    "review": "REVIEW_FILE",
}


CI_DOC = REPO / "docs" / "ci.md"


def database_setup() -> str:
    """The statements docs/ci.md gives a DBA (Setting up, step 2), exactly as it writes them."""
    doc = CI_DOC.read_text(encoding="utf-8")
    block = doc[doc.index("```sql\n") + len("```sql\n") :]
    return block[: block.index("```")]


def state_urls() -> tuple[str, str]:
    """The ``RECONCILER_STATE`` docs/ci.md gives the reviewer and the writer (Setting up,
    step 3), as it writes them (``HOST``, ``5432`` and ``DB`` for the reader to fill in)."""
    doc = CI_DOC.read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("   | `RECONCILER_STATE`"))
    reviewer, writer = re.findall(r"`(postgresql://[^`]+)`", row)
    return reviewer, writer


def review_role_sql(schema: str, writer: str, reader: str) -> list[str]:
    """The statements docs/ci.md gives a DBA, for these roles and schema: the schema owned by
    the writer, and a reader of every table the writer creates in it. (The roles exist
    already: the statements that create them are left out.)"""
    block = re.sub(r"--[^\n]*", "", database_setup())
    named = {"reconciler_review": reader, "site_acme": schema, "reconciler": writer}
    statements = [" ".join(s.split()) for s in block.split(";") if s.strip()]
    return [
        re.sub(r"\b(reconciler_review|site_acme|reconciler)\b", lambda m: named[m[1]], s)
        for s in statements
        if not s.startswith("CREATE ROLE")
    ]


@dataclass
class Merge:
    """A push to main: the merged plan and, when it ran, the apply."""

    plan: JobRun
    apply: JobRun

    @property
    def applied(self) -> bool:
        return not self.apply.skipped and "Nothing to apply." not in self.apply.log


class MergeRun:
    """A push's pipeline, job by job: for runs that interleave (two merges racing)."""

    def __init__(self, team: Team, run: GithubRun | GitlabRun) -> None:
        self.team, self._run = team, run

    def plan(self, **overrides: str) -> JobRun:
        return self._run.run(ROLES[self.team.forge]["merge-plan"], **overrides)

    def apply(self, **overrides: str) -> JobRun:
        return self._run.run(ROLES[self.team.forge]["apply"], **overrides)


class Team:
    """One team's repository, site, records and CI settings on ``forge``."""

    def __init__(
        self,
        forge: str,
        root: Path,
        tool: ToolBuild,
        site: LoopbackSite,
        forge_api: CommentsApi,
        settings: dict[str, dict[str, str]],
    ) -> None:
        assert forge in FORGES
        self.forge, self.root, self.tool = forge, root, tool
        self.site, self.forge_api, self.settings = site, forge_api, settings
        self.checkout = root / "checkout"
        self.install = str(tool.wheels)
        self.forge_token = forge_api.token  # the job's token (GitHub), GITLAB_API_TOKEN
        self.gitlab_overrides: dict[str, Any] = {}  # the team's own .gitlab-ci.yml keys
        self.variables: dict[str, str] = {}  # configuration (GitHub), CI/CD variables (GitLab)
        self.images: dict[str, bool] = {}  # images it uses beyond the template's
        self._runs = 0

    @property
    def manifest(self) -> Path:
        return self.checkout / "site" / "site.yaml"

    def edit(self, old: str, new: str) -> None:
        text = self.manifest.read_text(encoding="utf-8")
        assert old in text, old
        self.manifest.write_text(text.replace(old, new, 1), encoding="utf-8")

    def unset(self, name: str) -> None:
        """A secret nobody set: GitHub gives an empty value, GitLab no variable at all."""
        for secrets in self.settings.values():
            if self.forge == "github":
                secrets[name] = ""
            else:
                secrets.pop(name, None)

    def apply_from_main(self) -> None:
        """The manifest applied with the ``site`` environment's settings, by the tool run in
        this process: the state a merge leaves, for a test about what comes after it (the
        merge's own jobs run in test_ci_templates.py and test_ci_scenarios.py, on both
        forges)."""
        env = {"PATH": os.environ.get("PATH", ""), "CI": "true", **self.settings["site"]}
        done = run_reconciler("apply", "site/", "--auto-approve", cwd=self.checkout, env=env)
        JOB_LOGS.append(done.output)
        assert done.returncode == EXIT_OK, done.output

    def records(self) -> dict[str, Any] | None:
        """The newest records of the site in PostgreSQL (read as the writer)."""
        location = parse_location(self.settings["site"]["RECONCILER_STATE"], base_dir=self.root)
        with open_records(location, check_site_url(self.site.url)) as store:
            return store.load().data

    # --- events --------------------------------------------------------------------------

    def _start(self, event: str, **details: Any) -> GithubRun | GitlabRun:
        self._runs += 1
        root = self.root / f"run-{self._runs:02d}-{event}"
        if self.forge == "github":
            repo = GithubRepo(
                {
                    name: GithubEnvironment(
                        self.settings[name], None if name == "site-review" else ("main",)
                    )
                    for name in ENVIRONMENTS
                },
                {"RECONCILER_INSTALL": self.install, **self.variables},
                self.forge_api.url,
                self.forge_token,
            )
            github_event = GithubEvent(event, details.get("number"), details.get("inputs", {}))
            return GithubRun(
                load_github_workflow(), repo, github_event, self.checkout, root, self.tool
            )
        variables: dict[str, list[ProjectVariable]] = {
            "RECONCILER_INSTALL": [ProjectVariable(self.install)],
            **{key: [ProjectVariable(value)] for key, value in self.variables.items()},
        }
        for scope in ENVIRONMENTS:
            for key, value in self.settings[scope].items():
                candidate = ProjectVariable(value, scope, protected=scope != "site-review")
                variables.setdefault(key, []).append(candidate)
        variables["GITLAB_API_TOKEN"] = [ProjectVariable(self.forge_token, "site-review")]
        source = {"pull_request": "merge_request_event", "workflow_dispatch": "web"}.get(
            event, event
        )
        number = details.get("number")
        pipeline = GitlabPipeline(source, f"feature-{number}" if number else "main", number)
        project = GitlabProject(variables, self.forge_api.url)
        template = load_gitlab_template(self.gitlab_overrides)
        images = {**IMAGES, **self.images}
        return GitlabRun(template, project, pipeline, self.checkout, root, self.tool, images)

    def pull_request(self, number: int) -> JobRun:
        return self._start("pull_request", number=number).run(ROLES[self.forge]["plan"])

    def review_check(self, number: int) -> JobRun:
        """The access reviews' check of a pull request (merge request) changing them."""
        return self._start("pull_request", number=number).run(ROLES[self.forge]["review-check"])

    def start_merge(self) -> MergeRun:
        return MergeRun(self, self._start("push"))

    def merge(self) -> Merge:
        run = self.start_merge()
        return Merge(run.plan(), run.apply())

    def nightly(self, **overrides: str) -> JobRun:
        return self._start("schedule").run(ROLES[self.forge]["drift"], **overrides)

    def scheduled_apply(self, **overrides: str) -> Merge:
        """The schedule's plan and apply of expired access (where the team opted in): the
        merged plan's jobs, started by the schedule; skipped where it did not."""
        run = self._start("schedule")
        plan, apply = ROLES[self.forge]["merge-plan"], ROLES[self.forge]["apply"]
        if isinstance(run, GitlabRun) and plan not in run.jobs():
            return Merge(JobRun(plan, 0, skipped=True), JobRun(apply, 0, skipped=True))
        scheduled = MergeRun(self, run)
        return Merge(scheduled.plan(**overrides), scheduled.apply(**overrides))

    def operate(self, operation: str, **inputs: str) -> JobRun:
        """Run an operator job by hand: a dispatch with inputs (GitHub), a manual job played
        with variables on a pipeline run by hand (GitLab)."""
        if self.forge == "github":
            run = self._start("workflow_dispatch", inputs={"operation": operation, **inputs})
            return run.run("operate")
        played = {GITLAB_INPUTS[name]: value for name, value in inputs.items()}
        return self._start("workflow_dispatch").run(f"reconciler:{operation}", **played)


@contextmanager
def team_on(
    forge: str,
    root: Path,
    tool: ToolBuild,
    postgres: PostgresServer,
    writer_url: str,
    *,
    manifest: str,
    seed: Path | dict[str, Any],
    sandbox: SandboxSettings | None,
    records_ready: bool,
) -> Iterator[Team]:
    """A team set up as docs/ci.md says, its secrets checked to appear in no output.
    ``records_ready``: a job on main has run once, creating the records' tables (which the
    read-only role of pull requests cannot create)."""
    (root / "checkout" / "site").mkdir(parents=True)
    (root / "checkout" / "site" / "site.yaml").write_text(manifest, encoding="utf-8")
    (root / "server").mkdir()
    schema = writer_url.rsplit("schema=", 1)[1]
    reader, reader_password = f"review_{schema}", random_secrets.token_hex(12)
    with postgres.admin() as admin:
        admin.execute(f"CREATE ROLE {reader} LOGIN PASSWORD '{reader_password}'")
        for statement in review_role_sql(schema, APP_ROLE, reader):
            admin.execute(statement)
    token = "forge-" + random_secrets.token_hex(8)
    with ExitStack() as stack:
        site = stack.enter_context(loopback_site(root / "server", seed, sandbox))
        forge_api = stack.enter_context(comments_api(token))
        hook = f"{forge_api.url}/hook/{random_secrets.token_hex(8)}"
        site_access = {
            "RECONCILER_SITE_URL": site.url,
            "RECONCILER_API_KEY": ADMIN_KEY,
            "RECONCILER_API_SECRET": ADMIN_SECRET,
        }
        writer = {
            **site_access,
            "RECONCILER_STATE": writer_url,
            "PGPASSWORD": postgres.app_password,
            "RECONCILER_PLAN_KEY": random_secrets.token_hex(24),
        }
        settings = {
            "site-review": {
                **site_access,
                "PGPASSWORD": reader_password,
                "RECONCILER_STATE": writer_url.replace(f"{APP_ROLE}@", f"{reader}@"),
            },
            "site-main": {**writer, "RECONCILER_NOTIFY_URL": hook},
            "site": dict(writer),
        }
        team = Team(forge, root, tool, site, forge_api, settings)
        if records_ready:
            team.records()  # the writer's first connection creates the tables
        yield team
        hidden = [
            postgres.app_password,
            reader_password,
            writer["RECONCILER_PLAN_KEY"],
            token,
            hook,
        ]
        _check_no_secret(root, team, hidden)


def _check_no_secret(root: Path, team: Team, hidden: list[str]) -> None:
    """No secret of the team in any job's log, summary, artefact or comment."""
    texts = [*JOB_LOGS, *(c["body"] for cs in team.forge_api.comments.values() for c in cs)]
    texts += [
        p.read_text(errors="replace") for p in root.glob("run-*/artifacts/**/*") if p.is_file()
    ]
    for text in texts:
        assert not any(value in text for value in hidden), "a secret in a job's output"
        assert "deprecated" not in text  # the templates use the RECONCILER_ names


@pytest.fixture(scope="session")
def ci_tool() -> ToolBuild:
    """This checkout's wheel and the runners' cache of its dependencies, once per run, in the
    run's shared directory (the pytest-xdist workers share it; outside pytest's temporary tree,
    and removed when the run ends)."""
    shared = run_directory()
    assert shared is not None, "no shared directory for the run (tests/conftest.py makes it)"
    return build_tool(shared / "ci-tool", install_step())


TeamFactory = Callable[..., Team]


@pytest.fixture
def make_team(
    ci_tool: ToolBuild, postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> Iterator[TeamFactory]:
    """``make_team(forge, manifest=…, seed=…, sandbox=…, records_ready=…)``: the test's one
    team. The site answers as the published pages show (the ``published`` sandbox profile)
    unless told; the records' tables exist (a job ran on main once) unless told."""
    with ExitStack() as stack:

        def make(
            forge: str,
            manifest: str = EXAMPLE_SITE.read_text(encoding="utf-8"),
            seed: Path | dict[str, Any] = EXAMPLE_SEED,
            sandbox: SandboxSettings | None = None,
            records_ready: bool = True,
        ) -> Team:
            team = team_on(
                forge,
                tmp_path / forge,
                ci_tool,
                postgres_server,
                postgres_url,
                manifest=manifest,
                seed=seed,
                sandbox=sandbox or profile_settings("published"),
                records_ready=records_ready,
            )
            return stack.enter_context(team)

        yield make
