"""Find the files a manifest is made of, from the paths the user gave.

A path is a file (read whatever its name) or a directory, whose YAML files are read in sorted
order so that merging is the same on every machine. A file that silently drops out of a
manifest is dangerous: with ``policy.prune`` on, what it declared is deleted. So in a
directory every name ending in ``.yaml`` or ``.yml``, in any case (``beta.YAML``), is part of
the manifest; one that cannot be read (a broken or looping symbolic link, no access) is an
error, never skipped. Hidden YAML files (editor backups such as ``.#finance.yaml``) are
skipped, each with a warning that names it, and so are subdirectories, which are not
searched (drafts or old copies must not join the site) -- except the files that the
manifest's ``ownership:`` names as a team's (``team_files``): a team may keep its file in
``teams/``, as kubernetes/org keeps a file per team.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reconciler.findings import Finding, has_errors
from reconciler.model import Source
from reconciler.ownership.model import file_matches

MANIFEST_SUFFIXES = (".yaml", ".yml")
"""Compared without regard to case."""


@dataclass(frozen=True, slots=True)
class ManifestFile:
    path: Path
    name: str  # as findings show it: the path the user gave, or directory/file name


def is_yaml_name(name: str) -> bool:
    return name.lower().endswith(MANIFEST_SUFFIXES)


def _cannot_open(path: Path, shown: str, exc: OSError) -> Finding:
    """Why ``path`` cannot be used: a dangling or looping link, a missing file, no access."""
    reason = exc.strerror or str(exc)
    if path.is_symlink():
        return Finding.error(
            f"is a broken symbolic link to {os.readlink(path)} ({reason})",
            Source(shown),
            "fix or remove the link: what the file declares is not part of the manifest without it",
        )
    if isinstance(exc, FileNotFoundError):
        return Finding.error(
            "no such file or directory",
            Source(shown),
            "give a manifest file or a directory of *.yaml files",
        )
    return Finding.error(f"cannot be read: {reason}", Source(shown), "check the path and access")


def _directory_entry(child: Path, shown: str) -> ManifestFile | Finding | None:
    """The manifest file ``child`` is, a finding on why it is not, or None for a non-YAML name."""
    if not is_yaml_name(child.name):
        return None
    if child.name.startswith("."):
        return Finding.warning(
            "this hidden file is not read (an editor's backup or lock file?)",
            Source(shown),
            "to make it part of the manifest, rename it without the leading dot",
        )
    try:
        mode = child.stat().st_mode
    except OSError as exc:
        return _cannot_open(child, shown, exc)
    if stat.S_ISDIR(mode):
        return Finding.warning(
            "this directory is not read: subdirectories are not part of the manifest",
            Source(shown),
            "move its files up, or rename it so that its name does not end in .yaml or .yml",
        )
    return ManifestFile(child, shown)  # not a regular file? reading it will say so


def _directory_files(directory: Path, shown: str) -> tuple[list[ManifestFile], list[Finding]]:
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return [], [Finding.error(f"cannot be listed: {reason}", Source(shown), "check access")]
    files: list[ManifestFile] = []
    findings: list[Finding] = []
    for child in children:
        entry = _directory_entry(child, str(Path(shown) / child.name))
        if isinstance(entry, ManifestFile):
            files.append(entry)
        elif entry is not None:
            findings.append(entry)
    if not files and not has_errors(findings):
        findings.append(
            Finding.error(
                "the directory holds no *.yaml or *.yml files",
                Source(shown),
                "put the manifest files directly in it (subdirectories are not read)",
            )
        )
    return files, findings


def manifest_files(paths: Sequence[str | Path]) -> tuple[list[ManifestFile], list[Finding]]:
    """The files to read, in merge order, and a finding for each path that is unusable."""
    files: list[ManifestFile] = []
    findings: list[Finding] = []
    for given in paths:
        path, shown = Path(given), str(given)
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            findings.append(_cannot_open(path, shown, exc))
            continue
        if stat.S_ISDIR(mode):
            found, problems = _directory_files(path, shown)
            files += found
            findings += problems
        else:
            files.append(ManifestFile(path, shown))
    return _once_each(files, findings)


def _once_each(
    files: list[ManifestFile], findings: list[Finding]
) -> tuple[list[ManifestFile], list[Finding]]:
    """Drop a file named twice (``site.yaml site/``): reading it twice would duplicate names."""
    seen: dict[Path, ManifestFile] = {}
    unique = []
    for file in files:
        key = file.path.resolve()
        if key in seen:
            findings.append(
                Finding.warning(
                    f"the file is also given as {seen[key].name}; it is read once",
                    Source(file.name),
                    "give each file once",
                )
            )
            continue
        seen[key] = file
        unique.append(file)
    return unique, findings


def team_files(
    base: str, globs: Iterable[str], known: Sequence[ManifestFile]
) -> list[ManifestFile]:
    """The YAML files under ``base`` (the directory of the file declaring ``ownership``, as
    findings name it) that a team's ``files`` glob names and that are not read already, in
    sorted order. Only the directory a glob starts in is searched, hidden ones never."""
    read = {file.path.resolve() for file in known}
    found: dict[str, ManifestFile] = {}
    for glob in globs:
        for relative in _matching(base or ".", glob):
            shown = os.path.join(base, relative) if base else relative
            path = Path(shown)
            if path.resolve() not in read and is_yaml_name(path.name):
                found.setdefault(shown, ManifestFile(path, shown))
    return [found[shown] for shown in sorted(found)]


def _matching(base: str, glob: str) -> list[str]:
    """Paths relative to ``base`` (``/``-separated) of the files ``glob`` matches."""
    parts = glob.split("/")
    fixed = next((i for i, part in enumerate(parts) if "*" in part or "?" in part), len(parts))
    if fixed == len(parts):
        return [glob] if os.path.isfile(os.path.join(base, glob)) else []
    start = os.path.join(base, *parts[:fixed]) if fixed else base
    matched = []
    for directory, subdirectories, names in os.walk(start):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        for name in names:
            relative = os.path.relpath(os.path.join(directory, name), base).replace(os.sep, "/")
            if not name.startswith(".") and file_matches(glob, relative):
                matched.append(relative)
    return matched
