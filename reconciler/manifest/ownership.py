"""``ownership:`` read from the joined manifest, and the rules a team's files are held to.

A team's file (one its ``files`` globs match) may declare only the workspace and group names
its globs match and set only what ``may_set`` grants; the site's own sections (``site``,
``defaults``, ``policy``, ``ownership``) are the central owners' alone. Each finding names the
rule that refuses (``ownership.teams[0].may_set: users``) and who may (the central owners), so
the author knows whom to ask. Whether a declaration creates something the site lacks is known
only against the site: the plan refuses that (``reconciler.ownership.owners``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from reconciler.findings import Finding, place
from reconciler.kinds import group, workspace
from reconciler.manifest.merge import Entry, GroupDecl, MergedManifest, WorkspaceDecl
from reconciler.manifest.paths import child
from reconciler.manifest.source import Document
from reconciler.ownership.model import (
    ADMINS,
    CREATE,
    DEFAULT_RIGHTS,
    FieldOrigin,
    Ownership,
    TeamGrant,
    file_matches,
)

CENTRAL_SECTIONS = ("site", "defaults", "policy")
"""What describes the whole site: never written in a team's file (nor is ``ownership``,
whose file ``_files`` holds to be central)."""

OLD_NAMES = "previously"
"""A rename moves the records of another name: a creation's right (``create``)."""


@dataclass(frozen=True, slots=True)
class _Team:
    """A team's grant with where it is written: ``ownership.teams[index]``."""

    index: int
    grant: TeamGrant

    @property
    def rule(self) -> str:
        return f"ownership.teams[{self.index}]"


def _texts(entry: Entry, key: str) -> tuple[str, ...]:
    return tuple(value for _, value in entry.items(key) if isinstance(value, str))


def _teams(section: Entry) -> list[_Team]:
    teams = []
    for index, value in section.items("teams"):
        if not isinstance(value, dict):
            continue
        entry = Entry(section.document, f"{child(section.path, 'teams')}[{index}]", value)
        rights = _texts(entry, "may_set") if entry.usable("may_set") else DEFAULT_RIGHTS
        grant = TeamGrant(
            files=_texts(entry, "files"),
            owners=_texts(entry, "owners"),
            workspaces=_texts(entry, "workspaces"),
            groups=_texts(entry, "groups"),
            may_set=rights,
        )
        teams.append(_Team(index, grant))
    return teams


def _declared(manifest: MergedManifest) -> tuple[Ownership, list[_Team]] | None:
    section = manifest.sections.get("ownership")
    if section is None:
        return None
    teams = _teams(section)
    ownership = Ownership(
        central=_texts(section, "central"),
        teams=tuple(team.grant for team in teams),
        base=os.path.dirname(section.document.file),
        origins=_origins(manifest),
    )
    return ownership, teams


def read_ownership(manifest: MergedManifest) -> Ownership | None:
    """The manifest's ``ownership:`` for the desired site, or None when it declares none."""
    declared = _declared(manifest)
    return None if declared is None else declared[0]


def _origins(manifest: MergedManifest) -> tuple[FieldOrigin, ...]:
    """Which file sets each field of every object declared across files."""
    found = []
    decls: list[tuple[str, WorkspaceDecl | GroupDecl]] = [
        *(("workspace", d) for d in manifest.workspace_decls()),
        *(("group", d) for d in manifest.group_decls()),
    ]
    for kind, decl in decls:
        if not decl.parts or decl.name is None:
            continue
        for entry in (decl.entry, *decl.parts):
            for key in entry.value:
                if key != "name":
                    found.append(FieldOrigin(kind, decl.name, key, entry.document.file))
    return tuple(found)


def check_ownership(manifest: MergedManifest) -> Iterator[Finding]:
    """Every overstep of a team's file, and every field written in two files."""
    declared = _declared(manifest)
    if declared is None:
        return
    ownership, teams = declared
    yield from _files(manifest, ownership, teams)
    for document in manifest.documents:
        team = _team_of(ownership, teams, document.file)
        if team is not None:
            yield from _Judge(ownership, team, document).findings(manifest)
    yield from _twice(manifest)


def _team_of(ownership: Ownership, teams: list[_Team], file: str) -> _Team | None:
    return _first_team(teams, ownership.relative(file))


def _first_team(teams: list[_Team], relative: str) -> _Team | None:
    return next((team for team in teams if team.grant.owns(relative)), None)


def _files(manifest: MergedManifest, ownership: Ownership, teams: list[_Team]) -> Iterator[Finding]:
    """The file of ``ownership`` is central, each file has one team at most, each glob
    matches a file."""
    section = manifest.sections["ownership"]
    relatives = [ownership.relative(document.file) for document in manifest.documents]
    holder = _team_of(ownership, teams, section.document.file)
    if holder is not None:
        yield Finding.error(
            f"this file declares `ownership` and the files of {holder.rule} include it",
            section.source(),
            "keep `ownership` in a central file: a team that owned it could grant itself anything",
        )
    for team in teams:
        for index, glob in enumerate(team.grant.files):
            matched = [relative for relative in relatives if file_matches(glob, relative)]
            where = section.document.source(f"{team.rule}.files[{index}]")
            if not matched:
                yield Finding.warning(
                    f"the file glob {glob!r} matches no file of the manifest",
                    where,
                    "check the path (relative to the directory of this file): a team file "
                    "the manifest does not read has what it declared deleted by a prune",
                )
            for relative in matched:
                first = _first_team(teams, relative)
                if first is not None and first.index != team.index:
                    yield Finding.error(
                        f"{relative} is a file of {first.rule} too",
                        where,
                        "give each file one team: CODEOWNERS and the plan name one owner",
                    )


