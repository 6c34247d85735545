"""``reconciler show PLAN.json``: print a saved plan again, as ``plan`` printed it.

A job that saved ``plan.json`` earlier (the artefact of a pull request) prints it again in
any format -- for the comment, for a program, for a person -- without reading the site. The
seal is checked against the records first, exactly as apply checks it: what is shown is the
plan apply would run, or a refusal (exit 3).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from reconciler.cli import cli, epilog
from reconciler.cli.files import write_comments
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import (
    SiteOptions,
    comment_dir_option,
    format_option,
    records_options,
    show_unmanaged_option,
)
from reconciler.cli.site_choice import locate_saved_plan, records_at
from reconciler.engine import workflow
from reconciler.engine.planning.plan_file import read_plan_path
from reconciler.engine.planning.plan_key import required_secret
from reconciler.errors import EXIT_OK
from reconciler.render.markdown import markdown_parts
from reconciler.render.plans import PLAN_FORMATS, render_plan

SHOW_EPILOG = epilog(
    [
        (0, "the plan was printed"),
        (1, "error: the plan file or the records cannot be read"),
        (3, "refused: the plan's seal does not match these records, or it was edited"),
    ],
    [
        "reconciler show plan.json examples/ --sandbox --format markdown",
        "reconciler show plan.json examples/ --sandbox --comment-dir c/",
    ],
)


@cli.command(epilog=SHOW_EPILOG)
@click.argument("plan_path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[MANIFEST]...")
@records_options
@format_option(PLAN_FORMATS)
@comment_dir_option
@show_unmanaged_option
def show(
    plan_path: Path,
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    fmt: str,
    comment_dir: Path | None,
    show_unmanaged: bool,
) -> int:
    """Print a saved plan again, its seal checked as apply checks it; the site is not read.

    Details: docs/commands.md.
    """
    secret = required_secret(os.environ)
    saved = read_plan_path(plan_path)
    desired = load_desired(paths).desired if paths else None
    target = locate_saved_plan(site_opts, saved, paths, desired)
    with records_at(site_opts, target) as store:
        plan = workflow.show_saved(saved, store, secret)
    click.echo(render_plan(plan, fmt, site_opts.color, show_unmanaged), nl=False)
    if comment_dir is not None:
        write_comments(comment_dir, markdown_parts(plan))
    return EXIT_OK
