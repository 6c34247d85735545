"""Where the CI jobs install the tool from: the one variable ``RECONCILER_INSTALL``, in every
form docs/ci.md gives, and the container image instead of an install.

The install script is the templates' own (tests/test_ci_templates.py checks that every job
has the same one), run unedited on a fresh runner (tests/support/ci_runs.py) with only
``RECONCILER_INSTALL`` (and, for a private index, pip's own ``PIP_INDEX_URL``) set. The tool
is never there before: the script must put a working ``reconciler`` on the runner's PATH.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from reconciler.errors import EXIT_OK
from tests.support.ci_github import install_step
from tests.support.ci_gitlab import gitlab_job, load_gitlab_template
from tests.support.ci_pipelines import TeamFactory, ci_tool, make_team
from tests.support.ci_runs import JOB_LOGS, VERSION, WHEEL_SOURCES, Runner, ToolBuild
from tests.support.forge_api import serving
from tests.support.loopback import REPO

__all__ = ["ci_tool", "make_team"]  # fixtures
INSTALL = install_step()
INSTALLS = {
    "github": INSTALL,
    "gitlab": "\n".join(gitlab_job(load_gitlab_template(), ".reconciler")["before_script"]),
}
"""Each forge's install script as its template has it (the same text: test_ci_templates.py)."""
pytestmark = [pytest.mark.e2e]


def _install(
    tmp_path: Path, tool: ToolBuild, value: str, script: str = INSTALL, **pip: str
) -> subprocess.CompletedProcess[str]:
    """The install script on a fresh runner, then the installed command, from the runner; the
    runner's checkout is what the test left in ``tmp_path / "checkout"``."""
    checkout = tmp_path / "checkout"
    checkout.mkdir(exist_ok=True)
    runner = Runner(tmp_path / "runner", checkout, tool)
    try:
        runner.setup_python()
        env = {**runner.environment(), "RECONCILER_INSTALL": value, **pip}
        return runner.run(script + "\nreconciler validate --help > /dev/null\n", env)
    finally:
        runner.close()


