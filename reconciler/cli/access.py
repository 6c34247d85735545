"""``reconciler access``: who can reach which workspace, how, and since when -- for reviews."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from reconciler import aio
from reconciler.access.job import access_report
from reconciler.access.model import AccessReport, ReportScope
from reconciler.access.since import MAX_PREVIOUS_BYTES, MAX_PREVIOUS_DEPTH, read_previous
from reconciler.cli import SITE_ERROR, cli, epilog
from reconciler.cli.files import write_private_file
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import SiteOptions, at_option, format_option, site_options
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.site_choice import locate, locate_manifest, open_site
from reconciler.errors import EXIT_OK
from reconciler.render.access import ACCESS_FORMATS, render_access

ACCESS_EPILOG = epilog(
    [
        (0, "the report was made"),
        (
            1,
            SITE_ERROR + "; a --since file that is not an earlier report of this site (or is "
            f"over {MAX_PREVIOUS_BYTES // 2**20} MiB or {MAX_PREVIOUS_DEPTH} levels deep); "
            "no such --user",
        ),
    ],
    [
        "reconciler access examples/site.yaml --sandbox --format html -o access.html",
        "reconciler access examples/ --sandbox --format json -o 2026-q4.json",
    ],
)


@cli.command(epilog=ACCESS_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@site_options
@format_option(ACCESS_FORMATS)
@click.option(
    "--user",
    "users",
    multiple=True,
    metavar="NAME",
    help="Only this person (repeatable).",
)
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    metavar="NAME",
    help="Only this workspace, or glob (repeatable).",
)
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to FILE (mode 600).",
)
@click.option(
    "--since",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PREVIOUS.json",
    help="Say what changed since this JSON report.",
)
@at_option
def access(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    fmt: str,
    users: tuple[str, ...],
    workspaces: tuple[str, ...],
    out: Path | None,
    since: Path | None,
    at: date | None,
) -> int:
    """Report who can reach which workspace on the site, how, and with what; change nothing.

    Findings first; with a manifest (PATHS), whether it declares each access. Details:
    docs/access.md.
    """
    previous = (read_previous(since), str(since)) if since is not None else None
    scope = ReportScope(users, workspaces)

    async def run() -> AccessReport:
        manifest = load_desired(paths) if paths else None
        if manifest is None:
            target = locate(site_opts)
        else:
            target = locate_manifest(site_opts, paths, manifest.desired)
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            async with open_site(site_opts, target, progress, command="access") as site:
                desired = manifest.desired if manifest is not None else None
                return await access_report(site, scope, desired, previous, at)

    report = aio.run(run())
    if out is None:
        click.echo(render_access(report, fmt, site_opts.color), nl=False)
    else:
        write_private_file(out, render_access(report, fmt), what="the access report")
        click.echo(f"Wrote the access report ({fmt}) to {out}.", err=True)
    return EXIT_OK
