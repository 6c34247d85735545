"""The forge's CODEOWNERS from the manifest's ``ownership:``, and whether a repository's drifted.

The tool enforces ownership in ``validate`` and ``plan``; the forge enforces who must approve
a pull request. Both read one declaration: ``reconciler codeowners`` writes a block, between
two marker comments, that a repository's CODEOWNERS holds among its hand-written lines, and
``validate`` warns when the block there is not the one the manifest asks for.

The block, paths relative to the repository's root:

* the manifest directory (``/site/``; ``*`` when the manifest is at the root) belongs to the
  central owners: a file added to it is theirs until a team is granted it;
* each team's file globs belong to its owners. GitHub takes the last matching line, so these
  come after the directory's; plain ``path @owner`` lines read the same on both forges;
* the CODEOWNERS file itself belongs to the central owners: a team that could edit it could
  take the directory.

GitLab gets the block as a section (``[Site manifest]``): sections are enforced side by
side, so the block's rules hold whatever a hand-written section says. A section runs to the
next header, so hand-written lines after the block need a section header of their own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from reconciler.findings import Finding
from reconciler.model import DesiredSite, Source
from reconciler.ownership.model import Ownership

Forge = Literal["github", "gitlab"]
FORGES: tuple[Forge, ...] = ("github", "gitlab")

BEGIN = "# BEGIN site-reconciler ownership"
END = "# END site-reconciler ownership"
NOTE = "# Written by `reconciler codeowners` from the manifest's ownership: edit that, not this."
GITLAB_SECTION = "[Site manifest]"

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")
"""Where the forges look, GitHub's order first (GitLab reads the root, docs/ and .gitlab/)."""


def repository_root(start: Path) -> Path | None:
    """The git repository ``start`` is in (a ``.git`` directory or, in a worktree, file)."""
    here = start.resolve()
    for directory in (here, *here.parents):
        if (directory / ".git").exists():
            return directory
    return None


def find_codeowners(root: Path) -> Path | None:
    """The CODEOWNERS the forge reads in the repository at ``root``, if it has one."""
    return next((root / p for p in LOCATIONS if (root / p).is_file()), None)


def forge_of(path: Path, text: str = "") -> Forge:
    """The forge a CODEOWNERS file is for: GitLab's directory or sections say GitLab."""
    if ".gitlab" in path.parts or any(line.startswith("[") for line in text.splitlines()):
        return "gitlab"
    return "github"


@dataclass(frozen=True, slots=True)
class RepositoryLayout:
    """Where the manifest and the CODEOWNERS file are, relative to the repository's root."""

    manifest: str  # "" for the root
    codeowners: str | None = None

    @classmethod
    def of(cls, ownership: Ownership, root: Path, codeowners: Path | None) -> RepositoryLayout:
        manifest = Path(ownership.base or ".").resolve().relative_to(root)
        where = None
        if codeowners is not None:
            where = codeowners.resolve().relative_to(root).as_posix()
        return cls("" if manifest == Path(".") else manifest.as_posix(), where)


def block(ownership: Ownership, layout: RepositoryLayout, forge: Forge) -> list[str]:
    """The lines of the block, its markers included."""
    central = " ".join(ownership.central)
    under = f"/{layout.manifest}/" if layout.manifest else "/"
    lines = [BEGIN, NOTE]
    if forge == "gitlab":
        lines.append(GITLAB_SECTION)
    lines.append(f"{under if layout.manifest else '*'} {central}")
    for team in ownership.teams:
        lines += [f"{under}{glob} {' '.join(team.owners)}" for glob in team.files]
    if layout.codeowners is not None:
        lines.append(f"/{layout.codeowners} {central}")
    lines.append(END)
    return lines


def marked(text: str) -> tuple[int, int] | None:
    """The indexes of the block's first and last lines in ``text``'s lines, if it has one."""
    lines = text.splitlines()
    begin = next((i for i, line in enumerate(lines) if line.strip() == BEGIN), None)
    if begin is None:
        return None
    end = next((i for i in range(begin, len(lines)) if lines[i].strip() == END), None)
    return None if end is None else (begin, end)


def with_block(text: str, lines: list[str]) -> str:
    """``text`` with its block replaced by ``lines`` (appended when it has none); the
    hand-written lines around it are kept as they are."""
    existing = text.splitlines()
    span = marked(text)
    if span is not None:
        existing[span[0] : span[1] + 1] = lines
        return "\n".join(existing) + "\n"
    gap = [""] if existing and existing[-1].strip() else []
    return "\n".join([*existing, *gap, *lines]) + "\n"


@dataclass(frozen=True, slots=True)
class Drift:
    """What ``validate`` says of a repository's CODEOWNERS: where, and what is wrong."""

    path: Path
    line: int
    problem: str


def drift(ownership: Ownership | None, manifest_dir: Path) -> Drift | None:
    """How the CODEOWNERS of the repository the manifest is in differs from the block its
    ownership asks for; None when it does not, or there is no repository or CODEOWNERS."""
    root = repository_root(manifest_dir)
    path = None if root is None else find_codeowners(root)
    if root is None or path is None:
        return None
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Drift(path, 1, f"cannot be read ({exc}), so whether it matches is unknown")
    span = marked(text)
    if ownership is None:
        if span is None:
            return None
        return Drift(path, span[0] + 1, "holds a block of the manifest's ownership, which it "
                     "no longer declares")  # fmt: skip
    if span is None:
        return Drift(path, 1, "has no block of the manifest's ownership: the forge does not "
                     "ask the owners the manifest names")  # fmt: skip
    expected = block(ownership, RepositoryLayout.of(ownership, root, path), forge_of(path, text))
    if text.splitlines()[span[0] : span[1] + 1] != expected:
        return Drift(path, span[0] + 1, "has drifted from the manifest's ownership: the forge "
                     "would ask other owners than the plan names")  # fmt: skip
    return None


def shown(path: Path) -> str:
    """``path`` as a message names it: relative to the working directory when under it."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def drift_finding(desired: DesiredSite, paths: tuple[str, ...]) -> Finding | None:
    """``validate``'s warning when the repository's CODEOWNERS drifted from the manifest."""
    ownership = desired.ownership
    first = Path(paths[0]) if paths else Path(".")
    manifest_dir = (
        Path(ownership.base or ".") if ownership else first if first.is_dir() else first.parent
    )
    found = drift(ownership, manifest_dir)
    if found is None:
        return None
    command = f"reconciler codeowners {' '.join(paths)} -o {shown(found.path)}"
    return Finding.warning(
        f"the repository's CODEOWNERS {found.problem}",
        Source(shown(found.path), found.line, 1),
        f"run `{command}` and commit it" if ownership else "remove the block",
    )
