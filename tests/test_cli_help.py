"""Help, exit codes, the schema and the shipped example: what a new user reads first."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from reconciler.sandbox.server import running_sandbox
from tests.support.cli_runner import run_reconciler
from tests.support.commands import command_at, commands, help_text
from tests.support.readme import ROOT

EXIT_CODES = {
    ("access",): {0, 1},
    ("codeowners",): {0, 1},
    ("validate",): {0, 1},
    ("expire",): {0, 1},
    ("plan",): {0, 1, 2},
    ("apply",): {0, 1, 2, 3, 4, 130},  # 2: with --detailed-exitcode, changed
    ("drift",): {0, 1, 2},
    ("show",): {0, 1, 3},
    ("export",): {0, 1, 4},
    ("adopt",): {0, 1, 4},
    ("schema",): {0},
    ("state", "show"): {0, 1},
    ("state", "history"): {0, 1},
    ("state", "diff"): {0, 1},
    ("state", "forget"): {0, 1, 4},
    ("state", "mv"): {0, 1, 4},
    ("state", "migrate"): {0, 1, 3, 4},
    ("sandbox", "serve"): {0, 1},
    ("sandbox", "reset"): {0, 1},
    ("review", "start"): {0, 1},
    ("review", "check"): {0, 1},
    ("review", "apply"): {0, 1},
    ("review", "close"): {0, 1},
}
"""Each command's own exit codes: export and adopt never say "there are changes" (2)."""


def section(text: str, title: str) -> list[str]:
    """The indented lines under ``title:`` in a help text."""
    lines = text.splitlines()
    start = lines.index(f"  {title}:") + 1
    body = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        body.append(line.strip())
    return body


def leaf_commands() -> list[tuple[str, ...]]:
    return [p for p in commands() if not hasattr(command_at(p), "commands")]


def test_every_command_is_in_the_table_of_exit_codes() -> None:
    assert set(leaf_commands()) == set(EXIT_CODES)


@pytest.mark.parametrize("path", sorted(EXIT_CODES), ids=" ".join)
def test_each_command_lists_its_own_exit_codes(path: tuple[str, ...]) -> None:
    listed = {int(line.split()[0]) for line in section(help_text(path), "Exit codes")}
    assert listed == EXIT_CODES[path]


@pytest.mark.parametrize("path", [*sorted(EXIT_CODES), ("state",), ("sandbox",)], ids=" ".join)
def test_each_help_ends_with_real_examples_of_that_command(path: tuple[str, ...]) -> None:
    text = help_text(path).rstrip()
    examples = section(text, "Examples")
    assert 1 <= len(examples) <= 3
    assert text.endswith(examples[-1])  # the examples close the help
    for example in examples:
        assert example.startswith("reconciler " + " ".join(path)), example
    # (tests/test_cli_hints.py checks every option the examples use against the command)


def test_the_top_help_shows_the_pipeline_in_three_lines() -> None:
    pipeline = section(help_text(()), "The pipeline, in three steps")
    assert [line.split()[:2] for line in pipeline] == [
        ["reconciler", "validate"],
        ["reconciler", "plan"],
        ["reconciler", "apply"],
    ]


def test_the_sandbox_seed_option_names_the_seed_shipped_with_the_tool() -> None:
    text = " ".join(help_text(("plan",)).split())
    assert "--sandbox-seed" in text and "the example seed shipped inside the tool" in text
    assert "examples/sandbox-seed.yaml" not in text


def test_schema_prints_the_schema_the_example_points_editors_at() -> None:
    result = run_reconciler("schema")
    assert result.exit_code == 0
    printed = json.loads(result.stdout)
    example = ROOT / "examples" / "site.yaml"
    first = example.read_text(encoding="utf-8").splitlines()[0]
    found = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert found, first
    shipped = (example.parent / found.group(1)).resolve()
    assert shipped == ROOT / "schemas" / "site.schema.json"
    assert printed == json.loads(shipped.read_text(encoding="utf-8"))


def test_the_examples_directory_validates_as_one_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples/site.yaml`` is the design card's example, and the directory form works on
    ``examples/`` (every *.yaml there is a manifest; the sandbox state is in .reconciler/)."""
    monkeypatch.chdir(ROOT)
    assert (ROOT / "examples" / "site.yaml").is_file()
    result = run_reconciler("validate", "examples/")
    assert result.exit_code == 0, result.output
    assert result.stdout == "examples/: valid (8 workspaces, 6 groups)\n"


@pytest.mark.e2e
def test_sandbox_serve_without_a_seed_serves_the_shipped_example() -> None:
    """``sandbox serve`` needs no file from a source checkout: its default is the seed
    shipped in the package (a pip-installed user has no examples/)."""
    with running_sandbox(None) as url:
        state = httpx.get(f"{url}/_sandbox/state").json()
    assert {u["username"] for u in state["users"]} >= {"admin", "alice", "oscar"}
    assert [w["name"] for w in state["workspaces"]] == ["Legacy Scans"]
