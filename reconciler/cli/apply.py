"""``reconciler apply``: change the site from a manifest (plan, review, confirm) or a saved plan."""

from __future__ import annotations

import os
from pathlib import Path

import click

from reconciler import aio
from reconciler.api.client import ClientStats
from reconciler.cli import LOCKED, cli, epilog
from reconciler.cli.follow_up import next_command
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import (
    SiteOptions,
    assume_no_groups_option,
    changed_option,
    format_option,
    locking_site_options,
    replace_option,
    show_unmanaged_option,
    target_options,
)
from reconciler.cli.plan import warn_unused_replace
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.review import TerminalReview
from reconciler.cli.site_choice import locate_manifest, locate_saved_plan, open_site
from reconciler.core.planning import PlanOptions
from reconciler.engine import workflow
from reconciler.engine.planning.plan_file import read_plan_path
from reconciler.engine.planning.plan_key import required_secret
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED, Interrupted
from reconciler.render.apply import (
    APPLY_FORMATS,
    INCOMPLETE_HINT,
    REFUSED_HINT,
    Applied,
    interruption,
    notice_lines,
    problem_lines,
)

APPLY_EPILOG = epilog(
    [
        (0, "done as planned, or nothing to do (--detailed-exitcode: nothing to do)"),
        (1, "error, or some changes failed: see the message; apply again converges"),
        (2, "with --detailed-exitcode: the site or its records were changed as planned"),
        (3, "refused: a guard; a stale, edited or used plan (it says what ran); no approval"),
        LOCKED,
        (130, "interrupted (Ctrl-C): what was done is recorded; run apply again"),
    ],
    [
        "reconciler apply examples/site.yaml --sandbox",
        "reconciler apply plan.json examples/ --sandbox --auto-approve --format json",
    ],
)


def _is_plan_file(source: tuple[Path, ...]) -> bool:
    """``apply PLAN.json [MANIFEST]...``: a saved plan comes first."""
    return bool(source) and source[0].suffix.lower() == ".json"


async def _apply(
    source: tuple[Path, ...], opts: SiteOptions, options: PlanOptions, review: TerminalReview
) -> tuple[workflow.ApplyResult, ClientStats]:
    """Apply a saved plan (one ``.json`` file) or a manifest; the result and the calls made."""
    if _is_plan_file(source):
        required_secret(os.environ)  # in CI, before anything is read
    saved = read_plan_path(source[0]) if _is_plan_file(source) else None
    paths = tuple(str(p) for p in (source[1:] if saved else source))
    manifest = load_desired(paths) if paths else None
    desired = manifest.desired if manifest else None
    if saved is not None:
        target = locate_saved_plan(opts, saved, paths, desired)
    else:
        assert desired is not None  # click requires a SOURCE
        target = locate_manifest(opts, paths, desired)
    command = "apply " + " ".join(str(p) for p in source)
    async with open_site(opts, target, review.progress, command=command) as site:
        if saved is not None:
            result = await workflow.apply_saved(
                saved, site, options, review, review.action_done, job_manifest=manifest
            )
        else:
            assert manifest is not None
            result = await workflow.apply_manifest(
                manifest, site, options, review, review.action_done
            )
        return result, site.client.stats


def _resume_command(source: tuple[Path, ...], review: TerminalReview) -> str:
    """What to run after an interrupted apply: the same apply, or a new plan of a saved one's
    manifest (a saved plan is claimed when it starts, so it is never applied twice)."""
    if review.approved is not None and _is_plan_file(source):
        return next_command("plan", source[1:] or review.approved.context.manifest_files)
    return next_command("apply", source)


@cli.command(epilog=APPLY_EPILOG)
@click.argument("source", type=click.Path(exists=True, path_type=Path), nargs=-1, required=True)
@locking_site_options
@click.option(
    "--auto-approve",
    is_flag=True,
    help="Apply without asking (pipelines).",
)
@replace_option
@click.option(
    "--force",
    is_flag=True,
    help="Override the delete and removal guards.",
)
@assume_no_groups_option
@changed_option
@target_options
@show_unmanaged_option
@format_option(APPLY_FORMATS)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when something changed, 0 when not.",
)
def apply(
    source: tuple[Path, ...],
    site_opts: SiteOptions,
    auto_approve: bool,
    replace: tuple[str, ...],
    force: bool,
    assume_no_groups: bool,
    changed: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    show_unmanaged: bool,
    fmt: str,
    detailed_exitcode: bool,
) -> int:
    """Change the site to match the manifest (plan, show, ask), or apply a saved plan.

    SOURCE is a manifest, or PLAN.json then its manifest. Details: docs/commands.md.
    """
    if replace and _is_plan_file(source):
        raise click.UsageError("--replace belongs to the plan: make a new plan with it.")
    if (targets or excludes) and _is_plan_file(source):
        raise click.UsageError(
            "--target/--exclude belong to the plan: a saved plan applies only its own actions."
        )
    options = PlanOptions(frozenset(replace), force, assume_no_groups, changed, targets, excludes)
    progress = TerminalProgress(verbose=site_opts.verbose)
    review = TerminalReview(
        progress,
        color=site_opts.color,
        auto_approve=auto_approve,
        show_unmanaged=site_opts.lists_unmanaged(show_unmanaged),
        plan_to_stderr=fmt != "text",
    )
    try:
        with progress:
            result, stats = aio.run(_apply(source, site_opts, options, review))
    except KeyboardInterrupt:
        message, done_anything = interruption(review.approved, review.outcomes)
        hint = (
            "What was done is recorded; writes that were under way are checked on the site "
            "before anything is sent again.\nTo finish, run:\n  " + _resume_command(source, review)
            if done_anything
            else None
        )
        raise Interrupted(message, hint=hint) from None
    warn_unused_replace(result.plan, replace)
    for line in result.learnt:
        click.echo(f"Note: {line}.", err=True)
    applied = Applied(result.plan, result.report, stats, result.learnt, result.records_changed)
    if result.report is not None:
        for line in notice_lines(result.report) + problem_lines(result.report):
            click.echo(line, err=True)
    click.echo(APPLY_FORMATS.render(applied, fmt), nl=False)
    if result.report is None or result.report.complete:
        return EXIT_CHANGES if detailed_exitcode and applied.changed else EXIT_OK
    if result.report.refused:
        click.echo(REFUSED_HINT, err=True)
        return EXIT_REFUSED
    click.echo(INCOMPLETE_HINT, err=True)
    return EXIT_ERROR
