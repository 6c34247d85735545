"""The command blocks of the README and of docs/, read as a person copies them, and run as
written.

Shared by the tests that run the README's manifest, main job, tour and pipeline, and the
blocks docs/ shows (targeted commands, shell completion, the settings file, copying the CI
templates).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_runner import CliOutcome, run_reconciler

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def document(name: str) -> str:
    """A document of the repository by its path, e.g. ``docs/pipelines.md``."""
    return (ROOT / name).read_text(encoding="utf-8")


def fenced_block(after: str, language: str = "sh", text: str = README) -> str:
    """The text of the first ```` ```language ```` block after ``after`` (a heading or a
    sentence of ``text``), exactly as written."""
    rest = text[text.index(after) :]
    fence = f"```{language}\n"
    block = rest[rest.index(fence) + len(fence) :]
    return block[: block.index("```")]


def code_block(after_heading: str, text: str = README) -> list[str]:
    """The lines of the first ``sh`` block after a heading, comments and blanks dropped,
    continuation lines joined."""
    commands: list[str] = []
    for line in fenced_block(after_heading, "sh", text).replace("\\\n", " ").splitlines():
        code = line.split("  #")[0].strip()
        if code and not code.startswith("#"):
            commands.append(code)
    return commands


def copy_examples(tmp_path: Path) -> Path:
    """``examples/`` as a fresh clone has it: no sandbox or records of an earlier run."""
    shutil.copytree(
        ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns(".reconciler")
    )
    return tmp_path


def run(words: list[str], cwd: Path) -> CliOutcome:
    """A README line (``reconciler ...``, split as a shell would) run in ``cwd``."""
    assert words[0] == "reconciler", words
    result = run_reconciler(*words[1:], cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result
