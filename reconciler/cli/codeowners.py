"""``reconciler codeowners``: the forge's CODEOWNERS block from the manifest's ``ownership:``."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.cli import cli, epilog
from reconciler.cli.manifest_input import load_desired
from reconciler.errors import EXIT_OK, ManifestError, ReconcilerError
from reconciler.ownership.codeowners import (
    FORGES,
    Forge,
    RepositoryLayout,
    block,
    find_codeowners,
    forge_of,
    repository_root,
    with_block,
)

EPILOG = epilog(
    [
        (0, "the block was printed, or written to PATH"),
        (1, "the manifest is invalid or declares no ownership, or PATH cannot be written"),
    ],
    [
        "reconciler codeowners examples/teams/",
        "reconciler codeowners examples/teams/ -o .github/CODEOWNERS",
        "reconciler codeowners examples/teams/ --forge gitlab -o .gitlab/CODEOWNERS",
    ],
)


@cli.command(epilog=EPILOG, short_help="Write the forge's CODEOWNERS from ownership:.")
@click.argument("manifest_dir", default=".", type=click.Path(exists=True), metavar="[MANIFEST_DIR]")
@click.option(
    "--forge",
    type=click.Choice(FORGES),
    default=None,
    help="The CODEOWNERS syntax: github, or gitlab (the block as a section). Default: gitlab "
    "for a file under .gitlab/ or one with sections, else github.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the block into this CODEOWNERS file, replacing the block already there and "
    "keeping every other line (made if missing); without it the block is printed.",
)
def codeowners(manifest_dir: str, forge: Forge | None, output: Path | None) -> int:
    """Print or write the CODEOWNERS block of the manifest's ownership: the manifest
    directory belongs to the central owners, each team's files to the team.

    Paths are relative to the root of the git repository the manifest is in (the current
    directory outside one). `reconciler validate` warns when the repository's CODEOWNERS
    has drifted from it. Details: docs/manifest.md, "Ownership".
    """
    desired = load_desired((manifest_dir,)).desired
    ownership = desired.ownership
    if ownership is None:
        raise ManifestError(
            f"{manifest_dir} declares no ownership, so there is nothing to write.",
            hint="declare `ownership:` in a central file of the manifest (docs/manifest.md)",
        )
    root = (repository_root(Path(manifest_dir)) or Path.cwd()).resolve()
    target = output or find_codeowners(root)  # the file the block names as the central's
    existing = _read(target)
    chosen = forge or (forge_of(target, existing) if target is not None else "github")
    try:
        layout = RepositoryLayout.of(ownership, root, target)
    except ValueError:
        raise ManifestError(
            f"{output} is not in the repository of the manifest ({root}).",
            hint="write the CODEOWNERS of the repository the manifest is in",
        ) from None
    lines = block(ownership, layout, chosen)
    if output is None:
        click.echo("\n".join(lines))
        return EXIT_OK
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(with_block(existing, lines), encoding="utf-8")
    except OSError as exc:
        raise ReconcilerError(f"Cannot write {output}: {exc.strerror or exc}.") from None
    click.echo(f"Wrote the ownership block ({chosen}) to {output}.")
    return EXIT_OK


def _read(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReconcilerError(f"Cannot read {path}: {exc}.") from None
