"""``reconciler state``: look at, correct and move what the tool has recorded about a site.

These commands never change the site. They take the site (``--site``, ``--sandbox`` or a
manifest's ``site.url``) and the records' location (``--state`` and the usual defaults), never
credentials: the records are not read from the site.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler.cli import LOCKED, cli, epilog
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import (
    SiteOptions,
    format_option,
    locking_records_options,
    records_options,
)
from reconciler.cli.site_choice import SiteChoice, locate, locate_manifest, records_at
from reconciler.engine import workflow
from reconciler.engine.records import document as records_document
from reconciler.engine.records import ledger
from reconciler.engine.records.diff import versions_changes
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.render.records_diff import RECORDS_DIFF_FORMATS, RecordsDiff
from reconciler.state.backend import Holder
from reconciler.state.locate import open_records, parse_location
from reconciler.state.migrate import copy_site

MANIFEST = click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[MANIFEST]...")
UNREADABLE = "there are no records for the site, or they cannot be read"

SHOW_EPILOG = epilog(
    [(0, "the records were printed"), (1, UNREADABLE)],
    [
        "reconciler state show examples/site.yaml --sandbox",
        "reconciler state show examples/ --sandbox --version 1",
    ],
)
HISTORY_EPILOG = epilog(
    [(0, "the versions were listed"), (1, UNREADABLE)],
    ["reconciler state history examples/ --sandbox"],
)
DIFF_EPILOG = epilog(
    [
        (0, "the changes were printed (none is not an error)"),
        (1, UNREADABLE + ", or no such version"),
    ],
    [
        "reconciler state diff 1 --sandbox --state-dir examples/.reconciler",
        "reconciler state diff 1 2 --sandbox --state-dir examples/.reconciler --format markdown",
    ],
)
FORGET_EPILOG = epilog(
    [(0, "the record was dropped"), (1, "no such record, or an error"), LOCKED],
    ["reconciler state forget group finance-team examples/ --sandbox"],
)
MV_EPILOG = epilog(
    [
        (0, "the record was moved"),
        (1, "no such record, the new name is taken, or an error"),
        LOCKED,
    ],
    ['reconciler state mv workspace Legal "Legal & Compliance" examples/ --sandbox'],
)
MIGRATE_EPILOG = epilog(
    [
        (0, "the records were copied"),
        (1, "the records cannot be read or written"),
        (3, "refused for safety: newer records at the destination (use --force to overwrite)"),
        LOCKED,
    ],
    ["reconciler state migrate examples/ --sandbox --to records-copy/"],
)


def _target(opts: SiteOptions, paths: tuple[str, ...]) -> SiteChoice:
    """The site and records a state command means: as plan would, for the same manifest."""
    if not paths:
        return locate(opts)
    return locate_manifest(opts, paths, load_desired(paths).desired)


@cli.group(
    epilog="\b\nExamples:\n  reconciler state show examples/ --sandbox\n"
    "  reconciler state history examples/ --sandbox\n"
)
def state() -> None:
    """Show, correct or move the tool's records of a site (never changes the site).

    Details: docs/commands.md.
    """


@state.command("show", epilog=SHOW_EPILOG)
@MANIFEST
@records_options
@click.option("--version", "version", type=click.IntRange(min=1), help="Show this saved version.")
def show(paths: tuple[str, ...], site_opts: SiteOptions, version: int | None) -> int:
    """Print the records of the site as JSON (the newest, or --version N)."""
    target = _target(site_opts, paths)
    with records_at(site_opts, target) as store:
        if version is None:
            reading = ledger.read(store)
            records, number = reading.records, reading.version
        else:
            snapshot = store.load_version(version)
            records = records_document.from_data(
                snapshot.data, site=store.site, where=store.location
            )
            number = snapshot.version
        if number == 0 and records.empty:
            click.echo(f"No records for {store.site} in {store.location}.", err=True)
            return EXIT_ERROR
    click.echo(json.dumps(records_document.to_data(records), indent=1))
    return EXIT_OK


@state.command("diff", epilog=DIFF_EPILOG)
@click.argument("versions", nargs=-1, type=click.IntRange(min=1), metavar="VERSION [VERSION]")
@records_options
@format_option(RECORDS_DIFF_FORMATS)
def diff(versions: tuple[int, ...], site_opts: SiteOptions, fmt: str) -> int:
    """Show what changed in the records from VERSION to the newest (or a second VERSION).

    Details: docs/commands.md.
    """
    if not 1 <= len(versions) <= 2:
        raise click.UsageError("Give one version (compared with the newest) or two.")
    target = _target(site_opts, ())
    with records_at(site_opts, target) as store:
        first = store.load_version(versions[0])
        second = store.load_version(versions[1]) if len(versions) == 2 else store.load()
        changes = versions_changes(first.data, second.data, site=store.site, where=store.location)
        site = store.site
    report = RecordsDiff(site, first.version, second.version, changes)
    click.echo(RECORDS_DIFF_FORMATS.render(report, fmt), nl=False)
    return EXIT_OK


@state.command("history", epilog=HISTORY_EPILOG)
@MANIFEST
@records_options
def history(paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """List every saved version of the site's records: when, by whom, for which plan."""
    target = _target(site_opts, paths)
    with records_at(site_opts, target) as store:
        versions = store.history()
        if not versions:
            click.echo(f"No records for {store.site} in {store.location}.", err=True)
            return EXIT_ERROR
        click.echo(f"Records of {store.site} in {store.location}:")
        for info in versions:
            plan = f" [plan {info.plan[:12]}]" if info.plan else ""
            click.echo(
                f"  {info.version:>4}  {info.saved_at}  {info.saved_by}{plan}: {info.summary}"
            )
    return EXIT_OK


