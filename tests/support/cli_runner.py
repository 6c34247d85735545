"""The ``reconciler`` entry point run in-process, exactly as the console script runs it.

This is the one way tests run the command for its behaviour. A fresh interpreter costs most
of a second a run; in-process the same ``main`` runs in milliseconds, so the suite can run the
command hundreds of times. Only the tests about the process itself (the installed script,
signals, a terminal, pre-commit) start a real one, and they are marked ``e2e``.

``CliRunner.invoke(cli, ...)`` would skip ``reconciler.cli.main``, the layer that turns every
expected failure into one message and an exit code (and a bug into "Internal error"); the tests
need that layer, so ``run_reconciler`` calls ``main`` itself inside click's isolation. It gives
the command what a child process would get -- its own working directory, exactly the
environment it is given, standard input -- and puts back everything ``main`` changes in the
process (logging, the garbage collector), so one run never leaks into the next.
"""

from __future__ import annotations

import gc
import os
import sys
import types
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

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

    @property
    def returncode(self) -> int:
        """``exit_code`` under the name ``subprocess`` gives it, so a test reads the same
        whether the command ran in-process or as a real process."""
        return self.exit_code


def run_reconciler(
    *args: str,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> CliOutcome:
    """``reconciler ARGS...`` in this process: its exit code and what it printed.

    ``cwd`` is the directory it runs in; ``env``, when given, is its whole environment (as
    ``subprocess.run(env=...)`` gives it), otherwise it sees this process's; ``input`` is what
    it reads on standard input.
    """
    code: int | str | None = 0
    with _as_a_child(cwd, env), CliRunner().isolation(input=input) as (stdout, stderr, _):
        argv = sys.argv
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


@contextmanager
def _as_a_child(
    cwd: str | os.PathLike[str] | None, env: Mapping[str, str] | None
) -> Iterator[None]:
    """The working directory and environment of a child process, and the garbage collector
    as it was: ``main`` freezes what start-up built and raises the collection threshold,
    right for a short-lived process, not for a test session that runs it a thousand times.
    The console script's ``__main__`` is a module of no package."""
    here = Path.cwd()
    saved_environment = dict(os.environ)
    threshold = gc.get_threshold()
    main_module = sys.modules["__main__"]
    try:
        # click names the program after ``__main__``: under ``python -m pytest`` it would be
        # "python -m pytest.reconciler" (in usage lines, and shell completion's variable)
        sys.modules["__main__"] = types.ModuleType("__main__")
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        sys.modules["__main__"] = main_module
        os.chdir(here)
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_environment)
        gc.unfreeze()
        gc.set_threshold(*threshold)
