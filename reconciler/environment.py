"""The tool's environment variables: one ``RECONCILER_`` name for every site option.

The first releases read ``SITE_URL``, ``SITE_API_KEY``, ``SITE_API_SECRET`` and
``SITE_CREDENTIALS_FILE``. Those names are generic enough to collide with another tool's in a CI
job, so each now has a ``RECONCILER_`` name; the old ones are still read (the new name wins when
both are set) and a command that finds one says so in one line on stderr
(``deprecation_note``), so pipelines keep working while their owners rename them.

The names of the options that click reads itself (``--concurrency`` and the like) are here too,
so the documentation, the help and the code share one list.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Variable:
    """An environment variable the tool reads; ``old`` is its deprecated name, if any."""

    name: str
    old: str | None = None


SITE_URL = Variable("RECONCILER_SITE_URL", "SITE_URL")
API_KEY = Variable("RECONCILER_API_KEY", "SITE_API_KEY")
API_SECRET = Variable("RECONCILER_API_SECRET", "SITE_API_SECRET")
CREDENTIALS_FILE = Variable("RECONCILER_CREDENTIALS_FILE", "SITE_CREDENTIALS_FILE")
CA_FILE = Variable("RECONCILER_CA_FILE", "SITE_CA_FILE")
STATE = Variable("RECONCILER_STATE")
CONFIG = Variable("RECONCILER_CONFIG")
API_FORMAT = Variable("RECONCILER_API_FORMAT")
CONCURRENCY = Variable("RECONCILER_CONCURRENCY")
RATE_LIMIT = Variable("RECONCILER_RATE_LIMIT")
TIMEOUT = Variable("RECONCILER_TIMEOUT")
LOCK_TIMEOUT = Variable("RECONCILER_LOCK_TIMEOUT")
LOCK_LEASE = Variable("RECONCILER_LOCK_LEASE")
TODAY = Variable("RECONCILER_TODAY")
"""Tests only: the day the tool takes for today (``reconciler.clock``), ``YYYY-MM-DD``."""

CI = "CI"
"""Set (to any non-empty value) by GitHub Actions, GitLab CI and most CI services: a fresh
runner, where a silent fallback (local records, the records' plan key) loses data."""

RENAMED = (SITE_URL, API_KEY, API_SECRET, CREDENTIALS_FILE, CA_FILE)
"""The variables whose old ``SITE_*`` name is still read."""


def read(env: Mapping[str, str], variable: Variable) -> str | None:
    """The variable's value: its ``RECONCILER_`` name, else its old name; empty is unset."""
    return env.get(variable.name) or (env.get(variable.old) if variable.old else None) or None


def in_ci(env: Mapping[str, str]) -> bool:
    """True on a CI runner (``CI`` is set and not empty)."""
    return bool(env.get(CI))


def source(env: Mapping[str, str], variable: Variable) -> str | None:
    """Which name gave ``read`` its value, for messages that say where a value came from."""
    if env.get(variable.name):
        return variable.name
    if variable.old and env.get(variable.old):
        return variable.old
    return None


def names(variable: Variable) -> list[str]:
    """The names click reads for an option, the current one first."""
    return [variable.name, variable.old] if variable.old else [variable.name]


def deprecation_note(env: Mapping[str, str]) -> str | None:
    """One line naming every old ``SITE_*`` variable set, and its new name; ``None`` if none."""
    old = [variable for variable in RENAMED if variable.old and env.get(variable.old)]
    if not old:
        return None
    renames = ", ".join(f"{variable.old} as {variable.name}" for variable in old)
    return (
        f"Note: the SITE_* environment names are deprecated: set {renames} "
        "(a RECONCILER_ name wins when both are set)."
    )


def cache_dir() -> Path:
    """Where the tool keeps what it compiles once per machine (the schema's check, the
    methods of its classes): ``$XDG_CACHE_HOME/site-reconciler``, else
    ``~/.cache/site-reconciler``, made mode 700 by whoever writes first."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "site-reconciler"


def private_file(path: Path) -> bool:
    """Whether ``path`` is the user's own file that no one else may write: code kept in the
    cache is run, so a file another user could have put there is not read (only slower)."""
    try:
        found = path.stat()
    except OSError:
        return False
    owner = os.getuid() if hasattr(os, "getuid") else found.st_uid
    return found.st_uid == owner and not found.st_mode & 0o022
