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


class AmbiguousTarget(ReconcilerError):
    """A ``--target`` written as one user's name (no glob) that names two people: one's
    username is the other's e-mail address, as the site compares them."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The ``--target`` and ``--exclude`` patterns of one plan, as given."""

    targets: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.targets or self.excludes)

    def holds(self, kind: str, name: str, *aliases: str) -> bool:
        """Whether ``kind`` ``name`` is in the selection; a user's ``aliases`` (its e-mail
        address) are other names a pattern may give it by."""
        names = (name, *aliases)
        wanted = not self.targets or any(matches(p, kind, *names) for p in self.targets)
        return wanted and not any(matches(p, kind, *names) for p in self.excludes)

    def describe(self) -> str:
        given = [f"--target {p}" for p in self.targets] + [f"--exclude {p}" for p in self.excludes]
        return " ".join(given)


def matches(pattern: str, kind: str, *names: str) -> bool:
    """Whether ``pattern`` names the object of ``kind`` known by any of ``names``."""
    prefix, colon, rest = pattern.partition(":")
    if colon and prefix in KINDS:
        if prefix != kind:
            return False
        pattern = rest
    return any(name_matches(kind, name, pattern) for name in names)


def is_literal(pattern: str) -> bool:
    """Whether ``pattern`` names one object as written (no ``*``, ``?`` or ``[``)."""
    return not any(char in pattern for char in "*?[")
