"""The container image and the pre-commit hook, checked as far as this machine can.

No Docker daemon here: the Dockerfile is parsed (non-root numeric user, the tool as entry point,
every copied path present and not ignored), and its build stage is replayed as Docker would run
it -- the copied files alone, links kept, ``pip wheel`` -- and the wheel it yields runs
``reconciler validate``. The pre-commit hook's entry runs with its default arguments.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.ci_github import load_github_workflow
from tests.support.ci_gitlab import load_gitlab_template
from tests.support.ci_pipelines import OPERATIONS
from tests.support.loopback import REPO, reconciler_command


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


def dockerfile(path: Path = REPO / "Dockerfile") -> list[Instruction]:
    """The instructions of a Dockerfile: comments dropped, continuation lines joined."""
    joined, pending = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    assert not pending, "a continuation line ends the file"
    instructions = []
    for line in joined:
        keyword, _, arguments = line.strip().partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip()))
    return instructions


def final_stage(instructions: list[Instruction]) -> list[Instruction]:
    starts = [i for i, step in enumerate(instructions) if step.keyword == "FROM"]
    assert starts, "no FROM"
    return instructions[starts[-1] :]


def build_stage(instructions: list[Instruction]) -> list[Instruction]:
    starts = [i for i, step in enumerate(instructions) if step.keyword == "FROM"]
    assert len(starts) >= 2, "the Dockerfile has no separate build stage"
    return instructions[starts[0] : starts[1]]


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    users = [step.arguments for step in final_stage(dockerfile()) if step.keyword == "USER"]
    assert users, "the final stage never leaves root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit(), f"USER {users[-1]}: a name cannot be checked by runAsNonRoot"
    assert int(uid) != 0


def test_the_image_installs_exactly_the_version_of_this_checkout() -> None:
    stage = final_stage(dockerfile())
    (arg,) = [step.arguments for step in stage if step.keyword == "ARG"]
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert arg == f"RECONCILER_VERSION={version}"
    (install,) = [step.arguments for step in stage if "pip install" in step.arguments]
    assert '"site-reconciler==${RECONCILER_VERSION}"' in install


def test_the_entry_point_is_the_tool_in_exec_form() -> None:
    stage = final_stage(dockerfile())
    entry = [step.arguments for step in stage if step.keyword == "ENTRYPOINT"]
    assert len(entry) == 1
    words = json.loads(entry[0])  # exec form: signals reach the tool, not a shell
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert words == ["reconciler"] and "reconciler" in scripts
    # the final stage adds no source tree: only what the wheels install
    assert not [step for step in stage if step.keyword in ("COPY", "ADD")]


def _ignored(relative: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern.lstrip("*/"))
        for pattern in patterns
    )


def _copies(stage: list[Instruction]) -> list[tuple[list[str], str]]:
    copies = []
    for step in stage:
        if step.keyword == "COPY":
            words = [word for word in shlex.split(step.arguments) if not word.startswith("--")]
            copies.append((words[:-1], words[-1]))
    return copies


def test_every_copied_path_exists_and_is_not_ignored() -> None:
    patterns = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    copies = _copies(build_stage(dockerfile()))
    assert copies
    for sources, _ in copies:
        for source in sources:
            assert (REPO / source).exists(), source
            assert not _ignored(source, patterns), f"{source} is in .dockerignore"
    assert _ignored(".venv", patterns) and _ignored(".git", patterns)


@pytest.mark.e2e
@pytest.mark.slow
def test_the_build_stage_yields_a_wheel_that_runs_validate() -> None:
    """Replays the build stage: the COPY sources (links kept, as COPY keeps them) into an
    empty directory, then its ``pip wheel``, offline and without dependencies. The wheel
    must carry the schema, the seed, the reports' templates and the licence, run ``validate``
    on the example and write the access report's HTML and Markdown. (Outside pytest's
    temporary tree: the sandbox's well-known demo keys in the sources are no leak.)"""
    with tempfile.TemporaryDirectory(prefix="reconciler-image-") as scratch:
        _replay_build_stage(Path(scratch))


