"""Run the shipped GitHub Actions workflow's jobs as GitHub would, on fresh runners here.

The workflow is read from ``ci/github/site-reconciler.yml``; an event (pull request, push,
schedule, ``workflow_dispatch`` with inputs) starts the jobs whose ``if:`` holds, in ``needs``
order. Each job gets a fresh ``ci_runs.Runner``; its ``run:`` steps run unedited with bash,
with the environment the workflow declares: ``${{ }}`` expressions resolved from the event,
the repository's configuration variables and the secrets of the job's *environment* (a job
without one gets no secrets: this repository keeps none outside environments). An environment
that allows only some branches refuses a job of another ref, as GitHub's protection rules do.
Hosted actions (checkout, setup-python, upload/download-artifact) are played by the harness.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support.ci_runs import JOB_LOGS, Artifacts, JobRun, Runner, ToolBuild
from tests.support.loopback import REPO

GITHUB_WORKFLOW = REPO / "ci" / "github" / "site-reconciler.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
_TOKENS = re.compile(r"'[^']*'|&&|\|\||==|!=|!|\(|\)|[A-Za-z_][\w.-]*\(\)|[A-Za-z_][\w.-]*")


def load_github_workflow() -> dict[str, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(GITHUB_WORKFLOW.read_text(encoding="utf-8"))
    on = loaded.pop(True, None)  # YAML 1.1 reads the key `on` as true
    return {**loaded, "on": on if on is not None else loaded.get("on")}


def install_step() -> str:
    """The templates' install step, as the workflow's plan job has it (every job of both
    templates has the same one: tests/test_ci_templates.py)."""
    steps = load_github_workflow()["jobs"]["plan"]["steps"]
    script: str = next(s["run"] for s in steps if s.get("name") == "Install site-reconciler")
    return script


@dataclass
class GithubEnvironment:
    """A deployment environment: its secrets, and the branches that may use it (None: any)."""

    secrets: dict[str, str]
    branches: tuple[str, ...] | None = None


@dataclass
class GithubRepo:
    """What a team sets up on GitHub for the workflow, and where its API answers."""

    environments: dict[str, GithubEnvironment]
    variables: dict[str, str]
    api_url: str
    token: str
    repository: str = "acme/site"


@dataclass
class GithubEvent:
    name: str  # pull_request, push, schedule, workflow_dispatch
    pull_request: int | None = None
    inputs: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"refs/pull/{self.pull_request}/merge" if self.pull_request else "refs/heads/main"


class GithubRun:
    """One workflow run: the jobs an event starts, run one at a time on fresh runners."""

    def __init__(
        self,
        workflow: dict[str, Any],
        repo: GithubRepo,
        event: GithubEvent,
        checkout: Path,
        root: Path,
        tool: ToolBuild,
    ) -> None:
        self.workflow, self.repo, self.event = workflow, repo, event
        self.checkout, self.root, self.tool = checkout, root, tool
        self.artifacts = Artifacts(root / "artifacts")
        self.results: dict[str, JobRun] = {}
        self.inputs = self._inputs(event.inputs)

    def _inputs(self, given: Mapping[str, str]) -> dict[str, str]:
        """The dispatch's inputs with their defaults; a choice outside its options is refused
        (GitHub refuses to start such a run)."""
        if self.event.name != "workflow_dispatch":
            return {}
        declared = self.workflow["on"]["workflow_dispatch"]["inputs"]
        assert set(given) <= set(declared), f"unknown inputs: {set(given) - set(declared)}"
        inputs = {
            name: str(given.get(name, spec.get("default", ""))) for name, spec in declared.items()
        }
        for name, spec in declared.items():
            if spec.get("type") == "choice":
                assert inputs[name] in spec["options"], f"{name}={inputs[name]!r} is no option"
        return inputs

    def started(self) -> list[str]:
        """The jobs the event starts: ``if:`` true, or (for jobs that need others) not yet
        decided: their ``if:`` reads the outputs of the jobs they need."""
        chosen: list[str] = []
        for name, job in self.workflow["jobs"].items():
            if self._needs(job):
                if all(need in chosen for need in self._needs(job)):
                    chosen.append(name)
            elif "if" not in job or self.evaluate(job["if"], {}, {}) is True:
                chosen.append(name)
        return chosen

    @staticmethod
    def _needs(job: dict[str, Any]) -> list[str]:
        needs = job.get("needs", [])
        return [needs] if isinstance(needs, str) else list(needs)

    def run(self, name: str, **overrides: str) -> JobRun:
        """One job to its end; ``overrides`` replace variables of its environment (a team
        editing a value, e.g. ``LOCK_TIMEOUT``)."""
        job = self.workflow["jobs"][name]
        needed = [self.results.get(need) for need in self._needs(job)]
        if any(r is None or r.skipped or r.exit_code != 0 for r in needed):
            return self._keep(JobRun(name, 0, skipped=True))
        if "if" in job and self.evaluate(job["if"], {}, {}) is not True:
            return self._keep(JobRun(name, 0, skipped=True))
        environment = job.get("environment")
        environment = environment.get("name") if isinstance(environment, dict) else environment
        secrets: dict[str, str] = {}
        if environment is not None:
            rules = self.repo.environments.get(environment, GithubEnvironment({}))
            branch = self.event.ref.removeprefix("refs/heads/")
            if rules.branches is not None and branch not in rules.branches:
                log = f"Branch {branch} is not allowed to deploy to {environment}."
                return self._keep(JobRun(name, 1, log))
            secrets = rules.secrets
        runner = Runner(self.root / "runners" / name, self.checkout, self.tool)
        try:
            return self._keep(self._steps(name, job, runner, secrets, overrides))
        finally:
            runner.close()

    def _keep(self, run: JobRun) -> JobRun:
        self.results[run.job] = run
        JOB_LOGS.extend([run.log, run.summary])
        return run

    def _steps(
        self,
        name: str,
        job: dict[str, Any],
        runner: Runner,
        secrets: dict[str, str],
        overrides: Mapping[str, str],
    ) -> JobRun:
        steps: dict[str, dict[str, str]] = {}
        run = JobRun(name, 0)
        summary = runner.root / "summary.md"
        summary.write_text("")
        for step in job["steps"]:
            condition = step.get("if", "success()")
            if not re.search(r"\b(always|success|failure)\(\)", condition):
                condition = f"success() && ({condition})"  # GitHub's implicit status check
            if self.evaluate(condition, steps, secrets, failed=run.exit_code != 0) is not True:
                continue
            if "uses" in step:
                self._play(step, runner)
                run.steps_run.append(step["uses"].split("@")[0])
                continue
            script = step["run"]
            assert "${{" not in script, f"an expression inside a script: {step.get('name')}"
            env = runner.environment()
            for scope in (self.workflow.get("env", {}), job.get("env", {}), step.get("env", {})):
                env.update({k: str(self.substitute(v, steps, secrets)) for k, v in scope.items()})
            env.update(overrides)
            output = runner.root / "output"
            output.write_text("")
            env.update(
                GITHUB_API_URL=self.repo.api_url,
                GITHUB_REPOSITORY=self.repo.repository,
                GITHUB_EVENT_NAME=self.event.name,
                GITHUB_REF=self.event.ref,
                GITHUB_WORKSPACE=str(runner.work),
                GITHUB_STEP_SUMMARY=str(summary),
                GITHUB_OUTPUT=str(output),
                GITHUB_ACTIONS="true",
            )
            done = runner.run(script, env)
            run.log += done.stdout + done.stderr
            run.steps_run.append(step.get("name", "run"))
            if "id" in step:
                lines = output.read_text().splitlines()
                steps[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
            if done.returncode != 0:
                run.exit_code = done.returncode
        run.outputs = {
            k: str(self.substitute(v, steps, secrets)) for k, v in job.get("outputs", {}).items()
        }
        run.summary = summary.read_text()
        return run

    def _play(self, step: dict[str, Any], runner: Runner) -> None:
        """What the hosted actions the workflow uses do, on this runner."""
        action = step["uses"].split("@")[0]
        options = step.get("with", {})
        if action == "actions/checkout":
            pass  # the runner holds the checkout already
        elif action == "actions/setup-python":
            assert tuple(map(int, str(options["python-version"]).split("."))) >= (3, 11)
            runner.setup_python()
        elif action == "actions/upload-artifact":
            paths = str(options["path"]).split()
            found = self.artifacts.upload(options["name"], runner.work, paths, hidden=False)
            assert found or options.get("if-no-files-found") == "ignore", f"{paths}: no files"
        elif action == "actions/download-artifact":
            self.artifacts.download(options["name"], runner.work / options.get("path", "."))
        else:
            raise AssertionError(f"the workflow uses an action the harness cannot play: {action}")

    # --- expressions -------------------------------------------------------------------------

    def lookup(
        self, name: str, steps: Mapping[str, dict[str, str]], secrets: Mapping[str, str]
    ) -> str:
        parts = name.split(".")
        if parts[0] == "secrets":
            return secrets.get(parts[1], "")
        if parts[0] == "vars":
            return self.repo.variables.get(parts[1], "")
        if parts[0] == "inputs":
            return self.inputs.get(parts[1], "")
        if parts[0] == "steps" and parts[2] == "outputs":
            return steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "needs" and parts[2] == "outputs":
            result = self.results.get(parts[1])
            return result.outputs.get(parts[3], "") if result else ""
        known = {
            "github.token": self.repo.token,
            "github.event_name": self.event.name,
            "github.ref": self.event.ref,
            "github.event.pull_request.number": str(self.event.pull_request or ""),
        }
        assert name in known, f"the test harness does not know the expression {name!r}"
        return known[name]

    def evaluate(
        self,
        expression: str,
        steps: Mapping[str, dict[str, str]],
        secrets: Mapping[str, str],
        *,
        failed: bool = False,
    ) -> str | bool:
        """The part of GitHub's expression language the workflow uses: context names, string
        literals, ``==``, ``!=``, ``!``, ``&&``, ``||`` (the first true operand, as GitHub),
        parentheses, ``always()`` and ``success()``."""
        tokens = _TOKENS.findall(expression)
        assert "".join(tokens) == re.sub(r"\s+", "", expression), f"cannot read {expression!r}"
        python: list[str] = []
        for token in tokens:
            if token.startswith("'"):
                python.append(repr(token[1:-1]))
            elif token in ("&&", "||", "!"):
                python.append({"&&": " and ", "||": " or ", "!": " not "}[token])
            elif token in ("==", "!=", "(", ")"):
                python.append(f" {token} ")
            elif token in ("always()", "success()"):
                python.append(repr(token == "always()" or not failed))
            else:
                python.append(repr(self.lookup(token, steps, secrets)))
        value = eval("".join(python))  # only literals and operators built above
        return value if isinstance(value, bool) else str(value)

    def substitute(
        self, text: Any, steps: Mapping[str, dict[str, str]], secrets: Mapping[str, str]
    ) -> str:
        return _EXPRESSION.sub(
            lambda found: str(self.evaluate(found[1], steps, secrets)), str(text)
        )
