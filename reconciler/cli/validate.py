"""``reconciler validate``: placeholder until the manifest module lands."""

from __future__ import annotations

import click

from reconciler.cli import cli


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def validate(paths: tuple[str, ...]) -> int:
    """Check a site manifest (file or directory) and report every problem."""
    raise click.UsageError("not implemented yet")
