"""Join the documents of a manifest, keeping each entry tied to the file it came from.

A directory lets each team own a file, so ``users``, ``workspaces``, ``groups`` and ``teams``
lists are joined in file order, while ``site``, ``defaults`` and ``policy`` describe the whole
site and may be written only once (a second one would silently win or lose otherwise). Entries keep
their document and their path inside it, because a message must name the file and the path
the user can find (``teams[0]`` of ``payments.yaml``), not an index in the joined list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from reconciler.findings import Finding, place
from reconciler.identity import group_key, workspace_key
from reconciler.manifest.paths import child
from reconciler.manifest.source import Document
from reconciler.model import Source

T = TypeVar("T")

LIST_SECTIONS = ("users", "workspaces", "groups", "teams")
SINGLE_SECTIONS = ("site", "defaults", "policy", "ownership")


@dataclass(frozen=True, slots=True)
class Entry:
    """A mapping written somewhere in one document."""

    document: Document
    path: str
    value: dict[str, Any]

    def source(self, key: str = "") -> Source:
        return self.document.source(child(self.path, key) if key else self.path)

    def usable(self, key: str) -> bool:
        """``key`` is present and no schema error lies at or under it (asked for every name
        and list of every entry: a document without errors answers without a path)."""
        if key not in self.value:
            return False
        return not self.document.tainted or self.document.usable(child(self.path, key))

    def broken(self, key: str) -> bool:
        """``key`` is present but holds a schema error."""
        return key in self.value and not self.usable(key)

    def get(self, key: str, kind: type[T]) -> T | None:
        """The value of ``key`` when it is usable and of type ``kind``, else None (the rules
        ask some 6,000 times for a 1,000-workspace manifest: ``usable`` is inlined)."""
        value = self.value.get(key)
        if not isinstance(value, kind):
            return None  # absent (None is no kind asked for), or of another type
        document = self.document
        if document.tainted and not document.usable(child(self.path, key)):
            return None
        return value

    def items(self, key: str) -> Iterator[tuple[int, Any]]:
        """The usable entries of the list at ``key``, with their indexes."""
        values = self.value.get(key)
        if not isinstance(values, list):
            return
        list_path = child(self.path, key)
        if self.document.usable(list_path):  # nothing under it is tainted: the common case
            yield from enumerate(values)
            return
        for index, value in enumerate(values):
            if self.document.usable(f"{list_path}[{index}]"):
                yield index, value


@dataclass(frozen=True, slots=True)
class WorkspaceDecl:
    """A workspace the manifest asks for: a ``workspaces`` entry or the workspace of a team.

    With ``ownership:``, the entries of one name in other files are ``parts`` of it (its
    settings in one file, its users in another); each key is written in one of them.
    """

    entry: Entry
    settings: Entry  # where the workspace's settings are written (``kinds.workspace``)
    users_key: str  # "users", or "members" for a team
    name: str | None  # the entry's usable name, read once (the rules ask it many times)
    team: str | None = None
    parts: tuple[Entry, ...] = ()

    def describe(self) -> str:
        if self.team is not None:
            return f"team {self.name!r} (its workspace)"
        return f"workspace {self.name!r}"

    def setter(self, key: str) -> Entry:
        """The entry that writes ``key`` (its main entry when none does)."""
        return _setter(self.entry, self.parts, key)

    def settings_value(self) -> dict[str, Any]:
        """Its settings as written, across its parts."""
        if not self.parts:
            return self.settings.value
        joined: dict[str, Any] = {}
        for entry in (*self.parts, self.entry)[::-1]:
            joined.update((k, v) for k, v in entry.value.items() if k not in _NOT_SETTINGS)
        return joined


_NOT_SETTINGS = frozenset({"name", "users", "previously"})


def _setter(entry: Entry, parts: tuple[Entry, ...], key: str) -> Entry:
    if not parts or key in entry.value:
        return entry
    return next((part for part in parts if key in part.value), entry)


@dataclass(frozen=True, slots=True)
class GroupDecl:
    """A user group the manifest asks for: a ``groups`` entry or the group of a team
    (``parts`` as for a workspace)."""

    entry: Entry
    name: str | None  # the entry's usable name, read once
    team: str | None = None
    parts: tuple[Entry, ...] = ()

    def describe(self) -> str:
        if self.team is not None:
            return f"team {self.name!r} (its group)"
        return f"group {self.name!r}"

    def setter(self, key: str) -> Entry:
        return _setter(self.entry, self.parts, key)


@dataclass(slots=True)
class MergedManifest:
    """Every document of the manifest, joined."""

    files: tuple[str, ...]
    users: list[Entry] = field(default_factory=list)
    workspaces: list[Entry] = field(default_factory=list)
    groups: list[Entry] = field(default_factory=list)
    teams: list[Entry] = field(default_factory=list)
    sections: dict[str, Entry] = field(default_factory=dict)  # site, defaults, policy, ownership
    documents: tuple[Document, ...] = ()
    made: Declarations | None = field(default=None, init=False, repr=False, compare=False)
    """The declarations, made once: three rules and the normalisation ask for them, after the
    manifest was joined (``merge``)."""

    @property
    def defaults(self) -> Entry | None:
        return self.sections.get("defaults")

    def workspace_decls(self) -> tuple[WorkspaceDecl, ...]:
        """Workspaces in file order, then the workspaces of teams."""
        return self._declarations().workspaces

    def group_decls(self) -> tuple[GroupDecl, ...]:
        """Groups in file order, then the groups of teams."""
        return self._declarations().groups

    def _declarations(self) -> Declarations:
        if self.made is None:
            workspaces = [
                WorkspaceDecl(entry, entry, "users", entry.get("name", str))
                for entry in self.workspaces
            ]
            groups = [GroupDecl(entry, entry.get("name", str)) for entry in self.groups]
            if "ownership" in self.sections:  # one name may then be declared across files
                workspaces = _across_files(workspaces, workspace_key)
                groups = _across_files(groups, group_key)
            team_groups = []
            for team in self.teams:
                name = team.get("name", str)
                settings = team.get("workspace", dict)
                settings_entry = Entry(team.document, child(team.path, "workspace"), settings or {})
                workspaces.append(WorkspaceDecl(team, settings_entry, "members", name, name))
                team_groups.append(GroupDecl(team, name, name))
            self.made = Declarations(tuple(workspaces), tuple(groups + team_groups))
        return self.made


Decl = TypeVar("Decl", WorkspaceDecl, GroupDecl)


def _across_files(decls: list[Decl], key: Callable[[str], str]) -> list[Decl]:
    """The entries of one name in other files joined into the first, as its ``parts``; two of
    one name in one file stay apart (an error of their own, reported as ever)."""
    main_of: dict[str, int] = {}  # a name's identity: the index of its first declaration
    kept: list[Decl] = []
    parts: dict[int, list[Entry]] = {}
    for decl in decls:
        at = None if decl.name is None else main_of.get(key(decl.name))
        if at is not None and not _same_file(decl.entry, kept[at].entry, parts.get(at, [])):
            parts.setdefault(at, []).append(decl.entry)
            continue
        if decl.name is not None and at is None:
            main_of[key(decl.name)] = len(kept)
        kept.append(decl)
    return [
        _joined(decl, tuple(parts[at])) if at in parts else decl for at, decl in enumerate(kept)
    ]


def _same_file(entry: Entry, main: Entry, parts: list[Entry]) -> bool:
    return any(entry.document is other.document for other in (main, *parts))


def _joined(decl: Decl, parts: tuple[Entry, ...]) -> Decl:
    if isinstance(decl, WorkspaceDecl):  # its permissions are checked where they are written
        return replace(decl, parts=parts, settings=_setter(decl.entry, parts, "permissions"))
    return replace(decl, parts=parts)


@dataclass(frozen=True, slots=True)
class Declarations:
    """The workspaces and groups a manifest declares, those of teams last."""

    workspaces: tuple[WorkspaceDecl, ...]
    groups: tuple[GroupDecl, ...]


def _list_entries(document: Document, section: str) -> list[Entry]:
    values = document.data.get(section)
    if not isinstance(values, list):
        return []
    return [
        Entry(document, f"{section}[{index}]", value)
        for index, value in enumerate(values)
        if isinstance(value, dict)
    ]


def merge(documents: Sequence[Document], *, all_read: bool) -> tuple[MergedManifest, list[Finding]]:
    """Join ``documents`` in order; ``all_read`` is False when some file could not be read,
    so a ``version`` that may sit in that file is not reported missing."""
    merged = MergedManifest(
        tuple(document.file for document in documents), documents=tuple(documents)
    )
    findings: list[Finding] = []
    given: dict[str, Source] = {}  # where each single section was first written
    for document in documents:
        for section in LIST_SECTIONS:
            getattr(merged, section).extend(_list_entries(document, section))
        findings += _take_sections(merged, document, given)
    if documents and all_read and not any("version" in doc.data for doc in documents):
        findings.append(
            Finding.error(
                "the manifest has no `version`",
                Source(documents[0].file, 1, 1, "version"),
                "add `version: 1` at the top"
                + (" of one of the files" if len(documents) > 1 else ""),
            )
        )
    return merged, findings


def _take_sections(
    merged: MergedManifest, document: Document, given: dict[str, Source]
) -> list[Finding]:
    findings = []
    for section in SINGLE_SECTIONS:
        if section not in document.data:
            continue
        here = document.source(section)
        if section in given:
            findings.append(
                Finding.error(
                    f"`{section}` is given a second time (first at {place(given[section], here)})",
                    here,
                    f"give `{section}` in one file only: it applies to the whole site",
                )
            )
            continue
        given[section] = here
        value = document.data[section]
        if isinstance(value, dict):
            merged.sections[section] = Entry(document, section, value)
    return findings


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into ``base`` key by key: nested mappings merge, anything else (null
    included) replaces. This is how ``defaults`` reaches every workspace."""
    if not base:  # no defaults: every workspace's own settings, as written
        return dict(over)
    result = dict(base)
    for key, value in over.items():
        below = result.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            result[key] = deep_merge(below, value)
        else:
            result[key] = value
    return result