@state.command("forget", epilog=FORGET_EPILOG)
@click.argument("kind", type=click.Choice(["workspace", "group", "user"]))
@click.argument("name")
@MANIFEST
@locking_records_options
def forget(kind: str, name: str, paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Drop the record of one workspace, group or user (the site is not changed).

    NAME is compared as the site compares names (case and width aside). Details:
    docs/commands.md.
    """
    target = _target(site_opts, paths)
    with records_at(site_opts, target) as store:
        holder = Holder.current(f"state forget {kind} {name}")
        workflow.forget(store, holder, kind, name, wait_seconds=site_opts.lock_timeout)  # type: ignore[arg-type]
    click.echo(f'Forgot the record of {kind} "{name}". The site was not changed.')
    return EXIT_OK


@state.command("mv", epilog=MV_EPILOG)
@click.argument("kind", type=click.Choice(["workspace", "group", "user"]))
@click.argument("old")
@click.argument("new")
@MANIFEST
@locking_records_options
def mv(kind: str, old: str, new: str, paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Move the record of a workspace, group or user to a new name (the site is not changed).

    OLD and NEW are compared as the site compares names (case and width aside): NEW may
    respell OLD, but never name another record. Details: docs/commands.md.
    """
    target = _target(site_opts, paths)
    with records_at(site_opts, target) as store:
        holder = Holder.current(f"state mv {kind} {old} {new}")
        workflow.move(store, holder, kind, old, new, wait_seconds=site_opts.lock_timeout)  # type: ignore[arg-type]
    click.echo(f'Moved the record of {kind} "{old}" to "{new}". The site was not changed.')
    return EXIT_OK


@state.command("migrate", epilog=MIGRATE_EPILOG)
@MANIFEST
@locking_records_options
@click.option(
    "--to",
    "destination",
    required=True,
    metavar="LOCATION",
    help="Copy to: postgresql:// URL or directory.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite newer records there.",
)
def migrate(paths: tuple[str, ...], site_opts: SiteOptions, destination: str, force: bool) -> int:
    """Copy the site's records, every version and the plan key, to another location.

    Details: docs/commands.md.
    """
    target = _target(site_opts, paths)
    to = parse_location(destination, base_dir=Path.cwd())
    source = records_at(site_opts, target)
    holder = Holder.current("state migrate")
    with source, open_records(to, source.site, lease_seconds=site_opts.lock_lease) as copy:
        summary = copy_site(source, copy, holder=holder, force=force)
    click.echo(summary)
    return EXIT_OK
