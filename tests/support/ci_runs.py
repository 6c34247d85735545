"""Run the shipped CI templates' shell steps here, as GitHub Actions and GitLab CI would.

A job's ``run:``/``script:`` blocks are extracted from the YAML and run with bash in a
"checkout" directory, with the environment the template declares (its ``${{ }}`` expressions
or ``$VARIABLES`` resolved from the secrets and event a test gives) and nothing of this
process's environment but ``PATH`` (so ``reconciler`` is the installed console script), ``HOME``
and the locale. Steps that call hosted actions (checkout, setup-python, artefacts) are played
by the harness: artefacts are copied between jobs through a directory. The install step is not
run (no network here); the tests check instead that it installs the version of this checkout.

The forges' comment endpoints the jobs call are played by ``tests.support.forge_api``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support.loopback import REPO, TRANSCRIPTS

GITHUB_WORKFLOW = REPO / "ci" / "github" / "site-reconciler.yml"
GITLAB_TEMPLATE = REPO / "ci" / "gitlab" / "site-reconciler.gitlab-ci.yml"
JOB_LOGS: list[str] = []
"""Every job's log and summary, for the suite-wide secret scan (and the tests' own checks)."""
TRANSCRIPTS.append(JOB_LOGS)
INSTALL = 'pip install --quiet "site-reconciler==$RECONCILER_VERSION"'


def base_environment() -> dict[str, str]:
    """What a fresh runner has before the template's own variables: a PATH with the tool."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


@dataclass
class JobRun:
    """What one job did: its exit code (0 when every step passed), outputs and log."""

    job: str
    exit_code: int
    log: str
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    steps_run: list[str] = field(default_factory=list)


