"""The ``reconciler`` command line: a thin layer that parses arguments and calls one function.

Each sub-command lives in its own module and registers itself on ``cli``. ``main`` turns every
expected failure (a ``ReconcilerError``) into one message on stderr and its exit code, so a
user never sees a traceback for a problem they can fix.
"""

from __future__ import annotations

import os
import sys

import click

from reconciler import __version__
from reconciler.errors import EXIT_ERROR, ReconcilerError

EXIT_CODES_HELP = """\b
Exit codes:
  0  success (plan/drift: no changes)
  1  error: invalid manifest, bad credentials, unreachable site, refused call
  2  plan --detailed-exitcode / drift: there are changes
  3  refused for safety: unsafe or stale plan, no approval
"""


@click.group(
    help="Manage the workspaces and user groups of a file-sharing site as code.\n\n"
    + EXIT_CODES_HELP,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="reconciler")
def cli() -> None:
    pass


def _register_commands() -> None:
    # Imported here so that each module can import ``cli`` without a cycle.
    from reconciler.cli import commands  # noqa: F401


def main() -> None:
    """Entry point of the console script."""
    _register_commands()
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
        click.echo(f"Error: {exc.message}", err=True)
        if exc.hint:
            click.echo(exc.hint, err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
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
