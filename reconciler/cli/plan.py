"""``reconciler plan`` and ``reconciler drift``: read the site and say what differs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from reconciler.cli import EXIT_CODES_HELP, cli
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import SiteOptions, output_format, replace_option, site_options
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.target import open_site
from reconciler.engine.drift import drift_report
from reconciler.engine.plan import Plan
from reconciler.engine.planner import PlanOptions
from reconciler.engine.state import write_private_file
from reconciler.engine.workflow import load_state, make_plan
from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.render.drift import render_drift_json, render_drift_markdown, render_drift_text
from reconciler.render.json import render_json
from reconciler.render.markdown import render_markdown
from reconciler.render.text import render_text


async def plan_for(paths: tuple[str, ...], opts: SiteOptions, options: PlanOptions) -> Plan:
    """Load the manifest, read the site and make the plan (nothing is written)."""
    desired, digest = load_desired(paths)
    with TerminalProgress("Reading the site") as progress:
        async with open_site(opts, paths, desired.site_url, progress) as site:
            return await make_plan(desired, site, load_state(site.store), options, digest)


def render_plan(plan: Plan, fmt: str, color: bool) -> str:
    if fmt == "json":
        return render_json(plan)
    if fmt == "markdown":
        return render_markdown(plan)
    return render_text(plan, color=color)


def warn_unused_replace(plan: Plan, replace: tuple[str, ...]) -> None:
    replaced = {c["name"] for c in plan.data["changes"] if c["action"] == "replace"}
    refused = {
        c["name"]: c["hint"] for c in plan.data["changes"] if c["action"] == "needs-replacement"
    }
    for name in sorted(set(replace) - replaced):
        why = refused.get(name, "that workspace needs no replacement")
        click.echo(f'Warning: --replace "{name}": {why}.', err=True)


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also save the plan (JSON, mode 600) for `reconciler apply PLAN.json`.",
)
@output_format
@replace_option
@click.option(
    "--force",
    is_flag=True,
    help="Override the policy's delete and member-removal guards in this plan.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when there is nothing to change, 2 when there are changes, 1 on error.",
)
def plan(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    out: Path | None,
    fmt: str,
    replace: tuple[str, ...],
    force: bool,
    detailed_exitcode: bool,
) -> int:
    """Show what apply would change on the site to make it match the manifest.

    PATHS are manifest files or directories (their *.yaml/*.yml files are merged). Nothing is
    changed: this is the dry run. Deleting a workspace destroys its files, so deletions are
    planned only for workspaces the tool manages, when policy.prune is true and no protect
    pattern matches; changing root_access or overrides needs --replace NAME.
    """
    result = asyncio.run(plan_for(paths, site_opts, PlanOptions(frozenset(replace), force)))
    warn_unused_replace(result, replace)
    if out is not None:
        write_private_file(out, result.to_json() + "\n")
    click.echo(render_plan(result, fmt, site_opts.color), nl=False)
    if out is not None and fmt == "text":
        click.echo(
            f"\nSaved the plan to {out}. Apply exactly this plan with: reconciler apply {out}"
        )
    return EXIT_CHANGES if detailed_exitcode and result.has_changes else EXIT_OK


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@output_format
def drift(paths: tuple[str, ...], site_opts: SiteOptions, fmt: str) -> int:
    """Report what differs between the site and the manifest, by category.

    Lists missing, extra, changed, needs-replacement, unmanaged and unobservable items
    separately. Exit 0 when the site is in sync, 2 when it has drifted, 1 on error.
    """
    report = drift_report(asyncio.run(plan_for(paths, site_opts, PlanOptions())))
    if fmt == "json":
        click.echo(render_drift_json(report), nl=False)
    elif fmt == "markdown":
        click.echo(render_drift_markdown(report), nl=False)
    else:
        click.echo(render_drift_text(report, color=site_opts.color), nl=False)
    return EXIT_OK if report["in_sync"] else EXIT_CHANGES