class _Judge:
    """The rules one team's file is held to."""

    def __init__(self, ownership: Ownership, team: _Team, document: Document) -> None:
        self.ownership = ownership
        self.team = team
        self.document = document
        self.central = ", ".join(ownership.central) or "the central owners"

    def findings(self, manifest: MergedManifest) -> Iterator[Finding]:
        for section in CENTRAL_SECTIONS:
            if section in self.document.data:
                yield Finding.error(
                    f"this file may not write `{section}`, which is the whole site's: only "
                    f"{self.central} may ({self.team.rule}.files holds this file)",
                    self.document.source(section),
                    f"write it in a central file (the central owners: {self.central})",
                )
        for entry in self._mine(manifest.users):
            yield from self._user(entry)
        for entry in self._mine(manifest.workspaces):
            yield from self._declaration(entry, "workspace")
        for entry in self._mine(manifest.groups):
            yield from self._declaration(entry, "group")
        for entry in self._mine(manifest.teams):
            yield from self._team(entry)

    def _mine(self, entries: list[Entry]) -> list[Entry]:
        return [entry for entry in entries if entry.document is self.document]

    def _may_not(self, entry: Entry, key: str, right: str, what: str) -> Finding:
        rights = ", ".join(self.team.grant.may_set) or "nothing"
        return Finding.error(
            f"this file may not set `{key}` of {what}: only {self.central} may "
            f"({self.team.rule}.may_set: {rights})",
            entry.source(key),
            f"set it in a central file, or ask {self.central} to add `{right}` to may_set",
        )

    def _user(self, entry: Entry) -> Iterator[Finding]:
        name = entry.get("username", str) or "a user"
        if not self.team.grant.may(CREATE):
            yield self._may_not_create(entry, f"the site user {name!r}")
        elif entry.get("admin", bool) and not self.team.grant.may(ADMINS):
            yield self._may_not(entry, "admin", ADMINS, f"user {name!r}")

    def _may_not_create(self, entry: Entry, what: str) -> Finding:
        rights = ", ".join(self.team.grant.may_set) or "nothing"
        return Finding.error(
            f"this file may not declare {what}: only {self.central} may create "
            f"({self.team.rule}.may_set: {rights})",
            entry.source(),
            f"declare it in a central file, or ask {self.central} to add `create` to may_set",
        )

    def _name(self, entry: Entry, kind: str, described: str) -> Finding | None:
        name = entry.get("name", str)
        if name is None or self.team.grant.may_declare(kind, name):
            return None
        globs = ", ".join(self.team.grant.names(kind)) or "none"
        return Finding.error(
            f"this file may not declare {described} {name!r}: only {self.central} may "
            f"({self.team.rule}.{kind}s: {globs})",
            entry.source("name"),
            f"declare it in a central file, or ask {self.central} to add its name to the "
            f"team's {kind}s",
        )

    def _declaration(self, entry: Entry, kind: str) -> Iterator[Finding]:
        """A workspace's or group's name, and each key it sets: a field's own right (the
        members' field of each kind is named as its right), ``create`` for ``previously``."""
        refused = self._name(entry, kind, kind)
        if refused is not None:
            yield refused
            return
        what = f"{kind} {entry.get('name', str)!r}"
        for key in entry.value:
            right = CREATE if key == OLD_NAMES else key
            if key != "name" and entry.usable(key) and not self.team.grant.may(right):
                yield self._may_not(entry, key, right, what)

    def _team(self, entry: Entry) -> Iterator[Finding]:
        """A team is a workspace and a group: its name is held to both globs, its members
        set both the workspace's users and the group's members."""
        for kind in ("workspace", "group"):
            refused = self._name(entry, kind, f"the team (a {kind})")
            if refused is not None:
                yield refused
                return
        what = f"team {entry.get('name', str)!r}"
        for right in (workspace.MEMBERS, group.MEMBERS):
            if "members" in entry.value and not self.team.grant.may(right):
                yield self._may_not(entry, "members", right, what)
                break
        settings = entry.get("workspace", dict) or {}
        inner = Entry(entry.document, child(entry.path, "workspace"), settings)
        for key in settings:
            if inner.usable(key) and not self.team.grant.may(key):
                yield self._may_not(inner, key, key, what)


def _twice(manifest: MergedManifest) -> Iterator[Finding]:
    """A field of a workspace or group declared across files is written in one of them."""
    decls: list[WorkspaceDecl | GroupDecl] = [*manifest.workspace_decls(), *manifest.group_decls()]
    for decl in decls:
        if not decl.parts:
            continue
        first: dict[str, Entry] = {}
        for entry in (decl.entry, *decl.parts):
            for key in entry.value:
                if key == "name" or not entry.usable(key):
                    continue
                earlier = first.setdefault(key, entry)
                if earlier is not entry:
                    here = entry.source(key)
                    yield Finding.error(
                        f"`{key}` of {decl.describe()} is set in two files (first at "
                        f"{place(earlier.source(key), here)})",
                        here,
                        "set each field in one file: its settings in a central file, its "
                        "users in the team's",
                    )
