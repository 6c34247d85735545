"""Fresh CI runners on this machine, for the shipped templates' jobs.

``ci_github`` and ``ci_gitlab`` read the jobs from the templates and run their steps unedited;
this module gives each job the runner a hosted one would:

* an empty directory holding the repository: a copy of the test's checkout (GitHub's
  ``actions/checkout``, GitLab's clone);
* a Python with pip and without the tool (``actions/setup-python``, GitLab's
  ``python:3.12-slim`` image): a new virtual environment for every job. Its site-packages
  reaches, read-only, the tool's *dependencies* and pip (the runner's warm cache: a job's
  install takes under a second instead of ten). The tool itself is not there: the job's own
  install step installs it, as shipped, from ``RECONCILER_INSTALL``, which the tests point at
  a directory holding the wheel of this checkout, built once per session
  (``pip wheel --no-deps``);
* an environment of its own: ``PATH`` (that Python first), ``HOME``, the locale, ``CI=true``,
  the machine's ``PIP_*`` settings (the configured index) and the forge's variables; nothing
  else of this process's.

The warm cache is the one install from the index of the session: once per session, a bare
runner (a Python with a current pip and nothing else, as a new hosted runner has) runs the
templates' install step, unedited, with the wheel's directory; what it did is kept for
``test_ci_install.py`` to check, and its environment, the tool uninstalled again, is the cache
every other runner sees: exactly the dependencies (and their versions) that a runner gets for
this wheel from the configured index.

The environments live outside pytest's temporary tree (the cache in the run's shared
directory, ``tests/support/postgres.run_directory``, removed when the run ends; a job's own
environment is removed after its job): the installed tool carries the sandbox's demo keys,
which the suite's secret scan must not find in a test's files. Every job's log joins
``JOB_LOGS``, which the secret scan reads.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import venv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.loopback import REPO, TRANSCRIPTS

VERSION: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "reconciler", "schemas")
"""What a wheel of this checkout is built from (the Dockerfile's build stage copies the same)."""
_TOOL_ENTRIES = ("reconciler", "site_reconciler")
"""What the tool's wheel puts in site-packages: its package and its ``.dist-info``."""
JOB_LOGS: list[str] = []
"""Every job's log and summary, for the suite-wide secret scan (and the tests' own checks)."""
TRANSCRIPTS.append(JOB_LOGS)


@dataclass(frozen=True)
class ToolBuild:
    """The tool as the tests install it: ``wheels`` holds only this checkout's wheel (what
    ``RECONCILER_INSTALL`` names), ``packages`` its dependencies and pip (the runners' cache),
    ``bare_log`` what the bare runner's install step did (its exit code and output)."""

    wheels: Path
    packages: Path
    bare_log: Path

    @property
    def wheel(self) -> Path:
        (wheel,) = self.wheels.glob("site_reconciler-*.whl")
        return wheel

    def bare_install(self) -> subprocess.CompletedProcess[str]:
        """The install step as the bare runner ran it, from the configured index."""
        done = json.loads(self.bare_log.read_text(encoding="utf-8"))
        return subprocess.CompletedProcess(done["args"], done["code"], done["out"], done["err"])


def build_tool(root: Path, install: str) -> ToolBuild:
    """The wheel, then ``install`` (the templates' install step) on a bare runner, whose
    environment less the tool is the runners' cache: made once under ``root`` whichever test
    process of the session comes first (the pytest-xdist workers share ``root``; a lock
    orders them)."""
    root.mkdir(parents=True, exist_ok=True)
    bare = root / "bare-python"
    build = ToolBuild(root / "wheels", site_packages(bare), root / "bare-install.json")
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".built").exists():
            _build_wheel(build, root / "source")
            _bare_runner_install(build, bare, root / "bare-runner", install)
            (root / ".built").touch()
    return build


