"""Run the shipped GitLab CI template's jobs as GitLab would, on fresh runners here.

The template is read from ``ci/gitlab/site-reconciler.gitlab-ci.yml``, with ``extends``
merged as GitLab merges it (mappings key by key, deeply; anything else replaced), and a team's
own overrides (its ``.gitlab-ci.yml`` defining the same keys) merged over it. A pipeline
(merge request, push, schedule or run by hand) creates the jobs whose rules match, manual ones
to be played. A job's ``before_script`` and ``script`` run unedited in one bash, as the runner
runs them, with its variables in GitLab's order of precedence (lowest first): predefined, the
template's global then job ``variables:``, dotenv reports of the jobs it needs, the project's
CI/CD variables (each with its environment scope, and only on protected branches when
protected), then the variables given when the pipeline is run or the job played. ``changes:``
is taken as true: every test pipeline changes the manifest.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support.ci_runs import JOB_LOGS, Artifacts, JobRun, Runner, ToolBuild
from tests.support.loopback import REPO

GITLAB_TEMPLATE = REPO / "ci" / "gitlab" / "site-reconciler.gitlab-ci.yml"
IMAGES = {"python:3.12-slim": False}
"""The images the harness plays, and whether the tool comes installed in them (a test of an
image of the tool adds its own)."""


def load_gitlab_template(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The template as a project including it sees it: its own keys merged over it."""
    data: dict[str, Any] = yaml.safe_load(GITLAB_TEMPLATE.read_text(encoding="utf-8"))
    return deep_merge(data, overrides or {})


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def gitlab_job(template: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A job with its ``extends`` chain merged in."""
    job = dict(template[name])
    parents = job.pop("extends", [])
    merged: dict[str, Any] = {}
    for parent in [parents] if isinstance(parents, str) else parents:
        merged = deep_merge(merged, gitlab_job(template, parent))
    return deep_merge(merged, job)


def environment_name(job: Mapping[str, Any]) -> str | None:
    environment = job.get("environment")
    return environment.get("name") if isinstance(environment, Mapping) else environment


def template_variables(values: Mapping[str, Any]) -> dict[str, str]:
    """``variables:`` as the jobs see them: a ``{value:, description:}`` entry is its value."""
    return {k: str(v["value"] if isinstance(v, Mapping) else v) for k, v in values.items()}


@dataclass
class ProjectVariable:
    """A CI/CD variable of the project's settings."""

    value: str
    scope: str = "*"  # environment scope: the environments whose jobs get it
    protected: bool = False  # only for pipelines of protected branches


@dataclass
class GitlabProject:
    variables: dict[str, list[ProjectVariable]]
    api_url: str
    project_id: str = "42"
    default_branch: str = "main"
    protected_branches: tuple[str, ...] = ("main",)


@dataclass
class GitlabPipeline:
    source: str  # merge_request_event, push, schedule, web
    branch: str = "main"
    merge_request: int | None = None
    variables: dict[str, str] = field(default_factory=dict)  # given to "Run pipeline"

    def predefined(self, project: GitlabProject) -> dict[str, str]:
        found = {
            "CI": "true",
            "GITLAB_CI": "true",
            "CI_PIPELINE_SOURCE": self.source,
            "CI_DEFAULT_BRANCH": project.default_branch,
            "CI_COMMIT_REF_NAME": self.branch,
            "CI_API_V4_URL": f"{project.api_url}/api/v4",
            "CI_PROJECT_ID": project.project_id,
        }
        if self.merge_request is None:
            found["CI_COMMIT_BRANCH"] = self.branch
        else:
            found["CI_MERGE_REQUEST_IID"] = str(self.merge_request)
        return found


def rule_matches(rule: str, variables: Mapping[str, str]) -> bool:
    """``$A == "x" && ($B == $C || …)`` -- the part of GitLab's rules the template uses."""
    python = re.sub(r"\$(\w+)", lambda found: repr(variables.get(found[1], "")), rule)
    python = python.replace("&&", " and ").replace("||", " or ")
    assert re.fullmatch(r"('[^']*'|\"[^\"]*\"|==|!=| and | or |[()\s])+", python), rule
    return bool(eval(python))  # only literals and operators, checked above


class GitlabRun:
    """One pipeline: its jobs, run one at a time on fresh runners."""

    def __init__(
        self,
        template: dict[str, Any],
        project: GitlabProject,
        pipeline: GitlabPipeline,
        checkout: Path,
        root: Path,
        tool: ToolBuild,
        images: Mapping[str, bool] = IMAGES,
    ) -> None:
        self.template, self.project, self.pipeline = template, project, pipeline
        self.checkout, self.root, self.tool = checkout, root, tool
        self.images = images
        self.artifacts = Artifacts(root / "artifacts")
        self.dotenv: dict[str, dict[str, str]] = {}
        self.results: dict[str, JobRun] = {}

    def jobs(self) -> dict[str, str]:
        """The pipeline's jobs, each ``"on_success"`` or ``"manual"``, in stage order."""
        stages = self.template.get("stages", ["build", "test", "deploy"])
        context = {
            **self.pipeline.predefined(self.project),
            **self._globals(),
            **self._project_variables(None),  # rules see those of every environment ("*")
            **self.pipeline.variables,
        }
        found: list[tuple[int, str, str]] = []
        for name in self.template:
            if name.startswith(".") or not isinstance(self.template[name], dict):
                continue
            job = gitlab_job(self.template, name)
            if "script" not in job:
                continue
            rule = next((r for r in job.get("rules", []) if rule_matches(r["if"], context)), None)
            if rule is not None:
                found.append((stages.index(job["stage"]), name, rule.get("when", "on_success")))
        return {name: when for _, name, when in sorted(found, key=lambda item: item[0])}

    def _globals(self) -> dict[str, str]:
        return template_variables(self.template.get("variables", {}))

    def variables(self, job: Mapping[str, Any], played: Mapping[str, str]) -> dict[str, str]:
        """A job's variables, lowest precedence first (GitLab's order)."""
        variables = self.pipeline.predefined(self.project)
        variables.update(self._globals())
        variables.update(template_variables(job.get("variables", {})))
        for need in job.get("needs", []):
            variables.update(self.dotenv.get(need, {}))
        environment = environment_name(job)
        if environment:
            variables["CI_ENVIRONMENT_NAME"] = environment
        variables.update(self._project_variables(environment))
        variables.update(self.pipeline.variables)
        variables.update(played)
        return variables

    def _project_variables(self, environment: str | None) -> dict[str, str]:
        """The project's CI/CD variables a job of ``environment`` gets (None: the rules,
        which see only those of every environment)."""
        found: dict[str, str] = {}
        protected = self.pipeline.branch in self.project.protected_branches
        for key, candidates in self.project.variables.items():
            for candidate in candidates:
                if candidate.protected and not protected:
                    continue
                if candidate.scope == "*" or (
                    environment is not None and fnmatch.fnmatchcase(environment, candidate.scope)
                ):
                    found[key] = candidate.value
        return found

    def run(self, name: str, **played: str) -> JobRun:
        """Run (or play, for a manual job, with ``played`` variables) one job to its end."""
        assert name in self.jobs(), f"{name} is not a job of this pipeline"
        job = gitlab_job(self.template, name)
        variables = self.variables(job, played)
        runner = Runner(self.root / "runners" / name.replace(":", "-"), self.checkout, self.tool)
        try:
            image = job["image"]["name"] if isinstance(job["image"], dict) else job["image"]
            assert image in self.images, f"the harness cannot play the image {image}"
            runner.setup_python(with_tool=self.images[image])
            for source in self._sources(name, job):
                self.artifacts.download(source, runner.work)
            script = "\n".join([*job.get("before_script", []), *job["script"]]) + "\n"
            env = {**runner.environment(), **variables, "CI_PROJECT_DIR": str(runner.work)}
            done = runner.run(script, env)
            run = JobRun(name, done.returncode, done.stdout + done.stderr)
            allowed = job.get("allow_failure", False)
            if isinstance(allowed, Mapping):
                run.allowed_to_fail = done.returncode in allowed.get("exit_codes", [])
            self._keep_artifacts(name, job, runner, done.returncode == 0)
        finally:
            runner.close()
        self.results[name] = run
        JOB_LOGS.append(run.log)
        return run

    def _sources(self, name: str, job: Mapping[str, Any]) -> list[str]:
        """Whose artefacts a job gets: those it ``needs``, else every earlier stage's."""
        if "needs" in job:
            return [need for need in job["needs"] if self.artifacts.path(need).exists()]
        stages = self.template["stages"]
        mine = stages.index(job["stage"])
        return [
            other
            for other in self.results
            if stages.index(gitlab_job(self.template, other)["stage"]) < mine
            and self.artifacts.path(other).exists()
        ]

    def _keep_artifacts(self, name: str, job: Mapping[str, Any], runner: Runner, ok: bool) -> None:
        kept = job.get("artifacts", {})
        if ok or kept.get("when") == "always":
            self.artifacts.upload(name, runner.work, kept.get("paths", []))
        dotenv = kept.get("reports", {}).get("dotenv")
        if ok and dotenv and (runner.work / dotenv).exists():
            lines = (runner.work / dotenv).read_text().splitlines()
            self.dotenv[name] = dict(line.split("=", 1) for line in lines if "=" in line)
