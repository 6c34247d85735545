"""The guards' vocabulary: which ``protect`` pattern keeps an object, and the user reference
rule applied to ``protect_users``.

Each kind's plan asks these before it plans a deletion or a replacement;
``engine/planning/safety.py`` asks them again of every destructive action at the moment it runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.identity import name_matches
from reconciler.model import LiveUser


def protecting(kind: str, patterns: Iterable[str], *names: str) -> str | None:
    """The protect pattern that matches any of ``names`` (of ``kind``; ``protect`` covers
    workspaces and groups alike), as the site compares names (``reconciler.identity``)."""
    for pattern in patterns:
        if any(name_matches(kind, name, pattern) for name in names):
            return pattern
    return None


def protecting_user(patterns: Iterable[str], username: str, live: LiveUser) -> str | None:
    """The ``protect_users`` pattern that names this user by the one rule of a user
    reference (``core/users.py``): the username the tool knows it by, its username on the
    site now, or its e-mail address, as the site compares them. A pattern that could name
    two people protects both: protection errs on the side of keeping an account."""
    return protecting("user", patterns, *(n for n in (username, live.username, live.email) if n))
