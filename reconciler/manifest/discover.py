"""Find the files a manifest is made of, from the paths the user gave.

A path is a file (read whatever its name) or a directory, whose ``*.yaml`` and ``*.yml``
files are read in sorted order so that merging is the same on every machine. Directories are
not searched recursively (a subdirectory of drafts or old copies must not join the site), and
hidden files (editor backups such as ``.#finance.yaml``) are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reconciler.findings import Finding
from reconciler.model import Source

MANIFEST_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class ManifestFile:
    path: Path
    name: str  # as findings show it: the path the user gave, or directory/file name


def _directory_files(directory: Path, shown: str) -> tuple[list[ManifestFile], list[Finding]]:
    try:
        children = sorted(directory.iterdir())
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return [], [Finding.error(f"cannot be listed: {reason}", Source(shown), "check access")]
    files = [
        ManifestFile(child, str(Path(shown) / child.name))
        for child in children
        if child.suffix in MANIFEST_SUFFIXES and not child.name.startswith(".") and child.is_file()
    ]
    if not files:
        return [], [
            Finding.error(
                "the directory holds no *.yaml or *.yml files",
                Source(shown),
                "put the manifest files directly in it (subdirectories are not read)",
            )
        ]
    return files, []


def manifest_files(paths: Sequence[str | Path]) -> tuple[list[ManifestFile], list[Finding]]:
    """The files to read, in merge order, and a finding for each path that is unusable."""
    files: list[ManifestFile] = []
    findings: list[Finding] = []
    for given in paths:
        path, shown = Path(given), str(given)
        if path.is_dir():
            found, problems = _directory_files(path, shown)
            files += found
            findings += problems
        elif path.exists():
            files.append(ManifestFile(path, shown))
        else:
            findings.append(
                Finding.error(
                    "no such file or directory",
                    Source(shown),
                    "give a manifest file or a directory of *.yaml files",
                )
            )
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
