"""``reconciler validate``: check a manifest offline and report every problem at once."""

from __future__ import annotations

import json
import shlex
from datetime import date

import click

from reconciler import clock
from reconciler.cli import cli, epilog
from reconciler.cli.config_file import config_home, find_config
from reconciler.cli.options import at_option, checked_settings, format_option
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.manifest import ManifestResult, load_manifest
from reconciler.manifest.expire import expiry_findings
from reconciler.manifest.schema import site_schema
from reconciler.ownership.codeowners import drift_finding
from reconciler.render.validation import VALIDATION_FORMATS, Validation

HELP = """Check a site manifest offline and report every problem at once.

\b
PATH is a file, or a directory whose *.yaml and *.yml files are read in
sorted order and merged (not its subdirectories, but for the teams' files
that ownership: names); a reconciler.toml beside it is checked too. With
ownership:, it warns when the repository's CODEOWNERS has drifted from it
(`reconciler codeowners`). Details: docs/commands.md.
"""
EPILOG = epilog(
    [
        (0, "the manifest is valid (warnings allowed)"),
        (1, "the manifest is invalid, or a PATH cannot be read"),
    ],
    ["reconciler validate examples/", "reconciler validate examples/site.yaml --format json"],
)
SCHEMA_EPILOG = epilog(
    [(0, "the schema was printed")],
    ["reconciler schema > site.schema.json"],
)


@cli.command(help=HELP, epilog=EPILOG, short_help="Check a site manifest (file or directory).")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@format_option(VALIDATION_FORMATS)
@click.option(
    "--show",
    is_flag=True,
    help="Also print the normalised desired site (defaults merged, teams expanded) as YAML; "
    "with --format json, print {findings, desired} instead.",
)
@at_option
@click.pass_context
def validate(
    ctx: click.Context, paths: tuple[str, ...], fmt: str, show: bool, at: date | None
) -> None:
    settings = find_config(None, config_home(paths))
    if settings is not None:  # a broken reconciler.toml fails here, not in the pipeline
        checked_settings(settings)
    result = load_manifest(paths)
    desired = result.desired
    if desired is not None:  # the forge's CODEOWNERS asks for the same owners
        drifted = drift_finding(desired, paths)
        at_day = ["--at", at.isoformat()] if at else []
        command = shlex.join(["reconciler", "expire", *paths, *at_day])  # removes them
        expired = expiry_findings(desired, at or clock.today(), command)
        more = [*([drifted] if drifted is not None else []), *expired]
        result = ManifestResult(desired, [*result.findings, *more])
    label = " ".join(paths)
    click.echo(VALIDATION_FORMATS.render(Validation(result, label, show), fmt))
    ctx.exit(EXIT_OK if result.ok else EXIT_ERROR)


@cli.command(epilog=SCHEMA_EPILOG)
def schema() -> None:
    """Print the JSON Schema of the manifest, exactly the one this version checks against.

    Editors with a YAML language server check a manifest as you type when its first line is
    `# yaml-language-server: $schema=PATH` (examples/site.yaml has one); CI can check
    that its copy is the tool's.
    """
    click.echo(json.dumps(site_schema(), indent=2, ensure_ascii=False))
