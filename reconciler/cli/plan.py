"""``reconciler plan`` and ``reconciler drift``: read the site and say what differs."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import click

from reconciler import aio
from reconciler.cli import SITE_ERROR, cli, epilog
from reconciler.cli.files import write_comments, write_private_file
from reconciler.cli.follow_up import next_command
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import (
    SiteOptions,
    assume_no_groups_option,
    at_option,
    changed_option,
    comment_dir_option,
    format_option,
    replace_option,
    show_unmanaged_option,
    site_options,
    target_options,
)
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.site_choice import locate_manifest, open_site
from reconciler.core.planning import PlanOptions
from reconciler.engine import workflow
from reconciler.engine.drift import DriftReport
from reconciler.engine.drift_news import DriftNews, report_drift
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_key import required_secret
from reconciler.errors import EXIT_CHANGES, EXIT_OK
from reconciler.identity import NameSet, NameTable
from reconciler.notify import check_webhook, send
from reconciler.render.drift import DRIFT_FORMATS, render_drift
from reconciler.render.markdown import markdown_parts
from reconciler.render.notify import notification
from reconciler.render.plans import PLAN_FORMATS, render_plan


def warn_unused_replace(plan: Plan, replace: tuple[str, ...]) -> None:
    replaced = NameSet("workspace", (c.name for c in plan.changes if c.action == "replace"))
    refused = NameTable(
        "workspace", {c.name: c.hint for c in plan.changes if c.action == "needs-replacement"}
    )
    for name in sorted(n for n in set(replace) if n not in replaced):
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
        (2, "with --detailed-exitcode: there are changes (to the records alone too)"),
    ],
    [
        "reconciler plan examples/site.yaml --sandbox",
        "reconciler plan examples/ --sandbox -o plan.json --detailed-exitcode --comment-dir c/",
    ],
)
DRIFT_EPILOG = epilog(
    [
        (0, "the site matches the manifest"),
        (1, SITE_ERROR + "; the --notify webhook failed (the report was printed)"),
        (2, "the site has drifted, or the records are behind (the next apply saves them)"),
    ],
    [
        "reconciler drift examples/site.yaml --sandbox",
        "reconciler drift examples/ --sandbox --format markdown --since-last",
    ],
)


@cli.command(epilog=PLAN_EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also save the sealed plan to FILE.",
)
@format_option(PLAN_FORMATS)
@comment_dir_option
@replace_option
@click.option(
    "--force",
    is_flag=True,
    help="Override the delete and removal guards.",
)
@assume_no_groups_option
@changed_option
@target_options
@at_option
@click.option(
    "--expired-only",
    is_flag=True,
    help="Plan only the removal of access whose expires: date has come.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 on changes (records too), 0 on none.",
)
@show_unmanaged_option
def plan(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    out: Path | None,
    fmt: str,
    comment_dir: Path | None,
    replace: tuple[str, ...],
    force: bool,
    assume_no_groups: bool,
    changed: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    at: date | None,
    expired_only: bool,
    detailed_exitcode: bool,
    show_unmanaged: bool,
) -> int:
    """Show what apply would change to make the site match the manifest; change nothing.

    PATHS are manifest files or directories. Details: docs/commands.md.
    """
    if out is not None and at is not None:
        raise click.UsageError(
            "--at shows the site as the manifest wants it on another day: a preview, which "
            "cannot be saved (-o) nor applied."
        )
    if out is not None:
        required_secret(os.environ)  # in CI, before the site is read
    options = PlanOptions(
        frozenset(replace),
        force,
        assume_no_groups,
        changed,
        targets,
        excludes,
        at=at,
        expired_only=expired_only,
    )
    result = aio.run(_plan(paths, site_opts, options, out))
    warn_unused_replace(result, replace)
    listed = site_opts.lists_unmanaged(show_unmanaged)
    click.echo(render_plan(result, fmt, site_opts.color, listed), nl=False)
    if comment_dir is not None:
        write_comments(comment_dir, markdown_parts(result))
    if out is not None:
        # On stdout after a text plan; on stderr when stdout is JSON or Markdown for a program.
        click.echo(
            f"\nSaved the plan to {out}. Apply exactly this plan with: "
            + next_command("apply", [out, *paths], saved_plan=True),
            err=fmt != "text",
        )
    return EXIT_CHANGES if detailed_exitcode and result.has_changes else EXIT_OK


@cli.command(epilog=DRIFT_EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@site_options
@format_option(DRIFT_FORMATS)
@show_unmanaged_option
@target_options
@at_option
@click.option(
    "--notify",
    metavar="URL",
    envvar="RECONCILER_NOTIFY_URL",
    help="POST what is new since the last report to this webhook URL (a secret).",
)
@click.option(
    "--since-last",
    is_flag=True,
    help="List only what is new since the last report (and keep this one).",
)
def drift(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    fmt: str,
    show_unmanaged: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    at: date | None,
    notify: str | None,
    since_last: bool,
) -> int:
    """Report what differs between the site, the manifest and the records, by category.

    Details: docs/commands.md.
    """
    if (notify or since_last) and (targets or excludes):
        raise click.UsageError(
            "--notify/--since-last keep and compare whole-site reports: they do not combine "
            "with --target/--exclude."
        )
    if (notify or since_last) and at is not None:
        raise click.UsageError(
            "--notify/--since-last keep and compare the reports of today: they do not combine "
            "with --at."
        )
    options = PlanOptions(targets=targets, excludes=excludes, at=at)
    webhook = check_webhook(notify) if notify else None
    listed = site_opts.lists_unmanaged(show_unmanaged)

    async def show(news: DriftNews) -> None:
        report = news.since_last() if since_last else news.report
        click.echo(render_drift(report, fmt, site_opts.color, listed), nl=False)
        if webhook is not None and (news.count or news.resolved):
            await send(webhook, notification(news))

    async def run() -> DriftReport:
        manifest = load_desired(paths)
        target = locate_manifest(site_opts, paths, manifest.desired)
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            async with open_site(site_opts, target, progress, command="drift") as site:
                if webhook is None and not since_last:
                    report = await workflow.drift(manifest, site, options)
                    click.echo(render_drift(report, fmt, site_opts.color, listed), nl=False)
                    return report
                news, note = await report_drift(manifest, site, show)
                if note:
                    click.echo(f"Warning: {note}.", err=True)
                return news.report

    report = aio.run(run())
    return EXIT_OK if report.in_sync else EXIT_CHANGES
