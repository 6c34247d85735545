"""The README's commands run as written: the main job, the tour, shell completion, and a
command table that names every command."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.errors import EXIT_OK
from tests.support.cli_runner import run_reconciler
from tests.support.commands import command_at, commands
from tests.support.readme import README, code_block, copy_examples, run
from tests.support.terminal import Terminal


def test_the_main_job_runs_from_a_fresh_checkout(tmp_path: Path) -> None:
    line = code_block("## On a fresh machine")[0]
    steps = [step.strip() for step in line.split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ".venv/bin/pip install -q ."]
    work = copy_examples(tmp_path)
    outputs = []
    for step in steps[2:]:
        words = shlex.split(step)
        assert words[0] == ".venv/bin/reconciler"
        result = run(["reconciler", *words[1:]], work)
        assert result.returncode == EXIT_OK, result.stderr
        outputs.append(result.stdout)
    assert "No changes. The site matches the manifest." in outputs[-1]
    assert (work / "examples" / ".reconciler" / "sandbox").is_dir()


def set_up_as_written(tmp_path: Path) -> Path:
    """A checkout right after the README's set-up command: ``.venv/`` holds ``reconciler`` (the
    environment these tests run in stands for the one ``pip install .`` makes) and the main job
    ran, each of its steps as written."""
    work = copy_examples(tmp_path)
    venv = Path(sys.executable).parent.parent
    assert (venv / "bin" / "activate").is_file(), "the tests run in a virtual environment"
    (work / ".venv").symlink_to(venv, target_is_directory=True)
    steps = [step.strip() for step in code_block("## On a fresh machine")[0].split("&&")]
    for step in steps[2:]:
        result = subprocess.run(
            ["bash", "-c", step], cwd=work, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == EXIT_OK, (step, result.stderr)
    return work


@pytest.mark.e2e
@pytest.mark.slow
def test_the_tour_runs_as_written_right_after_the_set_up(tmp_path: Path) -> None:
    """Every line of the tour, in order, in one shell whose first line activates the set-up's
    environment; the sandbox is reset, so apply has work to do: it asks, on a real terminal."""
    work = set_up_as_written(tmp_path)
    tour = code_block("## A 30-second tour")
    assert tour[0] == ". .venv/bin/activate" and len(tour) == 9
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CI")}
    env["PATH"] = os.pathsep.join(  # a shell without the tests' environment on its PATH
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(sys.prefix)
    )
    for line in tour[1:]:
        script = f"{tour[0]} && {line}"
        if shlex.split(line)[1] == "apply":
            bash = shutil.which("bash")
            assert bash is not None
            terminal = Terminal("-c", script, cwd=work, env=env, program=[bash])
            terminal.expect(r"Only 'yes' will be accepted:$")
            terminal.type("yes\r")
            assert terminal.wait() == EXIT_OK
            assert "Apply complete: 14 done" in terminal.screen.text
            continue
        result = subprocess.run(
            ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == EXIT_OK, (line, result.stderr)
        assert "Traceback" not in result.stderr
    # export read the sandbox the tour applied to: the workspaces it created are there
    exported = (work / "live.yaml").read_text(encoding="utf-8")
    assert "name: Finance" in exported and "name: Payments" in exported


def test_the_command_table_names_every_command() -> None:
    table = README[README.index("## Commands and exit codes") :]
    rows = re.findall(r"^\| `([a-z][^`]*)` \|", table, re.MULTILINE)
    named = set()
    for row in rows:
        words = row.split()
        path = (words[0], words[1]) if words[0] in ("state", "sandbox", "review") else (words[0],)
        named.add(path)
    leaves = {p for p in commands() if not hasattr(command_at(p), "commands")}
    assert named == leaves


def test_shell_completion_works_as_documented(tmp_path: Path) -> None:
    lines = code_block("### Shell completion")
    shells = [re.findall(r"=(\w+)_source", line) for line in lines]
    assert shells == [["bash"], ["zsh"], ["fish"]]
    for shell in ("bash", "zsh", "fish"):
        env = {**os.environ, "_RECONCILER_COMPLETE": f"{shell}_source"}
        script = run_reconciler(env=env)
        assert script.returncode == 0 and "_RECONCILER_COMPLETE" in script.stdout, shell
    env = {
        **os.environ,
        "_RECONCILER_COMPLETE": "bash_complete",
        "COMP_WORDS": "reconciler plan --show-un",
        "COMP_CWORD": "2",
    }
    completed = run_reconciler(env=env)
    assert "plain,--show-unmanaged" in completed.stdout.splitlines()