def _installed(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert f"reconciler, version {VERSION}" in done.stdout


def test_a_directory_holding_the_wheel(tmp_path: Path, ci_tool: ToolBuild) -> None:
    _installed(_install(tmp_path, ci_tool, str(ci_tool.wheels)))


def test_a_release_from_a_private_package_index(tmp_path: Path, ci_tool: ToolBuild) -> None:
    """The default form, ``site-reconciler==VERSION``, from the index pip is told of."""
    done = _install(
        tmp_path,
        ci_tool,
        f"site-reconciler=={VERSION}",
        PIP_INDEX_URL=_private_index(tmp_path, ci_tool),
    )
    _installed(done)


def _private_index(tmp_path: Path, tool: ToolBuild) -> str:
    """A package index holding the tool's wheel, as pip's ``PIP_INDEX_URL`` names one."""
    index = tmp_path / "simple" / "site-reconciler"
    index.mkdir(parents=True)
    wheel = tool.wheel
    (index / "index.html").write_text(f'<a href="{wheel.as_uri()}">{wheel.name}</a>\n')
    return (tmp_path / "simple").as_uri()


def _impostor_wheel(directory: Path) -> Path:
    """A wheel that calls itself the tool, at its version: its ``reconciler`` only says
    whose it is. What a committed directory could slip into a job."""
    directory.mkdir(parents=True)
    info = f"site_reconciler-{VERSION}.dist-info"
    files = {
        "impostor.py": "def main():\n    print('impostor, not the tool')\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: site-reconciler\nVersion: {VERSION}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "[console_scripts]\nreconciler = impostor:main\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = directory / f"site_reconciler-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.mark.parametrize("forge", INSTALLS)
def test_a_directory_named_as_the_release_does_not_replace_the_tool(
    tmp_path: Path, ci_tool: ToolBuild, forge: str
) -> None:
    """Issue 42: the default, ``site-reconciler==VERSION``, was taken for a directory when
    the checkout had one of that name, and a wheel committed there replaced the tool in the
    job. Only a value written as a path is a directory: the release comes from the index."""
    _impostor_wheel(tmp_path / "checkout" / f"site-reconciler=={VERSION}")
    done = _install(
        tmp_path,
        ci_tool,
        f"site-reconciler=={VERSION}",
        INSTALLS[forge],
        PIP_INDEX_URL=_private_index(tmp_path, ci_tool),
    )
    assert "impostor" not in done.stdout + done.stderr
    _installed(done)
    assert "RECONCILER_INSTALL is not written as a path (/, ./ or ../)" in done.stdout


@pytest.mark.parametrize("forge", INSTALLS)
def test_a_directory_of_the_checkout_written_as_a_path(
    tmp_path: Path, ci_tool: ToolBuild, forge: str
) -> None:
    """``./wheels``, as docs/ci.md writes it: the wheel in the checkout's directory."""
    (tmp_path / "checkout" / "wheels").mkdir(parents=True)
    shutil.copy(ci_tool.wheel, tmp_path / "checkout" / "wheels")
    _installed(_install(tmp_path, ci_tool, "./wheels", INSTALLS[forge]))


@pytest.fixture
def served_wheels(ci_tool: ToolBuild) -> Iterator[str]:
    """The wheel directory over HTTP on loopback, as a release page or an artefact store."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=ci_tool.wheels)
    with serving(handler) as url:
        yield url


def test_a_wheel_url(tmp_path: Path, ci_tool: ToolBuild, served_wheels: str) -> None:
    _installed(_install(tmp_path, ci_tool, f"{served_wheels}/{ci_tool.wheel.name}"))


@pytest.mark.slow
def test_a_git_ref(tmp_path: Path, ci_tool: ToolBuild) -> None:
    """``git+URL@REF``: pip builds the tool from the repository at that tag. (The copy of the
    sources lies outside pytest's temporary tree: they hold the sandbox's demo keys.)"""
    with tempfile.TemporaryDirectory(prefix="reconciler-git-") as scratch:
        repository = Path(scratch)
        for name in WHEEL_SOURCES:
            origin = REPO / name
            if origin.is_dir():
                shutil.copytree(origin, repository / name, symlinks=True,
                                ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
            else:
                shutil.copy(origin, repository / name)
        git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "-C", scratch]
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "release"],
                        ["tag", f"v{VERSION}"]):  # fmt: skip
            subprocess.run([*git, *command], check=True, capture_output=True)
        _installed(_install(tmp_path, ci_tool, f"git+{repository.as_uri()}@v{VERSION}"))


def test_an_empty_value_stops_the_job_naming_the_variable(
    tmp_path: Path, ci_tool: ToolBuild
) -> None:
    done = _install(tmp_path, ci_tool, "")
    assert done.returncode != 0
    assert "RECONCILER_INSTALL: is empty" in done.stderr
    assert "command not found" not in done.stderr


def test_a_directory_without_the_wheel_stops_the_job_saying_so(
    tmp_path: Path, ci_tool: ToolBuild
) -> None:
    (tmp_path / "empty").mkdir()
    done = _install(tmp_path, ci_tool, str(tmp_path / "empty"))
    assert done.returncode != 0
    assert "must hold one site_reconciler wheel" in done.stdout + done.stderr


@pytest.mark.slow
def test_a_bare_runner_gets_the_dependencies_from_the_configured_index(ci_tool: ToolBuild) -> None:
    """No cache at all: a Python with pip only, as a new hosted runner has, given the wheel's
    directory. The session's one such install (made with the runners' cache, which is what it
    installed less the tool: tests/support/ci_runs.py), checked here."""
    done = ci_tool.bare_install()
    JOB_LOGS.append(done.stdout + done.stderr)
    _installed(done)


def _gitlab_image_override() -> dict[str, object]:
    """The block docs/ci.md gives for running the GitLab jobs in the tool's image."""
    doc = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    start = doc.index("```yaml\n# .gitlab-ci.yml: the jobs in the container image")
    block = doc[start + len("```yaml\n") : doc.index("```", start + 3)]
    override: dict[str, object] = yaml.safe_load(block)
    assert override.pop("include") == [{"local": "ci/site-reconciler.gitlab-ci.yml"}]
    return override


@pytest.mark.slow
def test_the_gitlab_jobs_run_in_the_tools_image_as_docs_ci_says(make_team: TeamFactory) -> None:
    team = make_team("gitlab")
    team.gitlab_overrides = _gitlab_image_override()
    image = team.gitlab_overrides[".reconciler"]["image"]["name"]  # type: ignore[index]
    assert image.endswith(f"site-reconciler:{VERSION}")
    team.images[image] = True  # the image has the tool
    team.install = "/nowhere"  # an install step that ran would fail
    merged = team.merge()
    assert merged.apply.exit_code == EXIT_OK, merged.plan.log + merged.apply.log
    assert merged.applied and "Payments" in team.site.workspaces()
    assert f"reconciler, version {VERSION}" in merged.apply.log
