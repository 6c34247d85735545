"""Every option and command the tool tells a person about exists, as written.

A hint that says "raise the timeout" when there is no such option, or "run `reconciler state
list`" when there is no such command, sends a person in circles. These tests collect every
text the package can print (each string in its source, every command's rendered help) and
the README and docs, find each ``--option`` and ``reconciler COMMAND ... --option`` in them,
and look each one up in the real click command tree.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from reconciler.cli import cli
from tests.support.commands import command_at, commands, help_text

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reconciler"
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *sorted((ROOT / "docs").glob("*.md")),
    PACKAGE / "sandbox" / "README.md",
    ROOT / "examples" / "site.yaml",
    ROOT / "examples" / "quickstart" / "site.yaml",
]
MENTION = re.compile(r"(?<![\w.-])reconciler((?: +[^\s`;|&)>#(]+)+)")
LONG_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
NOT_OURS = {
    # options of other programs that the docs quote beside ours
    "--strict-markers",  # pytest, in pyproject's addopts
    "--fix",  # ruff
    "--durable",  # bench/ helper of the test PostgreSQL server (docs/state-backends.md)
    "--check",  # ruff format --check
    "--rm",  # docker run (docs/ci.md)
    "--user",  # docker run
    "--no-deps",  # pip wheel (docs/ci.md)
    "--upgrade",  # pip install --upgrade pip (README, the tests' set-up)
    "--build-arg",  # docker build (docs/ci.md)
    "--detach",  # git worktree add (CONTRIBUTING.md)
    "--size",  # bench/bench_plan.py (CONTRIBUTING.md)
}
CODE_BEFORE = re.compile(r"(?:^|[`/]|\$ |run:? |with: )$", re.MULTILINE)
"""What comes before ``reconciler`` when it is a command to type, not a word in a sentence."""


def options_of(command: click.Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if isinstance(param, click.Option):
            names |= {o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")}
    return names


ALL_OPTIONS = set().union(*(options_of(command_at(p)) for p in commands())) | options_of(cli)


def package_strings() -> Iterator[tuple[str, str]]:
    """Every string literal in the package (f-strings with their holes as ``X``)."""
    for source in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield f"{source.relative_to(ROOT)}:{node.lineno}", node.value
            elif isinstance(node, ast.JoinedStr):
                parts = [v.value if isinstance(v, ast.Constant) else "X" for v in node.values]
                yield f"{source.relative_to(ROOT)}:{node.lineno}", "".join(map(str, parts))


def texts() -> Iterator[tuple[str, str]]:
    yield from package_strings()
    for path in commands():
        yield f"`reconciler {' '.join(path)} --help`", help_text(path)
    yield "`reconciler --help`", help_text(())
    for document in DOCUMENTS:
        yield str(document.relative_to(ROOT)), document.read_text(encoding="utf-8")


def problems(text: str) -> list[str]:
    """Each command or option ``text`` names that the CLI does not have."""
    found = []
    for option in LONG_OPTION.findall(text):
        if option not in ALL_OPTIONS and option not in NOT_OURS:
            found.append(f"{option} is no option of any command")
    for mention in MENTION.finditer(text):
        words = mention.group(1).split()
        path: tuple[str, ...] = ()
        while words and isinstance(command_at(path), click.Group):
            if words[0] not in {p[-1] for p in commands() if p[:-1] == path}:
                break
            path, words = (*path, words[0]), words[1:]
        if not path:
            typed = CODE_BEFORE.search(text[: mention.start()].rsplit("\n", 1)[-1].lstrip())
            if typed and words and re.fullmatch(r"[a-z]+", words[0]):
                found.append(f"`reconciler {words[0]}`: no such command")
            continue
        if isinstance(command_at(path), click.Group) and words and words[0].isalpha():
            found.append(f"`reconciler {' '.join(path)} {words[0]}`: no such command")
        accepted = options_of(command_at(path))
        for word in words:
            option = word.split("=")[0].rstrip(".,:'\"")
            if LONG_OPTION.fullmatch(option) and option not in accepted:
                found.append(f"`reconciler {' '.join(path)}` has no option {option}")
    return found


@pytest.mark.slow
def test_every_option_and_command_named_anywhere_exists() -> None:
    report = [f"{where}: {problem}" for where, text in texts() for problem in problems(text)]
    assert report == []


@pytest.mark.parametrize(
    "text",
    [
        "raise the --deadline",
        "run `reconciler state list`",
        "reconciler export --replace X",
        "reconciler plan site/ --auto-approve",
    ],
)
def test_the_check_catches_an_option_or_command_that_does_not_exist(text: str) -> None:
    assert problems(text) != []


def test_the_check_reads_a_mention_the_way_a_shell_would() -> None:
    assert problems("reconciler apply 'my plan.json' --sandbox --state-dir x") == []
    assert problems("`reconciler COMMAND --help` says more") == []
    assert problems("the site-reconciler plan --format json") == []
