"""What ``--target`` and ``--exclude`` name: the patterns of one plan, and whether an object
is in them. A pattern matches names as the site compares them (``reconciler.identity``), the
glob applied to the folded forms; ``KIND:PATTERN`` names one kind only. Which objects a plan
then reads and plans is ``targets.py``'s job (the scope it makes, ``scope.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.errors import ReconcilerError
from reconciler.identity import name_matches

KINDS = ("workspace", "group", "user")


class NothingTargeted(ReconcilerError):
    """A ``--target`` or ``--exclude`` that names no object: a typo would otherwise plan
    nothing (a target), or the very object it meant to leave out (an exclude), silently."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The ``--target`` and ``--exclude`` patterns of one plan, as given."""

    targets: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.targets or self.excludes)

    def holds(self, kind: str, name: str) -> bool:
        """Whether ``kind`` ``name`` is in the selection."""
        wanted = not self.targets or any(matches(p, kind, name) for p in self.targets)
        return wanted and not any(matches(p, kind, name) for p in self.excludes)

    def describe(self) -> str:
        given = [f"--target {p}" for p in self.targets] + [f"--exclude {p}" for p in self.excludes]
        return " ".join(given)


def matches(pattern: str, kind: str, name: str) -> bool:
    prefix, colon, rest = pattern.partition(":")
    if colon and prefix in KINDS:
        return prefix == kind and name_matches(kind, name, rest)
    return name_matches(kind, name, pattern)
