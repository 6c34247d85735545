"""One identity per kind of name: when two spellings name the same workspace, group or user.

The site compares names without regard to case: ``Legal`` and ``legal`` are one workspace,
``Dave`` and ``dave`` one account. A tool that compared them exactly would read
``previously: [legal]`` as naming nothing, and prune ``Legal`` with its files. The site's
documentation does not say how far its comparison goes, so the tool takes the broadest fold
a site may apply, and no two spellings the site could take for one object are ever two
objects here (``docs/manifest.md``, *Names*):

* outer whitespace is ignored (the site strips it);
* Unicode compatibility forms are their plain letters (NFKC: a fullwidth ``Legal``, the
  ligature ``fi``, a no-break space);
* case is ignored with Unicode's full case folding (``Straße`` is ``STRASSE``), and the
  dotted and dotless i of Turkish (U+0130, U+0131) are ``i``, whichever keyboard typed them.

Each kind's module holds its own key function (``reconciler.kinds``: ``name_key``); today
the three rules are the same fold, written in ``kinds/change.py``. This module holds the
tables that compare names through them. Globs (``protect``, ``--target``) match the folded
forms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Generic, Literal, TypeVar

from reconciler.kinds import group, user, workspace
from reconciler.kinds.change import fold as fold  # the one fold every kind's rule uses

Kind = Literal["workspace", "group", "user"]
T = TypeVar("T")

workspace_key = workspace.name_key
"""The identity of a workspace name (the workspace kind's rule)."""
group_key = group.name_key
"""The identity of a user group name (the group kind's rule)."""
username_key = user.name_key
"""The identity of a username, and of an e-mail address a reference names a user by."""


def path_key(path: str) -> str:
    """The identity of a workspace path (``workspacePath``): folded as names are, and a space
    as ``_`` (a name's path turns its spaces into underscores): ``Team A`` and ``team_a``, or
    ``Team A`` with an ideographic space, have one path."""
    return fold(path).replace(" ", "_")


KEYS: Mapping[str, Callable[[str], str]] = {
    "workspace": workspace_key,
    "group": group_key,
    "user": username_key,
}


def name_key(kind: str, name: str) -> str:
    """The identity of ``name`` as a name of ``kind`` (``workspace``, ``group``, ``user``)."""
    return KEYS[kind](name)


def same_name(kind: str, a: str, b: str) -> bool:
    return a == b or name_key(kind, a) == name_key(kind, b)


def name_matches(kind: str, name: str, pattern: str) -> bool:
    """Whether the glob ``pattern`` (``*``, ``?``, ``[..]``) matches ``name``, both folded."""
    return fnmatchcase(name_key(kind, name), name_key(kind, pattern))


class NameSet:
    """Names of one kind, holding every spelling of each: ``"legal" in NameSet(k, ["Legal"])``."""

    __slots__ = ("_key", "_keys")

    def __init__(self, kind: str, names: Iterable[str] = ()) -> None:
        self._key = KEYS[kind]
        self._keys = {self._key(name) for name in names}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._key(name) in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, name: str) -> None:
        self._keys.add(self._key(name))


class NameTable(Generic[T]):
    """A table keyed by names of one kind (records, live objects), looked up by identity.

    The exact spelling wins; otherwise the one entry of the same identity. Two entries of one
    identity (records written before names had one) are ambiguous: neither is found, so
    nothing is ever guessed between them.
    """

    __slots__ = ("_by_key", "_exact", "_key")

    def __init__(self, kind: str, table: Mapping[str, T]) -> None:
        self._key = KEYS[kind]
        self._exact = table
        self._by_key: dict[str, list[str]] = {}
        for name in table:
            self._by_key.setdefault(self._key(name), []).append(name)

    def find(self, name: str) -> tuple[str, T] | None:
        """``(spelling, value)`` of the entry ``name`` names, or None."""
        if name in self._exact:
            return name, self._exact[name]
        found = self._by_key.get(self._key(name), [])
        return (found[0], self._exact[found[0]]) if len(found) == 1 else None

    def get(self, name: str) -> T | None:
        found = self.find(name)
        return None if found is None else found[1]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._key(name) in self._by_key

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)


def lookup(table: Mapping[str, T], kind: str, name: str) -> tuple[str, T] | None:
    """``NameTable(kind, table).find(name)``, for one look-up."""
    return NameTable(kind, table).find(name)
