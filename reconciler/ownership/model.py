"""The ownership of a manifest as data: who owns which files, may declare which names, may set
what; and how a file and a name are matched.

``Ownership`` is part of the desired site (``model.DesiredSite.ownership``), so a saved plan
carries it and apply judges by the same declarations. It holds no ``Source``: file names are
the manifest's as its findings show them, read relative to ``base`` (the directory of the
file that declares ``ownership:``), as the forge's CODEOWNERS reads them.

What a team may set (``may_set``) is named after the fields it writes: ``users`` (who belongs
to a workspace), ``members`` (who belongs to a group), each workspace setting by its own name
(the workspace kind's settings, so a new setting is a new right without a change here), and
three rights that are no field: ``create`` (declare what the site does not have yet, or site
users), ``delete`` (let a plan delete what the team's files declared) and ``admins`` (declare
site administrators). The default is ``users`` alone.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from reconciler.identity import name_matches
from reconciler.kinds import group, workspace

CREATE = "create"
DELETE = "delete"
ADMINS = "admins"
RIGHTS: tuple[str, ...] = (
    workspace.MEMBERS,
    group.MEMBERS,
    *workspace.SETTINGS,
    CREATE,
    DELETE,
    ADMINS,
)
"""Every word ``may_set`` accepts, in the order the documentation lists them."""

DEFAULT_RIGHTS: tuple[str, ...] = (workspace.MEMBERS,)
"""What a team's files may set when ``may_set`` is not written: who belongs to its workspaces."""


@lru_cache(maxsize=256)
def file_pattern(glob: str) -> re.Pattern[str]:
    """The regular expression of a file glob, as CODEOWNERS reads it: ``*`` and ``?`` stay
    within one directory, ``**`` crosses directories (``teams/**/*.yaml``)."""
    out = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        else:
            char = glob[index]
            out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
            index += 1
    return re.compile("".join(out) + r"\Z")


def file_matches(glob: str, relative: str) -> bool:
    """Whether ``relative`` (a path under the manifest directory, ``/``-separated) matches."""
    return file_pattern(glob).match(relative) is not None


@dataclass(frozen=True, slots=True)
class TeamGrant:
    """One ``ownership.teams`` entry: the files a team owns and what they may declare."""

    files: tuple[str, ...]
    owners: tuple[str, ...]
    workspaces: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    may_set: tuple[str, ...] = DEFAULT_RIGHTS

    def owns(self, relative: str) -> bool:
        return any(file_matches(glob, relative) for glob in self.files)

    def may(self, right: str) -> bool:
        return right in self.may_set

    def names(self, kind: str) -> tuple[str, ...]:
        """The globs of ``kind`` (``workspace`` or ``group``) names its files may declare."""
        return self.workspaces if kind == "workspace" else self.groups

    def may_declare(self, kind: str, name: str) -> bool:
        """Whether ``name`` matches one of its globs, as the site compares names."""
        return any(name_matches(kind, name, glob) for glob in self.names(kind))


@dataclass(frozen=True, slots=True)
class FieldOrigin:
    """The file that sets one field of an object declared across files (``Ownership.origins``)."""

    kind: str
    name: str
    field: str
    file: str


@dataclass(frozen=True, slots=True)
class Ownership:
    """``ownership:`` as declared: the central owners and each team's grant."""

    central: tuple[str, ...]
    teams: tuple[TeamGrant, ...] = ()
    base: str = ""  # the manifest directory, as the files are named ("": the working directory)
    origins: tuple[FieldOrigin, ...] = ()  # the fields of objects declared in several files

    def relative(self, file: str) -> str:
        """``file`` as the ``files`` globs name it: relative to ``base``, ``/``-separated."""
        relative = os.path.relpath(file, self.base or ".")
        return posixpath.normpath(relative.replace(os.sep, "/"))

    def team_of(self, file: str) -> TeamGrant | None:
        """The team that owns ``file``, or None: a central file."""
        relative = self.relative(file)
        return next((team for team in self.teams if team.owns(relative)), None)

    def may(self, file: str, right: str) -> bool:
        """Whether what ``file`` declares may hold ``right`` (a central file may hold all)."""
        team = self.team_of(file)
        return team is None or team.may(right)

    def origin(self, kind: str, name: str, field: str) -> str | None:
        """The file that sets ``field`` of an object declared across files, if one does."""
        for found in self.origins:
            if found.kind == kind and found.field == field and found.name == name:
                return found.file
        return None

    def files_of(self, kind: str, name: str, main: str) -> tuple[str, ...]:
        """Every file that declares the object (``main`` first: the file of its ``source``)."""
        others = [o.file for o in self.origins if o.kind == kind and o.name == name]
        return tuple(dict.fromkeys([main, *others]))


def joined(*groups: Iterable[str]) -> tuple[str, ...]:
    """Owners of several places, each once, in the order first named."""
    return tuple(dict.fromkeys(owner for owners in groups for owner in owners))
