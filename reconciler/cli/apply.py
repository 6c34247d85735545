"""``reconciler apply``: change the site from a manifest (plan, review, confirm) or a saved plan."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import click

from reconciler.api.client import ClientStats
from reconciler.cli import EXIT_CODES_HELP, cli
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import SiteOptions, replace_option, site_options
from reconciler.cli.plan import render_plan, warn_unused_replace
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.target import open_site
from reconciler.engine.apply import ApplyReport
from reconciler.engine.lock import ApplyLock
from reconciler.engine.plan import Plan
from reconciler.engine.planner import PlanOptions
from reconciler.engine.state import SiteState
from reconciler.engine.workflow import (
    Site,
    begin_apply,
    check_guards,
    check_saved_plan,
    execute,
    make_plan,
)
from reconciler.errors import EXIT_ERROR, EXIT_OK, ReconcilerError, RefusedForSafety

STARTED = time.monotonic()  # the command's start: the summary reports the whole run's time


def is_plan_file(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".json"


def _approve(plan: Plan, auto_approve: bool) -> None:
    if auto_approve:
        return
    if not sys.stdin.isatty():
        raise RefusedForSafety(
            "Not applied: there is no terminal to ask for approval.",
            hint="Review the plan above; in a pipeline, run apply with --auto-approve (or apply "
            "a reviewed plan file).",
        )
    deletes = plan.data["summary"]["delete"]
    warning = (
        f" It DELETES {deletes} object(s); deleted workspaces lose all files." if deletes else ""
    )
    answer = click.prompt(
        f"Apply these changes to {plan.site}?{warning} Only 'yes' will be accepted",
        default="",
        show_default=False,
        err=True,
    )
    if answer.strip() != "yes":
        raise RefusedForSafety("Not applied: the changes were not approved.")


def _report(report: ApplyReport, stats: ClientStats, seconds: float) -> int:
    """What was done, what was not and why, and what the whole command cost."""
    for outcome in report.outcomes:
        if outcome.status != "done":
            click.echo(f"  {outcome.status}: {outcome.action.summary}: {outcome.detail}", err=True)
    writes = ", ".join(f"{m} {n}" for m, n in sorted(report.calls.items())) or "none"
    reads = stats.total - sum(report.calls.values())
    click.echo(
        f"\nApply {'complete' if report.complete else 'INCOMPLETE'}: {report.count('done')} done, "
        f"{report.count('failed')} failed, {report.count('skipped')} skipped, "
        f"{report.count('unknown')} of unknown outcome. API calls: {stats.total} "
        f"({reads} reads; writes: {writes}). Time: {seconds:.1f} s."
    )
    if report.complete:
        return EXIT_OK
    click.echo(
        "Nothing is lost: the tool recorded what happened. Fix what failed (see above) and run "
        "apply again; it picks up where this one stopped.",
        err=True,
    )
    return EXIT_ERROR


async def _apply_manifest(
    paths: tuple[str, ...], opts: SiteOptions, options: PlanOptions, auto_approve: bool
) -> int:
    desired, digest = load_desired(paths)
    with TerminalProgress("Working") as progress:
        async with open_site(opts, paths, desired.site_url, progress) as site:
            with ApplyLock(site.store.lock_file, "apply " + " ".join(paths)):
                state = begin_apply(site.store)
                plan = await make_plan(desired, site, state, options, digest)
                warn_unused_replace(plan, tuple(options.replace))
                click.echo(render_plan(plan, "text", opts.color), nl=False)
                if not plan.has_changes:
                    site.store.save(state)  # keep what the read settled
                    return EXIT_OK
                check_guards(plan, options.force)
                _approve(plan, auto_approve)
                return await _execute(plan, site, state, progress)


async def _apply_saved(path: Path, opts: SiteOptions, force: bool, auto_approve: bool) -> int:
    plan = Plan.from_json(_read(path), origin=str(path))
    manifest_paths = tuple(plan.data["manifest"]["files"])
    with TerminalProgress("Working") as progress:
        async with open_site(opts, manifest_paths, plan.site, progress) as site:
            with ApplyLock(site.store.lock_file, f"apply {path}"):
                state = begin_apply(site.store)
                await check_saved_plan(plan, site, state, force)
                click.echo(render_plan(plan, "text", opts.color), nl=False)
                if not plan.has_changes:
                    return EXIT_OK
                _approve(plan, auto_approve)
                return await _execute(plan, site, state, progress)


async def _execute(plan: Plan, site: Site, state: SiteState, progress: TerminalProgress) -> int:
    progress.expect(len(plan.data["actions"]))
    report = await execute(plan, site, state, progress.action_done)
    return _report(report, site.client.stats, time.monotonic() - STARTED)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReconcilerError(f"Cannot read the plan file {path}: {exc}.") from None


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("source", type=click.Path(exists=True, path_type=Path), nargs=-1, required=True)
@site_options
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
def apply(
    source: tuple[Path, ...],
    site_opts: SiteOptions,
    auto_approve: bool,
    replace: tuple[str, ...],
    force: bool,
) -> int:
    """Change the site to match the manifest, or apply a saved plan exactly.

    SOURCE is a manifest (files or a directory): apply plans, shows the plan and asks for
    approval. Or SOURCE is a plan file saved with `plan -o PLAN.json`: apply checks that it
    was made for this site, that it was not applied before, and that the facts its actions
    depend on have not changed since (a stale plan is refused, exit 3), then applies exactly
    that plan. An interrupted apply is safe to run again: it converges.
    """
    if len(source) == 1 and is_plan_file(source[0]):
        if replace:
            raise click.UsageError("--replace belongs to the plan: make a new plan with it.")
        return asyncio.run(_apply_saved(source[0], site_opts, force, auto_approve))
    paths = tuple(str(p) for p in source)
    options = PlanOptions(frozenset(replace), force)
    return asyncio.run(_apply_manifest(paths, site_opts, options, auto_approve))
