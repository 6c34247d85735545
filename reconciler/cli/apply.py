"""``reconciler apply``: change the site from a manifest (plan, review, confirm) or a saved plan."""

from __future__ import annotations

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
from reconciler.cli.target import locate_manifest, locate_saved_plan, open_site, read_plan
from reconciler.engine import workflow
from reconciler.engine.plan import PlanOptions
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
        (
            0,
            "the site was changed as planned, or there was nothing to change (with "
            "--detailed-exitcode: there was nothing to change)",
        ),
        (1, "error, or some changes failed: see the message; apply again converges"),
        (2, "with --detailed-exitcode: the site was changed as planned"),
        (
            3,
            "refused for safety: a guard tripped (or a deletion, as it was to run); a stale, "
            "edited or used plan; no approval",
        ),
        LOCKED,
        (130, "interrupted (Ctrl-C): what was done is recorded; run apply again"),
    ],
    [
        "reconciler apply examples/site.yaml --sandbox",
        "reconciler apply plan.json site/ --auto-approve --format json --detailed-exitcode",
    ],
)


def _is_plan_file(source: tuple[Path, ...]) -> bool:
    """``apply PLAN.json [MANIFEST]...``: a saved plan comes first."""
    return bool(source) and source[0].suffix.lower() == ".json"


async def _apply(
    source: tuple[Path, ...], opts: SiteOptions, options: PlanOptions, review: TerminalReview
) -> tuple[workflow.ApplyResult, ClientStats]:
    """Apply a saved plan (one ``.json`` file) or a manifest; the result and the calls made."""
    saved = read_plan(source[0]) if _is_plan_file(source) else None
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
    help="Apply without asking (for pipelines). Without it, apply asks on a terminal "
    "and refuses (exit 3) when there is none.",
)
@replace_option
@click.option(
    "--force",
    is_flag=True,
    help="Apply even when the plan trips the policy's delete or member-removal guard.",
)
@assume_no_groups_option
@changed_option
@target_options
@show_unmanaged_option
@format_option(APPLY_FORMATS)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when there was nothing to change, 2 when the site was changed as planned; "
    "errors keep 1, refusals 3, a locked site 4.",
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
    """Change the site to match the manifest, or apply a saved plan exactly.

    SOURCE is a manifest (files or a directory): apply plans, shows the plan and asks for
    approval. Or SOURCE is a plan file saved with `plan -o PLAN.json`, followed by the
    manifest it was made from (`apply plan.json site/`): the records are found as for any
    command (--state, RECONCILER_STATE, the manifest), never from the plan file. Apply checks
    that the plan was made for this site with these records (sealed with their key or
    RECONCILER_PLAN_KEY), that it was not applied before, and that the site still needs
    exactly its actions (a stale plan is refused, exit 3), then applies only those, under the
    strictest of the plan's policy, this manifest's and the records' last applied one. An
    interrupted apply is safe to run again: it converges.

    With --format json, stdout carries only the report of every action (done, failed with
    the reason, skipped and why); the plan and the messages go to stderr.
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
    applied = Applied(result.plan, result.report, stats, result.learnt)
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
