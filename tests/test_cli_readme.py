"""The README's commands run as written: its manifest and the plan shown for it, the main job,
the tour, the test command CI runs, and a command table that names every command; and what
moved from the README to docs/ (the full command table, shell completion, a deletion's plan)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reconciler.errors import EXIT_OK
from tests.support.cli_runner import run_reconciler
from tests.support.commands import command_at, commands
from tests.support.readme import ROOT, code_block, copy_examples, document, fenced_block, run
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
    assert tour[0] == ". .venv/bin/activate" and len(tour) == 10
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


@pytest.mark.parametrize(
    ("name", "heading"),
    [("README.md", "## Commands and exit codes"), ("docs/commands.md", "## At a glance")],
)
def test_the_command_table_names_every_command(name: str, heading: str) -> None:
    """The README's short table (a row may name several commands) and the full one of
    docs/commands.md (one row a command, with its options)."""
    text = document(name)
    table = text[text.index(heading) :].split("\n\n")[1]
    named = set()
    for row in table.splitlines()[2:]:
        for command in re.findall(r"`([a-z][^`]*)`", row.split(" | ")[0]):
            words = command.split()
            path = (
                (words[0], words[1]) if words[0] in ("state", "sandbox", "review") else (words[0],)
            )
            named.add(path)
    leaves = {p for p in commands() if not hasattr(command_at(p), "commands")}
    assert named == leaves


def test_the_readme_manifest_is_the_quickstart_example_and_plans_as_shown(
    tmp_path: Path,
) -> None:
    """The manifest the README shows is ``examples/quickstart/site.yaml`` as it is, and the
    plan under it is, line for line, what the command it names prints for it on a fresh
    embedded sandbox."""
    heading = "## A manifest, and the plan it gives"
    example = ROOT / "examples" / "quickstart" / "site.yaml"
    assert fenced_block(heading, "yaml") == example.read_text(encoding="utf-8")
    command, _, shown = fenced_block(heading, "text").partition("\n")
    assert command == "$ reconciler plan examples/quickstart/site.yaml --sandbox"
    work = copy_examples(tmp_path)
    valid = run(["reconciler", "validate", "examples/quickstart/site.yaml"], work)
    assert valid.returncode == EXIT_OK, valid.stdout
    planned = run(shlex.split(command[2:]), work)
    assert planned.returncode == EXIT_OK, planned.stderr
    assert planned.stdout == shown


def test_the_deletion_docs_safety_shows_is_what_plan_prints(tmp_path: Path) -> None:
    """docs/safety.md's plan of a deletion (moved there from the README): the example
    applied, then judy added to Legal, Engineering Docs dropped and prune switched on."""
    command, _, shown = fenced_block(
        "A deletion, as a plan shows it", "text", document("docs/safety.md")
    ).partition("\n")
    work = copy_examples(tmp_path)
    applied = run(
        ["reconciler", "apply", "examples/site.yaml", "--sandbox", "--auto-approve"], work
    )
    assert applied.returncode == EXIT_OK, applied.stderr
    manifest = work / "examples" / "site.yaml"
    site = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    legal = next(ws for ws in site["workspaces"] if ws["name"] == "Legal")
    legal["users"].append("judy")
    site["workspaces"].remove(
        next(ws for ws in site["workspaces"] if ws["name"] == "Engineering Docs")
    )
    site["policy"]["prune"] = True
    manifest.write_text(yaml.safe_dump(site, sort_keys=False), encoding="utf-8")
    assert command == "$ reconciler plan examples/site.yaml --sandbox"
    planned = run(shlex.split(command[2:]), work)
    assert planned.returncode == EXIT_OK, planned.stderr
    assert planned.stdout == shown


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """``.ci/run`` says it runs the README's test command as written: its last line is it."""
    readme_command = code_block("Set up and run the tests")
    assert len(readme_command) == 1
    assert document(".ci/run").rstrip("\n").splitlines()[-1] == readme_command[0]


def test_shell_completion_works_as_documented(tmp_path: Path) -> None:
    lines = code_block("## Shell completion", document("docs/commands.md"))
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


def _anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces
    as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_link_of_the_readme_and_docs_leads_somewhere() -> None:
    """The README is a front door into docs/: each relative link names a file that exists,
    and each ``#anchor`` a heading of it."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        prose = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (
                anchor and anchor not in _anchors(linked.read_text(encoding="utf-8"))
            ):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_readme_is_a_front_door_read_in_minutes() -> None:
    """Issue 43: at most 200 lines; the reference is in docs/, linked from it."""
    assert len(document("README.md").splitlines()) <= 200
    assert (ROOT / "LICENSE").exists() and (ROOT / "CONTRIBUTING.md").exists()