def _replay_build_stage(tmp_path: Path) -> None:
    stage = build_stage(dockerfile())
    src = tmp_path / "src"
    src.mkdir()
    for sources, destination in _copies(stage):
        for source in sources:
            target = src / destination
            origin = REPO / source
            if origin.is_dir():
                shutil.copytree(origin, target, symlinks=True)
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(origin, target / origin.name)
    runs = [step.arguments for step in stage if step.keyword == "RUN"]
    assert any(re.search(r"\bpip wheel\b.* \.$", run) for run in runs), runs
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "w"), "."],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "w").glob("site_reconciler-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "installed")
    assert "reconciler/schemas/site.schema.json" in names
    assert "reconciler/sandbox/seeds/example.yaml" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)  # MIT's notice
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}
    result = subprocess.run(
        [sys.executable, "-c", "from reconciler.cli import main; main()", "validate",
         str(REPO / "examples")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == EXIT_OK, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "reconciler/render/templates/access.html.j2" in names
    for fmt in ("html", "markdown"):  # the reports' templates are found where installed
        report = subprocess.run(
            [sys.executable, "-c", "from reconciler.cli import main; main()", "access",
             "--sandbox", "--format", fmt],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert report.returncode == EXIT_OK, report.stdout + report.stderr
        assert "Access on https://sandbox.invalid" in report.stdout


# --- pre-commit -----------------------------------------------------------------------------

HOOKS = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_the_hook_is_declared_as_pre_commit_reads_it() -> None:
    assert isinstance(HOOKS, list)
    (hook,) = [hook for hook in HOOKS if hook["id"] == "reconciler-validate"]
    assert {"id", "name", "entry", "language"} <= set(hook)
    assert hook["language"] == "python"  # pre-commit installs this repository: pyproject
    assert hook["pass_filenames"] is False  # the manifest is validated whole, merged
    assert re.search(hook["files"], "site/workspaces.yaml")
    assert re.search(hook["files"], "site/reconciler.toml")
    assert not re.search(hook["files"], "src/app.py")


def _run_hook(cwd: Path) -> subprocess.CompletedProcess[str]:
    (hook,) = HOOKS
    words = shlex.split(hook["entry"]) + list(hook.get("args", []))
    assert words[0] == "reconciler"
    return subprocess.run(
        [*reconciler_command(), *words[1:]], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.e2e
def test_the_hook_passes_a_valid_manifest_and_stops_an_invalid_one(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "site", ignore=shutil.ignore_patterns(".*"))
    passed = _run_hook(tmp_path)
    assert passed.returncode == EXIT_OK, passed.stdout + passed.stderr
    manifest = tmp_path / "site" / "site.yaml"
    manifest.write_text(manifest.read_text().replace("version: 1", "version: 99", 1))
    stopped = _run_hook(tmp_path)
    assert stopped.returncode == EXIT_ERROR
    assert re.search(r"site\.yaml:\d+:\d+: error", stopped.stdout + stopped.stderr)
    assert "Traceback" not in stopped.stderr


@pytest.mark.e2e
@pytest.mark.slow
def test_pre_commit_runs_the_hook_from_this_repository() -> None:
    """The real pre-commit, as a user's repository runs it: ``try-repo`` installs this
    repository in a fresh environment (pip, offline from the local index here) and runs the
    hook over a repository holding a manifest in ``site/``: passed, then stopped (exit 1)
    once the manifest is broken. (Outside pytest's temporary tree: the installed package
    carries the sandbox's well-known demo keys.)"""
    with tempfile.TemporaryDirectory(prefix="reconciler-pre-commit-") as scratch:
        home, user_repo = Path(scratch) / "home", Path(scratch) / "repo"
        shutil.copytree(REPO / "examples", user_repo / "site", ignore=shutil.ignore_patterns(".*"))
        env = {**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_CONFIG_GLOBAL": os.devnull}
        git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]

        def hook() -> subprocess.CompletedProcess[str]:
            subprocess.run([*git, "add", "-A"], cwd=user_repo, check=True)
            return subprocess.run(
                [sys.executable, "-m", "pre_commit", "try-repo", str(REPO),
                 "reconciler-validate", "--all-files"],
                cwd=user_repo, env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip

        subprocess.run([*git, "init", "-q"], cwd=user_repo, check=True)
        passed = hook()
        assert passed.returncode == 0, passed.stdout + passed.stderr
        assert re.search(r"reconciler validate\.+Passed", passed.stdout), passed.stdout
        manifest = user_repo / "site" / "site.yaml"
        manifest.write_text(manifest.read_text().replace("version: 1", "version: 99", 1))
        stopped = hook()
        assert stopped.returncode == EXIT_ERROR, stopped.stdout + stopped.stderr
        assert re.search(r"reconciler validate\.+Failed", stopped.stdout)
        assert re.search(r"site/site\.yaml:\d+:\d+: error: `version` must be 1", stopped.stdout)


# --- the documentation ----------------------------------------------------------------------

CI_DOC = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
WORKFLOW = load_github_workflow()
TEMPLATE = load_gitlab_template()


def _table_after(heading: str) -> list[list[str]]:
    rest = CI_DOC[CI_DOC.index(heading) :]
    rows: list[list[str]] = []
    for line in rest.splitlines()[1:]:
        line = line.strip()  # a table inside a list item is indented
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_exit_code_table_says_what_every_job_does_on_0_to_4() -> None:
    header, *rows = _table_after("## Exit codes: what each job does")
    assert header == [
        "exit code",
        "plan (request)",
        "merged plan",
        "apply",
        "drift (nightly)",
        "operator jobs",
    ]
    assert [row[0] for row in rows] == ["0", "1", "2", "3", "4"]
    assert all(len(row) == len(header) and all(row) for row in rows)


def test_the_documented_jobs_are_the_templates_jobs() -> None:
    _header, *rows = _table_after("## What runs when")
    documented = {
        name for row in rows for cell in row[1:3] for name in re.findall(r"`([^`]+)`", cell)
    }
    github = WORKFLOW["jobs"]
    gitlab = yaml.safe_load((REPO / "ci/gitlab/site-reconciler.gitlab-ci.yml").read_text())
    jobs = set(github) | {name for name in gitlab if name.startswith("reconciler:")}
    assert documented == jobs


def test_the_documented_secrets_are_the_ones_the_templates_read() -> None:
    _header, *rows = _table_after("3. **The secrets**")
    documented = {name for row in rows for name in re.findall(r"`([A-Z_]+)`", row[0])}
    github = set(re.findall(r"secrets\.([A-Z_]+)", json.dumps(WORKFLOW)))
    assert documented == github | {"GITLAB_API_TOKEN"}
    gitlab = (REPO / "ci" / "gitlab" / "site-reconciler.gitlab-ci.yml").read_text()
    assert all(name in gitlab for name in documented)


def test_the_documented_operator_inputs_are_the_templates_inputs() -> None:
    header, *rows = _table_after("## Runbooks")
    assert header[:3] == ["operation", "GitHub inputs", "GitLab variables"]
    github_inputs = set(WORKFLOW["on"]["workflow_dispatch"]["inputs"]) - {"operation"}
    assert [row[0].strip("`") for row in rows] == list(OPERATIONS)
    assert {n for row in rows for n in re.findall(r"`(\w+)`", row[1])} == github_inputs
    gitlab_variables = {
        name for name in TEMPLATE["variables"] if name.startswith(("RECORD", "APPLY", "REVIEW_"))
    }
    assert {n for row in rows for n in re.findall(r"`(\w+)`", row[2])} == gitlab_variables


def test_docs_ci_copies_the_templates_as_written(tmp_path: Path) -> None:
    rest = CI_DOC[CI_DOC.index("1. **Copy the template**") :]
    block = rest[rest.index("```sh\n") + 6 :]
    block = block[: block.index("```")]
    (tmp_path / "site-reconciler").symlink_to(REPO)  # "a clone of this repository"
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", block], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    for copied, original in [
        (".github/workflows/site-reconciler.yml", "ci/github/site-reconciler.yml"),
        ("ci/site-reconciler.gitlab-ci.yml", "ci/gitlab/site-reconciler.gitlab-ci.yml"),
    ]:
        assert (tmp_path / copied).read_bytes() == (REPO / original).read_bytes()
    # the include line docs/ci.md and the template give names where the copy went
    assert "local: ci/site-reconciler.gitlab-ci.yml" in CI_DOC
