"""The ``reconciler`` entry point run in-process, exactly as the console script runs it.

``CliRunner.invoke(cli, ...)`` would skip ``reconciler.cli.main``, the layer that turns every
expected failure into one message and an exit code (and a bug into "Internal error"); fuzz
tests need that layer, so ``run_reconciler`` calls ``main`` itself inside click's isolation.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import structlog
from click.testing import CliRunner

from reconciler.cli import main


@dataclass(frozen=True, slots=True)
class CliOutcome:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_reconciler(*args: str) -> CliOutcome:
    """``reconciler ARGS...`` in this process: its exit code and what it printed."""
    argv = sys.argv
    code: int | str | None = 0
    with CliRunner().isolation() as (stdout, stderr, _):
        sys.argv = ["reconciler", *args]
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code
        finally:
            sys.argv = argv
            structlog.reset_defaults()  # a command may have pointed logging at this stderr
        out, err = stdout.getvalue().decode(), stderr.getvalue().decode()
    assert isinstance(code, int), f"exit with {code!r}"
    return CliOutcome(code, out, err)
