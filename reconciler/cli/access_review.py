"""``reconciler review``: an access review from the population to the evidence.

``start`` freezes who can reach what into a file reviewers fill in; ``check`` says whether
it is complete, untampered and decided by the right people; ``apply`` turns its revocations
into manifest edits (the usual pull request, plan and apply follow); ``close`` proves they
took effect and writes the evidence. Details: docs/access.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler import __version__, aio
from reconciler.cli import SITE_ERROR, cli, epilog
from reconciler.cli.files import rewrite_manifest_file, write_private_file
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import SiteOptions, site_options
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.site_choice import SiteChoice, locate, locate_manifest, open_site
from reconciler.engine.workflow import LoadedManifest
from reconciler.errors import EXIT_ERROR, EXIT_OK, ReconcilerError
from reconciler.model import DesiredSite
from reconciler.render.review import apply_text, check_text, close_text, evidence_html
from reconciler.review.check import check_review
from reconciler.review.close import Closing
from reconciler.review.evidence import evidence_data
from reconciler.review.files import read_review, review_text
from reconciler.review.job import close_review, start_review
from reconciler.review.model import Review
from reconciler.state.backend import Holder

REVIEW_FILE = click.argument(
    "review_file", metavar="REVIEW", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
MANIFEST = click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[MANIFEST]...")
NOT_PASSED = "the review is not complete or not sound: each problem is listed"

START_EPILOG = epilog(
    [(0, "the review file was written"), (1, SITE_ERROR + "; -o is not .csv or .json")],
    ["reconciler review start examples/ --sandbox -o 2026-q1.csv"],
)
CHECK_EPILOG = epilog(
    [
        (0, "every row is decided, nothing is wrong (warnings allowed)"),
        (1, NOT_PASSED + "; not a review file"),
    ],
    ["reconciler review check 2026-q1.csv"],
)
APPLY_EPILOG = epilog(
    [
        (0, "every revocation is carried out by the manifest edits, or needs none"),
        (
            1,
            NOT_PASSED + "; or a decision needs a person (listed; the edits that could be "
            "made were written)",
        ),
    ],
    ["reconciler review apply 2026-q1.csv examples/"],
)
CLOSE_EPILOG = epilog(
    [
        (0, "every revoked access is gone from the site: the evidence was written"),
        (1, "a revoked access is still on the site (named); " + NOT_PASSED + "; " + SITE_ERROR),
    ],
    ["reconciler review close 2026-q1.csv examples/ --sandbox"],
)


@cli.group(
    epilog="\b\nThe flow (docs/access.md):\n"
    "  reconciler review start site/ -o 2026-q1.csv    freeze who can reach what\n"
    "  (reviewers fill decision, justification, decided_by, decided_at)\n"
    "  reconciler review check 2026-q1.csv             complete, sound, no self-review?\n"
    "  reconciler review apply 2026-q1.csv site/       revocations as manifest edits\n"
    "  (pull request, plan, apply as usual)\n"
    "  reconciler review close 2026-q1.csv site/       proven gone; the evidence written\n"
)
def review() -> None:
    """Access reviews that close the loop: a dated population, a decision per access, the
    revocations carried out through the manifest and proven gone.
    """


@review.command("start", epilog=START_EPILOG)
@MANIFEST
@site_options
@click.option(
    "-o",
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="REVIEW.csv|REVIEW.json",
    help="Write the review here (mode 600).",
)
def start(paths: tuple[str, ...], site_opts: SiteOptions, out: Path) -> int:
    """Freeze every access on the site into a review file for reviewers to fill in.

    With a manifest (MANIFEST), each access says whether it is declared, and
    policy.reviewers are assigned.
    """
    kind = out.suffix.lower().lstrip(".")
    if kind not in ("csv", "json"):
        raise ReconcilerError(
            f"Cannot tell the review file's format from {out.name}.",
            hint="Name it REVIEW.csv (a spreadsheet) or REVIEW.json (programs).",
        )

    desired, target = _site_of(site_opts, paths)

    async def run() -> Review:
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            async with open_site(site_opts, target, progress, command="review start") as site:
                return await start_review(site, desired)

    started = aio.run(run())
    write_private_file(out, review_text(started, kind), what="the review")
    header = started.header
    click.echo(
        f"Wrote the review of {header.row_count} accesses of {header.site} ({kind}) to {out}; "
        f"population digest {header.digest}.\n"
        "Reviewers fill decision (keep or revoke), justification, decided_by and decided_at; "
        f"then `reconciler review check {out}`.",
        err=True,
    )
    return EXIT_OK


@review.command("check", epilog=CHECK_EPILOG)
@REVIEW_FILE
def check(review_file: Path) -> int:
    """Say whether every row is decided, and list every problem: undecided rows, a revoke
    without justification, self-review, a population altered since start, a reviewer who is
    not the assigned one."""
    found = read_review(review_file)
    verdict = check_review(found)
    click.echo(check_text(found, verdict), nl=False)
    return EXIT_OK if verdict.passed else EXIT_ERROR


@review.command("apply", epilog=APPLY_EPILOG)
@REVIEW_FILE
@MANIFEST
def apply(review_file: Path, paths: tuple[str, ...]) -> int:
    """Turn each revoke into an edit of the manifest (MANIFEST): the member taken out of the
    workspace's users or the team's members; nothing else in the files changes, nothing is
    sent to the site."""
    from reconciler.review.revoke import carry_out  # only this command reads YAML to edit

    if not paths:
        raise click.UsageError("Give the manifest (files or directory) to edit.")
    found = read_review(review_file)
    if not _passes(found):
        return EXIT_ERROR
    manifest: LoadedManifest = load_desired(paths)
    done = carry_out(found, manifest.desired)
    for file, text in done.files.items():
        rewrite_manifest_file(Path(file), text)
    click.echo(apply_text(found, done, done.files), nl=False)
    needs_a_person = done.of("cannot") or done.of("kept, undeclared")
    return EXIT_ERROR if needs_a_person else EXIT_OK


@review.command("close", epilog=CLOSE_EPILOG)
@REVIEW_FILE
@MANIFEST
@site_options
def close(review_file: Path, paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """After the apply: read the site, name any revoked access still there (exit 1), else
    write the evidence (REVIEW.evidence.json and .html, beside REVIEW)."""
    found = read_review(review_file)
    if not _passes(found):
        return EXIT_ERROR

    desired, target = _site_of(site_opts, paths)

    async def run() -> Closing:
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            async with open_site(site_opts, target, progress, command="review close") as site:
                return await close_review(site, found, desired)

    closing = aio.run(run())
    if not closing.closed:
        click.echo(close_text(closing), nl=False)
        return EXIT_ERROR
    evidence = evidence_data(closing, Holder.current("review close").describe(), __version__)
    stem = review_file.with_suffix("")
    as_json, as_html = (stem.with_name(f"{stem.name}.evidence.{kind}") for kind in ("json", "html"))
    document = json.dumps(evidence, indent=1, ensure_ascii=False) + "\n"
    write_private_file(as_json, document, what="the evidence")
    write_private_file(as_html, evidence_html(evidence), what="the evidence")
    click.echo(close_text(closing, (str(as_json), str(as_html))), nl=False)
    return EXIT_OK


def _site_of(
    site_opts: SiteOptions, paths: tuple[str, ...]
) -> tuple[DesiredSite | None, SiteChoice]:
    """The manifest (None: none given) and the site and records a review command means: as
    ``access`` would, for the same manifest."""
    if not paths:
        return None, locate(site_opts)
    desired = load_desired(paths).desired
    return desired, locate_manifest(site_opts, paths, desired)


def _passes(found: Review) -> bool:
    """Whether the review passes ``review check``; if not, its problems are printed."""
    verdict = check_review(found)
    if verdict.passed:
        return True
    click.echo(check_text(found, verdict), nl=False, err=True)
    click.echo(f"Fix the review first (`reconciler review check {found.origin}`).", err=True)
    return False
