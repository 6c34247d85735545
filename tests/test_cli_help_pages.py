"""Every ``--help`` page is short, and every example it shows runs as shown (issue 31 item 8).

The examples run in a checkout of this repository where the README's main job ran (the
example site applied to the embedded sandbox), each in a fresh copy of it (with a plan saved
as ``plan.json`` for those that use one, and a review started and decided for those that
name one), with the real CLI in-process. ``sandbox serve``
runs until Ctrl-C, so its examples run as a real process, stopped with SIGINT once serving.
"""

from __future__ import annotations

import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import click
import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.sandbox.settings import SWITCHES
from tests.support.cli_runner import run_reconciler
from tests.support.commands import command_at, commands, help_text
from tests.support.loopback import reconciler_command
from tests.support.readme import ROOT
from tests.support.review import fill, keep

REVIEW_FILE = "2026-q1.csv"
"""The review file the ``review`` examples name: started and decided for those after start."""

MAX_LINES = 60
"""At the 80 columns of a pipe or a small terminal: the options, the exit codes, examples."""

PAGES = [(), *commands()]


def examples(path: tuple[str, ...]) -> list[str]:
    lines = help_text(path).splitlines()
    if "  Examples:" not in lines:
        return []
    return [line.strip() for line in lines[lines.index("  Examples:") + 1 :] if line.strip()]


EXAMPLES = sorted({example for path in PAGES for example in examples(path)})


@pytest.mark.parametrize("path", PAGES, ids=lambda path: " ".join(path) or "reconciler")
def test_each_help_page_is_short(path: tuple[str, ...]) -> None:
    text = help_text(path)
    assert len(text.splitlines()) <= MAX_LINES, text
    if path and not hasattr(command_at(path), "commands"):
        assert 1 <= len(examples(path)) <= 3


@pytest.fixture(scope="module")
def main_job_ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout after the README's main job: the example applied to the embedded sandbox."""
    work = tmp_path_factory.mktemp("checkout")
    shutil.copytree(ROOT / "examples", work / "examples")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(work)
        done = run_reconciler("apply", "examples/site.yaml", "--sandbox", "--auto-approve")
        assert done.exit_code == EXIT_OK, done.output
    return work


@pytest.mark.parametrize("example", [e for e in EXAMPLES if " sandbox serve " not in e])
def test_each_example_runs_as_shown(
    example: str, main_job_ran: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a copy of that checkout, with a plan saved as plan.json (a plan names its records
    by their path, so it is made in the copy)."""
    work = tmp_path / "checkout"
    shutil.copytree(main_job_ran, work)
    monkeypatch.chdir(work)
    if "plan.json" in example:
        saved = run_reconciler("plan", "examples/", "--sandbox", "-o", "plan.json")
        assert saved.exit_code == EXIT_OK, saved.output
    if REVIEW_FILE in example and " review start " not in example:  # a review, decided
        started = run_reconciler("review", "start", "examples/", "--sandbox", "-o", REVIEW_FILE)
        assert started.exit_code == EXIT_OK, started.output
        fill(work / REVIEW_FILE, lambda row: keep())
    words = shlex.split(example)
    assert words[0] == "reconciler"
    redirect = words.index(">") if ">" in words else None
    arguments = words[1:redirect]
    ran = run_reconciler(*arguments)
    assert ran.exit_code in (EXIT_OK, EXIT_CHANGES), ran.output
    assert "Traceback" not in ran.output and "Internal error" not in ran.output
    if redirect is not None:  # as the shell would
        (work / words[redirect + 1]).write_text(ran.stdout, encoding="utf-8")


@pytest.mark.e2e
@pytest.mark.parametrize("example", [e for e in EXAMPLES if " sandbox serve " in e])
def test_each_sandbox_serve_example_serves_until_ctrl_c(example: str, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*reconciler_command(), *shlex.split(example)[1:]],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    announced = process.stderr.readline()  # written once the server accepts connections
    assert announced.startswith("Sandbox site at http://127.0.0.1:"), announced
    assert (tmp_path / "url").read_text().startswith("http://127.0.0.1:")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == EXIT_OK
    process.stderr.close()


def test_every_sandbox_switch_is_explained_in_the_docs() -> None:
    """The help names the switches; docs/commands.md says what each does, in its own words."""
    docs = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    for switch in SWITCHES:
        flag = switch.flag + (f" {switch.metavar}" if switch.metavar else "")
        assert f"| `{flag}` | {switch.help} |" in docs, switch.flag
        assert switch.flag in help_text(("sandbox", "serve"))


def test_every_command_and_option_is_in_the_docs() -> None:
    """The README names the commands and points into docs/ for the rest: every command and
    every long option of each is named on some page of docs/ (the help pages name them too,
    but say little of what each does)."""
    docs = "\n".join(page.read_text(encoding="utf-8") for page in (ROOT / "docs").glob("*.md"))
    missing = []
    for path in commands():
        if f"`reconciler {' '.join(path)}" not in docs and f"`{' '.join(path)}" not in docs:
            missing.append(" ".join(path))
        for param in command_at(path).params:
            if isinstance(param, click.Option):
                for option in (*param.opts, *param.secondary_opts):
                    if option.startswith("--") and not re.search(rf"{option}(?![\w-])", docs):
                        missing.append(f"{' '.join(path)} {option}")
    assert missing == []
