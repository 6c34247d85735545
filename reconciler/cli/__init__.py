"""The ``reconciler`` command line: a thin layer that parses arguments and calls one function.

Each sub-command lives in its own module and registers itself on ``cli``. ``main`` turns every
expected failure (a ``ReconcilerError``) into one message on stderr and its exit code, so a
user never sees a traceback for a problem they can fix.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

import click

from reconciler import __version__, clock
from reconciler.environment import TODAY, read
from reconciler.errors import EXIT_ERROR, EXIT_INTERRUPTED, ReconcilerError


def _leave_rich_to_those_that_draw() -> None:
    """Keep rich out of start-up: only colours and progress bars need it, and import it then.

    Two libraries import it for features this tool never uses: structlog's console renderer,
    to draw tracebacks (``logs.redact`` renders them as plain text, without locals), and httpx's
    own command line (``httpx._main``, with pygments and click's extras). Together some 80 ms
    of every start-up. structlog is imported here while rich is hidden from it, and httpx's
    command line is marked as missing, which httpx handles (its ``main`` then says so).
    """
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # "import rich" raises ImportError
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


_leave_rich_to_those_that_draw()

SITE_ERROR = "error: invalid manifest, bad credentials, unreachable site, refused call"
LOCKED = (4, "the records are locked by another command, still at --lock-timeout: retry later")


def epilog(codes: Sequence[tuple[int, str]], examples: Sequence[str]) -> str:
    """The end of a command's help: the exit codes it can end with, then real examples.

    Each command lists only its own codes (``export`` never says "there are changes"), and
    the examples are checked against the command tree by the tests, so they stay runnable.
    """
    width = max(len(str(code)) for code, _ in codes)
    code_lines = "\n".join(f"  {code:<{width}}  {meaning}" for code, meaning in codes)
    example_lines = "\n".join(f"  {example}" for example in examples)
    return f"\b\nExit codes:\n{code_lines}\n\n\b\nExamples:\n{example_lines}\n"


COMMAND_MODULES = {
    "access": "reconciler.cli.access",
    "codeowners": "reconciler.cli.codeowners",
    "validate": "reconciler.cli.validate",
    "schema": "reconciler.cli.validate",
    "plan": "reconciler.cli.plan",
    "drift": "reconciler.cli.plan",
    "expire": "reconciler.cli.expire",
    "apply": "reconciler.cli.apply",
    "show": "reconciler.cli.show",
    "export": "reconciler.cli.onboard",
    "adopt": "reconciler.cli.onboard",
    "state": "reconciler.cli.state",
    "review": "reconciler.cli.access_review",
    "sandbox": "reconciler.cli.sandbox",
}
"""Where each sub-command is defined. A command imports only its own module: ``plan`` does not
pay for the sandbox server, the PostgreSQL driver or export (start-up is part of every run)."""


class LazyCommands(click.Group):
    """A group whose sub-commands are imported when asked for (each module registers itself)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(COMMAND_MODULES[cmd_name])
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyCommands,
    help="""Manage the workspaces and user groups of a file-sharing site as code.

\b
The pipeline, in three steps:
  reconciler validate site/              check the manifest (offline)
  reconciler plan site/ -o plan.json     read the site; show and save what would change
  reconciler apply plan.json             make exactly those changes (asks first)

Try it with no site at all: add --sandbox to plan and apply. `reconciler COMMAND --help`
shows each command's options, exit codes and examples.
""",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="reconciler")
def cli() -> None:
    pass


GC_FIRST_GENERATION = 100_000
"""Objects allocated (and not yet freed) before the young generation is collected (Python's
default: 700). A large plan makes millions of short-lived objects and few cycles: with the
default the collector ran ~500 times a plan (~0.25 s). What survives is mostly the site's
model, which lives until exit: at 50,000, a 200-team onboarding stopped once, between its
read and its first write, for 13 ms, to free 742 objects of 50,000. Collections still
happen, so a long ``sandbox serve`` is safe."""


def _warn_of_a_fixed_clock() -> None:
    """Say so, on every command, when ``RECONCILER_TODAY`` moves the day expiry dates are
    judged on: set by mistake in a pipeline, it would make an apply remove access that has
    not ended (or keep access that has), with nothing in the output to tell."""
    fixed = read(os.environ, TODAY)
    if fixed is None:
        return
    try:
        day = clock.parse_day(fixed)
    except clock.BadDay:
        return  # the command that reads the clock refuses it, with the reason
    real = datetime.now(UTC).date()
    if day != real:
        click.echo(
            f"Warning: {TODAY.name} sets the day to {day} (today is {real}, UTC): expiry dates "
            f"are judged, and expired access removed, as on that day. It exists for tests; "
            f"unset it.",
            err=True,
        )


def main() -> None:
    """Entry point of the console script. The installed command (``__main__.run``) loads the
    modules with the garbage collector off: they make some hundred thousand objects that
    live until exit, and at Python's default threshold it ran 35 times on the way, to find
    next to nothing (10 ms)."""
    gc.freeze()  # what start-up built so far lives until exit: never scan it again
    gc.set_threshold(GC_FIRST_GENERATION, 20, 20)
    gc.enable()
    _warn_of_a_fixed_clock()
    try:
        result = cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except ReconcilerError as exc:
        interrupted = exc.exit_code == EXIT_INTERRUPTED  # a person's choice, not an error
        click.echo(exc.message if interrupted else f"Error: {exc.message}", err=True)
        if exc.hint:
            click.echo(exc.hint, err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a bug: say so plainly, keep the traceback for who asks
        if os.environ.get("RECONCILER_DEBUG"):
            raise
        click.echo(
            f"Internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in site-reconciler. Run again with RECONCILER_DEBUG=1 to see the "
            "traceback, and report it.",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    sys.exit(result if isinstance(result, int) else 0)
