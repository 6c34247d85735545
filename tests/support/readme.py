"""The README's command blocks, read as a person copies them, and run as written.

Shared by the tests that run the README's tour, targeted commands and pipeline outputs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_runner import CliOutcome, run_reconciler

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def code_block(after_heading: str) -> list[str]:
    """The lines of the first ``sh`` block after a heading, comments and blanks dropped,
    continuation lines joined."""
    rest = README[README.index(after_heading) :]
    block = rest[rest.index("```sh\n") + 6 :]
    block = block[: block.index("```")]
    commands: list[str] = []
    for line in block.replace("\\\n", " ").splitlines():
        code = line.split("  #")[0].strip()
        if code and not code.startswith("#"):
            commands.append(code)
    return commands


def copy_examples(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def run(words: list[str], cwd: Path) -> CliOutcome:
    """A README line (``reconciler ...``, split as a shell would) run in ``cwd``."""
    assert words[0] == "reconciler", words
    result = run_reconciler(*words[1:], cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result
