"""``reconciler expire``: take the expired entries out of the manifest's files.

Offline, like ``validate``: nothing is read from or sent to the site (the plan already removes
expired access; this tidies the files, for the usual pull request). Details:
docs/commands.md.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from reconciler import clock
from reconciler.cli import cli, epilog
from reconciler.cli.files import rewrite_manifest_file
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import at_option
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.manifest.expire import expired_entries, tidy

EPILOG = epilog(
    [
        (0, "every expired entry was removed (or there was none)"),
        (
            1,
            "the manifest is invalid; an entry could not be removed in place (named); with "
            "--check: there are expired entries",
        ),
    ],
    ["reconciler expire examples/ --check", "reconciler expire examples/ --at 2027-01-01"],
)


@cli.command(epilog=EPILOG, short_help="Remove expired entries from the manifest's files.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True), metavar="PATH...")
@at_option
@click.option("--check", is_flag=True, help="List the expired entries; change nothing.")
def expire(paths: tuple[str, ...], at: date | None, check: bool) -> int:
    """Remove every entry whose expires: date has passed from the manifest's files: a member
    or an account, and every reference to an expired account. Only those lines or items go;
    comments and formatting stay. Nothing is sent to the site."""
    manifest = load_desired(paths)
    day = at or clock.today()
    if check:
        found = expired_entries(manifest.desired, day)
        for grant in found:
            click.echo(f"{grant.source}: {grant.ended()}")
        click.echo(f"{len(found)} expired entr{'y' if len(found) == 1 else 'ies'} ({day}).")
        return EXIT_ERROR if found else EXIT_OK
    done = tidy(manifest.desired, day)
    for file, text in done.files.items():
        rewrite_manifest_file(Path(file), text)
    for grant in sorted(done.removed, key=lambda g: (g.source.file, g.source.line or 0)):
        click.echo(f"removed {grant.source}: {grant.ended()}")
    for grant, why in done.refused:
        click.echo(f"not removed {grant.source}: {grant.ended()}; {why}: edit it by hand")
    removed = len(done.removed)
    click.echo(
        f"Removed {removed} expired entr{'y' if removed == 1 else 'ies'} from "
        f"{len(done.files)} file(s) ({day})."
        + (f" {len(done.refused)} could not be removed in place." if done.refused else "")
    )
    return EXIT_ERROR if done.refused else EXIT_OK
