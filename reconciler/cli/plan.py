"""``reconciler plan`` and ``reconciler drift``: read the site and say what differs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from reconciler.cli import SITE_ERROR, cli, epilog
from reconciler.cli.files import write_private_file
from reconciler.cli.follow_up import next_command
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import (
    SiteOptions,
    assume_no_groups_option,
    changed_option,
    format_option,
    replace_option,
    show_unmanaged_option,
    site_options,
    target_options,
)
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.target import locate_manifest, open_site
from reconciler.engine import workflow
from reconciler.engine.plan import Plan, PlanOptions
from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.render.drift import DRIFT_FORMATS, render_drift
from reconciler.render.plans import PLAN_FORMATS, render_plan


def warn_unused_replace(plan: Plan, replace: tuple[str, ...]) -> None:
    replaced = {c.name for c in plan.changes if c.action == "replace"}
    refused = {c.name: c.hint for c in plan.changes if c.action == "needs-replacement"}
    for name in sorted(set(replace) - replaced):
        why = refused.get(name) or "that workspace needs no replacement"
        click.echo(f'Warning: --replace "{name}": {why}.', err=True)


async def _plan(
    paths: tuple[str, ...], opts: SiteOptions, options: PlanOptions, out: Path | None
) -> Plan:
    manifest = load_desired(paths)
    target = locate_manifest(opts, paths, manifest.desired)
    with TerminalProgress(verbose=opts.verbose) as progress:
        async with open_site(opts, target, progress, command="plan " + " ".join(paths)) as site:
            plan = await workflow.make_plan(manifest, site, options)
            if out is not None:
                write_private_file(out, workflow.save_plan(plan, site), what="the plan")
            return plan


PLAN_EPILOG = epilog(
    [
        (0, "the plan was made (with --detailed-exitcode: there is nothing to change)"),
        (1, SITE_ERROR),
        (2, "with --detailed-exitcode: there are changes"),
    ],
    [
        "reconciler plan examples/site.yaml --sandbox",
        "reconciler plan site/ --format markdown -o plan.json --detailed-exitcode > plan.md",
    ],
)
DRIFT_EPILOG = epilog(
    [(0, "the site matches the manifest"), (1, SITE_ERROR), (2, "the site has drifted")],
    [
        "reconciler drift examples/site.yaml --sandbox",
        "reconciler drift site/ --format markdown > drift.md",
    ],
)


@cli.command(epilog=PLAN_EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also save the plan (JSON, mode 600) for `reconciler apply PLAN.json`.",
)
@format_option(PLAN_FORMATS)
@replace_option
@click.option(
    "--force",
    is_flag=True,
    help="Override the policy's delete and member-removal guards in this plan.",
)
@assume_no_groups_option
@changed_option
@target_options
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when there is nothing to change, 2 when there are changes, 1 on error.",
)
@show_unmanaged_option
def plan(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    out: Path | None,
    fmt: str,
    replace: tuple[str, ...],
    force: bool,
    assume_no_groups: bool,
    changed: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    detailed_exitcode: bool,
    show_unmanaged: bool,
) -> int:
    """Show what apply would change on the site to make it match the manifest.

    PATHS are manifest files or directories (their *.yaml/*.yml files are merged). Nothing is
    changed: this is the dry run. Deleting a workspace destroys its files, so deletions are
    planned only for workspaces the tool manages, when policy.prune is true and no protect
    pattern matches; changing root_access or overrides needs --replace NAME.
    """
    options = PlanOptions(frozenset(replace), force, assume_no_groups, changed, targets, excludes)
    result = asyncio.run(_plan(paths, site_opts, options, out))
    warn_unused_replace(result, replace)
    listed = site_opts.lists_unmanaged(show_unmanaged)
    click.echo(render_plan(result, fmt, site_opts.color, listed), nl=False)
    if out is not None:
        # On stdout after a text plan; on stderr when stdout is JSON or Markdown for a program.
        click.echo(
            f"\nSaved the plan to {out}. Apply exactly this plan with: "
            + next_command("apply", [out, *paths]),
            err=fmt != "text",
        )
    return EXIT_CHANGES if detailed_exitcode and result.has_changes else EXIT_OK


@cli.command(epilog=DRIFT_EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@format_option(DRIFT_FORMATS)
@show_unmanaged_option
@target_options
def drift(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    fmt: str,
    show_unmanaged: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
) -> int:
    """Report what differs between the site and the manifest, by category.

    Lists missing, extra, changed, needs-replacement, unmanaged and unobservable items
    separately. Exit 0 when the site is in sync, 2 when it has drifted, 1 on error. With
    --target/--exclude only the selected objects are read and reported (unmanaged objects
    are not listed then).
    """
    options = PlanOptions(targets=targets, excludes=excludes)

    async def run() -> dict[str, object]:
        manifest = load_desired(paths)
        target = locate_manifest(site_opts, paths, manifest.desired)
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            async with open_site(site_opts, target, progress, command="drift") as site:
                return await workflow.drift(manifest, site, options)

    report = asyncio.run(run())
    listed = site_opts.lists_unmanaged(show_unmanaged)
    click.echo(render_drift(report, fmt, site_opts.color, listed), nl=False)
    return EXIT_OK if report["in_sync"] else EXIT_CHANGES