def _build_wheel(build: ToolBuild, source: Path) -> None:
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir()
    for name in WHEEL_SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(
                origin, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy(origin, source / name)
    pip = [sys.executable, "-m", "pip", "--quiet"]
    _check([*pip, "wheel", "--no-deps", "--wheel-dir", str(build.wheels), str(source)])
    shutil.rmtree(source)


def _bare_runner_install(build: ToolBuild, python: Path, root: Path, install: str) -> None:
    """``install`` on a fresh runner whose Python has a current pip and nothing else, with
    ``RECONCILER_INSTALL`` naming the wheel's directory: every dependency comes from the
    configured index. Its outcome is kept in ``build.bare_log``; then the tool is uninstalled,
    and what stays in ``python`` (pip and the dependencies) is the cache of the other runners."""
    (root / "checkout").mkdir(parents=True)
    runner = Runner(root / "runner", root / "checkout", build)
    try:
        runner.setup_bare_python(python)
        env = {**runner.environment(), "RECONCILER_INSTALL": str(build.wheels)}
        done = runner.run(install + "\nreconciler validate --help > /dev/null\n", env)
        kept = {"args": done.args, "code": done.returncode, "out": done.stdout, "err": done.stderr}
        build.bare_log.write_text(json.dumps(kept), encoding="utf-8")
        if done.returncode != 0:
            failed = done.stdout + done.stderr
            raise RuntimeError(f"the bare runner's install step failed:\n{failed}")
        uninstall = [str(python / "bin" / "python"), "-m", "pip", "uninstall", "--quiet", "--yes"]
        _check([*uninstall, "site-reconciler"], env=runner.environment())
    finally:
        runner.close()
    tool = [p.name for p in build.packages.iterdir() if p.name.split("-")[0] in _TOOL_ENTRIES]
    assert not tool, f"the runners' cache holds the tool: {tool}"
    shutil.rmtree(root)


def site_packages(python: Path) -> Path:
    """Where a virtual environment made by ``new_venv(python)`` keeps its packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return python / "lib" / version / "site-packages"


def new_venv(python: Path) -> Path:
    """``python -m venv --without-pip`` (made in this process); its site-packages."""
    venv.EnvBuilder(symlinks=True).create(python)
    return site_packages(python)


def _check(command: list[str], env: Mapping[str, str] | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} … failed:\n{done.stdout}{done.stderr}")


@dataclass
class JobRun:
    """What one job did: its exit code (0 when every step passed), outputs and log."""

    job: str
    exit_code: int
    log: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    steps_run: list[str] = field(default_factory=list)
    skipped: bool = False  # its condition was false: nothing ran
    allowed_to_fail: bool = False  # GitLab: a failure the job declares allowed (drift's 2)


class Runner:
    """A fresh runner for one job: ``work`` holds the checkout; ``setup_python`` gives it a
    Python (with the tool already in it only when the job's image has it)."""

    def __init__(self, root: Path, checkout: Path, tool: ToolBuild) -> None:
        self.root = root
        self.work = root / "work"
        self.home = root / "home"
        self.tool = tool
        shutil.rmtree(root, ignore_errors=True)
        self.home.mkdir(parents=True)
        shutil.copytree(checkout, self.work, symlinks=True)
        self._python: Path | None = None  # a temporary environment, removed by close
        self._bin: Path | None = None

    def setup_python(self, *, with_tool: bool = False) -> None:
        """A new virtual environment without pip that sees the cache (the dependencies and
        pip); ``with_tool``: an image with the tool."""
        self._python = Path(tempfile.mkdtemp(prefix="reconciler-runner-"))
        venv_dir = self._python / "venv"
        (new_venv(venv_dir) / "_runner_cache.pth").write_text(f"{self.tool.packages}\n")
        if with_tool:
            pip = [str(venv_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps"]
            subprocess.run([*pip, str(self.tool.wheel)], check=True, env=self.environment())

    def setup_bare_python(self, python: Path) -> None:
        """A new virtual environment at ``python`` with a current pip from the configured
        index and nothing else, as a new hosted runner has; ``close`` leaves it."""
        self._bin = python / "bin"
        target = new_venv(python)
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target), "pip"]
        _check(pip, env=self.environment())

    def environment(self) -> dict[str, str]:
        """What a runner starts a job with, before the forge's own variables."""
        bin_dir = self._python / "venv" / "bin" if self._python else self._bin
        bins = [str(bin_dir)] if bin_dir else []
        env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
        env.update(
            PATH=os.pathsep.join([*bins, "/usr/bin", "/bin"]),
            HOME=str(self.home),
            LANG="C.UTF-8",
            CI="true",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        return env

    def run(self, script: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
        """A step's script as both forges run it: bash, stopping at the first failing command."""
        path = self.root / f".step-{os.getpid()}.sh"
        path.write_text(script, encoding="utf-8")
        try:
            return subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
                cwd=self.work,
                env=dict(env),
                capture_output=True,
                text=True,
                timeout=300,
            )
        finally:
            path.unlink()

    def close(self) -> None:
        if self._python is not None:
            shutil.rmtree(self._python, ignore_errors=True)
            self._python = None


class Artifacts:
    """A run's artefact store: what one job uploads, a later job of the run downloads."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def upload(self, name: str, work: Path, paths: Iterable[str], *, hidden: bool = True) -> bool:
        """Keep ``paths`` of ``work`` under ``name``; whether any existed. Without ``hidden``
        files and directories whose name starts with a dot are left out (upload-artifact)."""
        target = self.root / name
        found = False
        for path in paths:
            source = work / path.rstrip("/")
            if not source.exists():
                continue
            found = True
            if source.is_dir():
                ignore = None if hidden else shutil.ignore_patterns(".*")
                shutil.copytree(
                    source, target / path.rstrip("/"), dirs_exist_ok=True, ignore=ignore
                )
            else:
                (target / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target / path)
        return found

    def download(self, name: str, work: Path) -> None:
        shutil.copytree(self.root / name, work, dirs_exist_ok=True)

    def path(self, name: str) -> Path:
        return self.root / name