def run_script(script: str, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """A step's script as both forges run it: bash, stop at the first failing command."""
    path = cwd.parent / f".step-{os.getpid()}-{threading.get_ident()}.sh"
    path.write_text(script, encoding="utf-8")
    try:
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
            cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        path.unlink()


# --- GitHub Actions -------------------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class GithubContext:
    """The contexts expressions read: ``github.*``, ``secrets.*``, ``steps.*``, ``needs.*``."""

    event_name: str
    secrets: dict[str, str]
    api_url: str
    pull_request: int | None = None
    token: str = "ghs-test-token"
    repository: str = "acme/site"
    needs: dict[str, dict[str, str]] = field(default_factory=dict)

    def lookup(self, name: str, steps: Mapping[str, dict[str, str]]) -> str:
        parts = name.split(".")
        if parts[0] == "secrets":
            return self.secrets.get(parts[1], "")
        if name == "github.token":
            return self.token
        if name == "github.event_name":
            return self.event_name
        if name == "github.event.pull_request.number":
            return str(self.pull_request) if self.pull_request else ""
        if name == "github.ref":
            return "refs/heads/main"
        if parts[0] == "steps" and parts[2] == "outputs":
            return steps.get(parts[1], {}).get(parts[3], "")
        if parts[0] == "needs" and parts[2] == "outputs":
            return self.needs.get(parts[1], {}).get(parts[3], "")
        raise AssertionError(f"the test harness does not know the expression {name!r}")

    def evaluate(self, expression: str, steps: Mapping[str, dict[str, str]]) -> str | bool:
        """The subset of GitHub's expression language the template uses: context names,
        string literals, ``==``, ``!=``, ``&&``, ``||`` and ``always()``."""
        tokens = re.findall(
            r"'[^']*'|&&|\|\||==|!=|[A-Za-z_][\w.-]*\(\)|[A-Za-z_][\w.-]*", expression
        )
        assert "".join(tokens) == re.sub(r"\s+", "", expression), f"cannot read {expression!r}"
        python: list[str] = []
        for token in tokens:
            if token.startswith("'"):
                python.append(repr(token[1:-1]))
            elif token in ("&&", "||"):
                python.append(" and " if token == "&&" else " or ")
            elif token in ("==", "!="):
                python.append(f" {token} ")
            elif token == "always()":
                python.append("True")
            else:
                python.append(repr(self.lookup(token, steps)))
        value = eval("".join(python))  # only literals built above
        return value if isinstance(value, bool) else str(value)

    def substitute(self, text: str, steps: Mapping[str, dict[str, str]]) -> str:
        return _EXPRESSION.sub(lambda found: str(self.evaluate(found[1], steps)), str(text))


def load_github_workflow() -> dict[str, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(GITHUB_WORKFLOW.read_text(encoding="utf-8"))
    on = loaded.pop(True, None)  # YAML 1.1 reads the key `on` as true
    return {**loaded, "on": on if on is not None else loaded.get("on")}


def github_jobs_for(workflow: dict[str, Any], context: GithubContext) -> list[str]:
    """The jobs an event starts (``if:`` true), in the order ``needs`` allows; a job that
    needs others is listed when they are (its ``if:`` reads their outputs when it runs)."""
    chosen: list[str] = []
    for name, job in workflow["jobs"].items():
        needs = job.get("needs", [])
        if needs:
            if all(need in chosen for need in ([needs] if isinstance(needs, str) else needs)):
                chosen.append(name)
        elif "if" not in job or context.evaluate(job["if"], {}) is True:
            chosen.append(name)
    return chosen


def run_github_job(
    workflow: dict[str, Any],
    name: str,
    checkout: Path,
    artifacts: Path,
    context: GithubContext,
    *,
    overrides: Mapping[str, str] | None = None,
) -> JobRun | None:
    """One job, step by step; ``None`` when its ``if:`` is false (a skipped job)."""
    job = workflow["jobs"][name]
    if "if" in job and context.evaluate(job["if"], {}) is not True:
        return None
    steps: dict[str, dict[str, str]] = {}
    env = base_environment()
    for scope in (workflow.get("env", {}), job.get("env", {})):
        env.update({key: context.substitute(value, steps) for key, value in scope.items()})
    env.update(overrides or {})
    work = checkout.parent / f"{checkout.name}-{name}"
    shutil.rmtree(work, ignore_errors=True)
    summary_file = checkout.parent / f"summary-{name}.md"
    summary_file.write_text("")
    env.update(
        GITHUB_API_URL=context.api_url, GITHUB_REPOSITORY=context.repository,
        GITHUB_STEP_SUMMARY=str(summary_file), GITHUB_EVENT_NAME=context.event_name, CI="true",
    )  # fmt: skip
    run = JobRun(name, 0, "")
    for step in job["steps"]:
        condition = step.get("if")
        failed = run.exit_code != 0
        if condition is None and failed:
            continue
        if condition is not None and context.evaluate(condition, steps) is not True:
            continue
        if failed and condition != "always()":
            continue
        if "uses" in step:
            _play_action(step, work, artifacts, checkout)
            run.steps_run.append(step["uses"])
            continue
        script = step["run"]
        assert "${{" not in script, f"an expression inside a script: {step.get('name')}"
        if script.strip() == INSTALL:
            run.steps_run.append("install")
            continue
        step_env = dict(env)
        step_env.update({k: context.substitute(v, steps) for k, v in step.get("env", {}).items()})
        output_file = checkout.parent / f"output-{name}"
        output_file.write_text("")
        step_env["GITHUB_OUTPUT"] = str(output_file)
        done = run_script(script, work, step_env)
        run.log += done.stdout + done.stderr
        run.steps_run.append(step.get("name", "run"))
        if "id" in step:
            steps[step["id"]] = dict(
                line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
            )
        if done.returncode != 0:
            run.exit_code = done.returncode
    run.outputs = {
        key: context.substitute(value, steps) for key, value in job.get("outputs", {}).items()
    }
    run.summary = summary_file.read_text()
    JOB_LOGS.extend([run.log, run.summary])
    return run


def _play_action(step: dict[str, Any], work: Path, artifacts: Path, checkout: Path) -> None:
    """What the hosted actions the template uses would do, on this machine."""
    action = step["uses"].split("@")[0]
    options = step.get("with", {})
    if action == "actions/checkout":
        shutil.copytree(checkout, work)
    elif action == "actions/setup-python":
        assert str(options["python-version"]) >= "3.11"
    elif action == "actions/upload-artifact":
        target = artifacts / options["name"]
        target.mkdir(parents=True, exist_ok=True)
        for line in str(options["path"]).split():
            if (work / line).is_dir():
                shutil.copytree(work / line, target / line, dirs_exist_ok=True)
            elif (work / line).exists():
                shutil.copy(work / line, target / line)
            else:
                assert options.get("if-no-files-found") == "ignore", f"{line} missing"
    elif action == "actions/download-artifact":
        for path in (artifacts / options["name"]).iterdir():
            if path.is_dir():
                shutil.copytree(path, work / path.name, dirs_exist_ok=True)
            else:
                shutil.copy(path, work / path.name)
    else:
        raise AssertionError(f"the template uses an action the harness cannot play: {action}")


# --- GitLab CI ------------------------------------------------------------------------------


def load_gitlab_template() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(GITLAB_TEMPLATE.read_text(encoding="utf-8"))
    return data


def gitlab_job(template: dict[str, Any], name: str) -> dict[str, Any]:
    """A job with its ``extends`` merged in (one level, as the template uses it)."""
    job = dict(template[name])
    base = job.pop("extends", None)
    return {**template[base], **job} if base else job


def gitlab_rule_matches(rule: str, variables: Mapping[str, str]) -> bool:
    """``$A == "x" && $B == $C`` -- the subset of GitLab's rules the template uses."""
    python = re.sub(r"\$(\w+)", lambda found: repr(variables.get(found[1], "")), rule)
    python = python.replace("&&", " and ").replace("||", " or ")
    assert re.fullmatch(r"('[^']*'|\"[^\"]*\"|==|!=| and | or |\s)+", python), rule
    return bool(eval(python))  # only literals and operators, checked above


def gitlab_jobs_for(template: dict[str, Any], variables: Mapping[str, str]) -> list[str]:
    chosen = []
    for name in template:
        if name.startswith(".") or not isinstance(template[name], dict):
            continue
        if "script" not in gitlab_job(template, name):
            continue
        rules = gitlab_job(template, name).get("rules", [])
        if any(gitlab_rule_matches(rule["if"], variables) for rule in rules):
            chosen.append(name)
    return chosen


def run_gitlab_job(
    template: dict[str, Any],
    name: str,
    checkout: Path,
    artifacts: Path,
    variables: Mapping[str, str],
) -> JobRun:
    """``before_script`` (the install is checked, not run) and ``script`` in one shell, as the
    runner does; artefacts of the jobs it ``needs`` are copied in, its own kept, and a dotenv
    report becomes variables of the jobs that need it."""
    job = gitlab_job(template, name)
    env = base_environment()
    env.update({key: str(value) for key, value in template.get("variables", {}).items()})
    env.update(variables)
    work = checkout.parent / f"{checkout.name}-{name.replace(':', '-')}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(checkout, work)
    for needed in job.get("needs", []):
        source = artifacts / needed
        for path in source.iterdir():
            if path.is_dir():
                shutil.copytree(path, work / path.name, dirs_exist_ok=True)
            elif path.name == ".dotenv":
                env.update(dict(line.split("=", 1) for line in path.read_text().splitlines()))
            else:
                shutil.copy(path, work / path.name)
    before = list(job.get("before_script", []))
    assert before == [INSTALL], before
    done = run_script("\n".join(job["script"]) + "\n", work, env)
    run = JobRun(name, done.returncode, done.stdout + done.stderr, steps_run=["install"])
    JOB_LOGS.append(run.log)
    kept = job.get("artifacts", {})
    if done.returncode == 0 or kept.get("when") == "always":
        target = artifacts / name
        target.mkdir(parents=True, exist_ok=True)
        for path in kept.get("paths", []):
            if (work / path).is_dir():
                shutil.copytree(work / path, target / path, dirs_exist_ok=True)
            elif (work / path).exists():
                shutil.copy(work / path, target / path)
        dotenv = kept.get("reports", {}).get("dotenv")
        if dotenv and (work / dotenv).exists():
            shutil.copy(work / dotenv, target / ".dotenv")
    return run
