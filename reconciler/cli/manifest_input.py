"""Load a manifest for a site command: print its findings, stop on errors."""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path

import click

from reconciler.engine.workflow import LoadedManifest
from reconciler.errors import ManifestError
from reconciler.findings import render_text, tally
from reconciler.manifest import collector_paused, load_manifest


def load_desired(paths: tuple[str, ...]) -> LoadedManifest:
    """The desired site and a digest of the manifest files it was read from.

    The manifest lives until the command exits, so its objects are frozen out of the garbage
    collector's sight as soon as they are built (200,000 of them for 1,000 workspaces, which
    every later collection would otherwise scan again).
    """
    with collector_paused():
        result = load_manifest(paths)
        gc.freeze()
    if result.findings:
        click.echo(render_text(result.findings), err=True)
    if result.desired is None:
        raise ManifestError(
            f"The manifest is invalid ({tally(result.findings)}); nothing was read from the site.",
            hint=f"Fix the problems above; `reconciler validate {' '.join(paths)}` checks again.",
        )
    digest = hashlib.sha256()
    for name in result.desired.files:
        digest.update(name.encode() + b"\0" + Path(name).read_bytes())
    return LoadedManifest(result.desired, digest.hexdigest())
