"""``reconciler state``: look at, and correct, what the tool has recorded about a site."""

from __future__ import annotations

import json

import click

from reconciler.cli import cli
from reconciler.cli.options import SiteOptions, site_options
from reconciler.cli.target import state_store_for
from reconciler.engine import ledger, workflow
from reconciler.errors import EXIT_OK
from reconciler.state.backend import Holder


@cli.group()
def state() -> None:
    """Show or correct the tool's records of a site (.reconciler/ by default).

    The site cannot report user groups' members, root_access or whether an override is on,
    so the tool records them. These commands never change the site.
    """


@state.command("show")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@site_options
def show(paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Print the records of the site as JSON. PATHS (a manifest) locate the state directory."""
    with state_store_for(site_opts, paths, None) as store:
        click.echo(json.dumps(ledger.read(store).records.to_data(), indent=1))
    return EXIT_OK


@state.command("forget")
@click.argument("kind", type=click.Choice(["workspace", "group"]))
@click.argument("name")
@click.option(
    "--manifest",
    "paths",
    multiple=True,
    type=click.Path(exists=True),
    help="The manifest, to locate the state directory beside it.",
)
@site_options
def forget(kind: str, name: str, paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Drop the record of one workspace or group (the site is not changed).

    Use it when a record is wrong: for instance a group that an interrupted apply may have
    created on a site that does not list groups, which you checked does not exist.
    """
    with state_store_for(site_opts, paths, None) as store:
        holder = Holder.current(f"state forget {kind} {name}")
        workflow.forget(store, holder, kind, name)  # type: ignore[arg-type]
    click.echo(f'Forgot the record of {kind} "{name}". The site was not changed.')
    return EXIT_OK
