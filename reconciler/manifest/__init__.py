"""The site manifest: YAML files in, a ``DesiredSite`` (or every problem found) out.

The stages, each its own module, run in this order and never stop at the first problem::

    discover  the files named by the paths (directories: *.yaml/*.yml in any case, sorted,
              not recursive; a broken link is an error, a hidden YAML file a warning), then
              the teams' files ``ownership:`` names in subdirectories
    source    each file safely read and parsed, values indexed to their line and column
    schema    each document against schemas/site.schema.json
    merge     the documents joined (lists concatenate; site/defaults/policy at most once)
    references every list of user references read once, for the rules and the normalisation
    rules     the API's rules across the joined manifest (names, users, overrides, references,
              what each team's files may declare: ``ownership.py``)
    normalise defaults and teams expanded into a DesiredSite, only when there is no error

``load_manifest`` is the one entry point; the CLI and the engine call nothing else here.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from reconciler.findings import Finding, has_errors
from reconciler.manifest.discover import ManifestFile, manifest_files, team_files
from reconciler.manifest.merge import merge
from reconciler.manifest.normalise import normalise
from reconciler.manifest.references import read_references
from reconciler.manifest.rules import check_rules
from reconciler.manifest.schema import check_schema
from reconciler.manifest.source import Document, read_document
from reconciler.model import DesiredSite

__all__ = ["ManifestResult", "collector_paused", "load_manifest"]


@dataclass(frozen=True, slots=True)
class ManifestResult:
    """What validation found; ``desired`` is None as soon as there is one error."""

    desired: DesiredSite | None
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return self.desired is not None


def load_manifest(paths: Sequence[str | Path]) -> ManifestResult:
    """Read, check and normalise the manifest made of ``paths``; never raises for bad input."""
    with collector_paused():
        return _load(paths)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector held off while a manifest is built.

    Why: a manifest of 1,000 workspaces is some 200,000 new containers (nodes, values, paths,
    model objects) and no garbage cycle; with the default thresholds the collector would scan
    them again and again, a third of the load's time. It runs again as before afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load(paths: Sequence[str | Path]) -> ManifestResult:
    files, findings = manifest_files(paths)
    documents: list[Document] = []
    for file in files:
        findings += _read(file, documents)
    owned = _owned_globs(documents)
    if owned is not None:  # the teams' files in subdirectories join the manifest
        extra = team_files(*owned, files)
        files += extra
        for file in extra:
            findings += _read(file, documents)
    merged, problems = merge(documents, all_read=len(documents) == len(files))
    findings += problems
    references = read_references(merged)
    findings += check_rules(merged, references)
    findings = _in_file_order(findings, [file.name for file in files])
    desired = None if has_errors(findings) or not files else normalise(merged, references)
    return ManifestResult(desired, findings)


def _read(file: ManifestFile, documents: list[Document]) -> list[Finding]:
    """Read and check the shape of ``file``, adding its document to ``documents``."""
    document, findings = read_document(file.path, file.name)
    if document is not None:
        findings += check_schema(document)
        documents.append(document)
    return findings


def _owned_globs(documents: list[Document]) -> tuple[str, list[str]] | None:
    """The directory of the (first) file declaring ``ownership`` and its teams' file globs."""
    for document in documents:
        section = document.data.get("ownership")
        if isinstance(section, dict):
            teams = section.get("teams")
            globs = [
                glob
                for team in (teams if isinstance(teams, list) else [])
                if isinstance(team, dict) and isinstance(team.get("files"), list)
                for glob in team["files"]
                if isinstance(glob, str)
                and glob
                and ".." not in glob.split("/")
                and not glob.startswith("/")
            ]
            return os.path.dirname(document.file), globs
    return None


def _in_file_order(findings: list[Finding], files: list[str]) -> list[Finding]:
    """Sorted by file (in merge order), line and column; duplicates dropped."""
    rank = {name: index for index, name in enumerate(files)}
    unique = list(dict.fromkeys(findings))
    return sorted(
        unique,
        key=lambda f: (rank.get(f.source.file, -1), f.source.line or 0, f.source.column or 0),
    )
