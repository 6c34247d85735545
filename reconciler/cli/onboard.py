"""``reconciler export`` and ``reconciler adopt``: bring an existing site under management."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from reconciler import aio
from reconciler.cli import LOCKED, SITE_ERROR, cli, epilog
from reconciler.cli.files import write_private_file
from reconciler.cli.manifest_input import load_desired
from reconciler.cli.options import SiteOptions, locking_site_options
from reconciler.cli.progress import TerminalProgress
from reconciler.cli.site_choice import locate, locate_manifest, open_site
from reconciler.engine import workflow
from reconciler.errors import EXIT_OK, ReconcilerError
from reconciler.findings import plural
from reconciler.manifest import load_manifest
from reconciler.manifest.export import Export
from reconciler.render.manifest import render_manifest, render_manifest_files

EXPORT_EPILOG = epilog(
    [(0, "the manifest was written"), (1, SITE_ERROR + ", unwritable file"), LOCKED],
    [
        "reconciler export examples/ --sandbox -o live.yaml",
        "reconciler export --sandbox --users -o onboard/ --adopt",
    ],
)
ADOPT_EPILOG = epilog(
    [
        (0, "the objects were recorded as managed (the site was not changed)"),
        (1, SITE_ERROR),
        LOCKED,
    ],
    ["reconciler adopt examples/site.yaml --sandbox"],
)


def _is_directory_target(out: str) -> bool:
    return out.endswith(("/", "\\")) or Path(out).is_dir()


def _checked(files: dict[str, str]) -> dict[str, str]:
    """The exported files, once ``load_manifest`` accepts them exactly as they will be written.

    An export that the tool itself would refuse is a bug; it must never reach a user's disk.
    """
    with tempfile.TemporaryDirectory(prefix="reconciler-export-") as scratch:
        for name, text in files.items():
            (Path(scratch) / name).write_text(text, encoding="utf-8")
        result = load_manifest([scratch])
    errors = [finding for finding in result.findings if finding.severity == "error"]
    if errors:
        raise ReconcilerError(
            "The exported manifest would not be valid, so it was not written:\n  "
            + "\n  ".join(finding.render() for finding in errors[:5]),
            hint="This is a bug in site-reconciler: please report it with these lines.",
        )
    return files


def _write(export: Export, out: str | None) -> list[str]:
    """Write the manifest; returns the paths a later plan or adopt should be given."""
    if out is not None and _is_directory_target(out):
        directory = Path(out)
        for name, text in _checked(render_manifest_files(export)).items():
            write_private_file(directory / name, text, what="the exported manifest")
        return [str(directory)]
    text = _checked({"site.yaml": render_manifest(export)})["site.yaml"]
    if out is None:
        click.echo(text, nl=False)
        return []
    write_private_file(Path(out), text, what="the exported manifest")
    return [out]


async def _adopt(paths: tuple[str, ...], opts: SiteOptions) -> None:
    manifest = load_desired(paths)
    target = locate_manifest(opts, paths, manifest.desired)
    with TerminalProgress(verbose=opts.verbose) as progress:
        command = "adopt " + " ".join(paths)
        async with open_site(opts, target, progress, command=command) as site:
            adoption = await workflow.adopt(manifest, site)
    for line in adoption.adopted:
        click.echo(f"  adopted {line}")
    click.echo(
        f"Adopted {plural(len(adoption.adopted), 'object')}; the site was not changed. "
        "They may now be pruned once they leave the manifest (when policy.prune is true)."
    )
    if adoption.absent:
        click.echo(
            f"Not on the site, so not adopted: {plural(len(adoption.absent), 'declared object')}; "
            "`reconciler plan` will create them: " + ", ".join(adoption.absent)
        )


@cli.command(epilog=EXPORT_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(exists=True), metavar="[MANIFEST]...")
@locking_site_options
@click.option(
    "-o",
    "--out",
    metavar="FILE|DIR/",
    help="Write to FILE, or to DIR/ a file a workspace.",
)
@click.option(
    "--adopt",
    "then_adopt",
    is_flag=True,
    help="Then adopt what was written (needs --out).",
)
@click.option(
    "--users",
    "with_users",
    is_flag=True,
    help="Also write a users: section.",
)
def export(
    paths: tuple[str, ...],
    site_opts: SiteOptions,
    out: str | None,
    then_adopt: bool,
    with_users: bool,
) -> int:
    """Write a manifest of the live site, to onboard it.

    MANIFEST: use its site and records, as plan does. Details: docs/commands.md.
    """
    if then_adopt and out is None:
        raise click.UsageError("--adopt needs --out: adopt reads the manifest export writes.")
    if then_adopt and paths:
        raise click.UsageError(
            "--adopt records what export writes, with records beside it: give a MANIFEST or "
            "--adopt, not both."
        )
    if out is not None and _is_directory_target(out):
        Path(out).mkdir(parents=True, exist_ok=True)  # so its state directory is inside it

    async def run() -> Export:
        with TerminalProgress(verbose=site_opts.verbose) as progress:
            if paths:  # the site and records of that manifest, as plan finds them
                target = locate_manifest(site_opts, paths, load_desired(paths).desired)
            else:
                target = locate(site_opts, (out,) if out else ())
            async with open_site(site_opts, target, progress, command="export") as site:
                return await workflow.export(site, users=with_users)

    exported = aio.run(run())
    for problem in exported.problems:
        click.echo(f"Warning: {problem}", err=True)
    written = _write(exported, out)
    if written:
        count = plural(len(exported.workspaces), "workspace")
        click.echo(f"Exported {count} to {written[0]}.", err=True)
    if then_adopt:
        aio.run(_adopt(tuple(written), site_opts))
    return EXIT_OK


@cli.command(epilog=ADOPT_EPILOG)
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@locking_site_options
def adopt(paths: tuple[str, ...], site_opts: SiteOptions) -> int:
    """Record the declared objects that exist on the site as managed; change nothing.

    Details: docs/commands.md.
    """
    aio.run(_adopt(paths, site_opts))
    return EXIT_OK
