"""``--since PREVIOUS.json``: what access was gained and lost since an earlier review.

The earlier report is read back by the project's codec, strictly, after its size, nesting,
format and version are checked, and compared only with a report of its own site (both URLs
in their one normal form, ``api.config.check_site_url``): a damaged, oversized, foreign or
edited-out-of-shape file is one clear error before the site is read, never a traceback, a
call to the site nor a silent comparison with nothing.

An access is one account at one workspace, both by ID: a workspace deleted and made again
under its name, a person moved between two workspaces of one name, an account deleted and
made again under its username are each an access lost and another gained, named so that the
two read apart. An account or workspace renamed keeps its ID: its accesses are ``changed``
(``username``, ``email``, ``workspace``), not lost and gained.

A whole-site report can be compared with any later one; narrower reports only with one of
the same scope, or a lost access would be only out of sight. ``--user`` and ``--workspace``
narrow both reports alike, by ID: the people and workspaces they mean on the site now, and
those they meant in the earlier report (``earlier_scope``: a deleted account is still found
there by its username, e-mail address or ID, and a person who lost everything is still in
the scope, though the report of today has no access of theirs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reconciler import bounded_json, codec
from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import (
    ACCESS_FORMAT,
    ACCESS_FORMAT_VERSION,
    ACCESS_SETTINGS,
    Access,
    AccessReport,
    AccessShift,
    ReportScope,
    Since,
)
from reconciler.access.read import Earlier
from reconciler.access.words import terms
from reconciler.api.config import check_site_url
from reconciler.core.users import UserDirectory
from reconciler.engine.read.targets import Selection
from reconciler.errors import ConfigError, ReconcilerError
from reconciler.model import LiveUser, Source, UserRef

Key = tuple[int, int]
"""An access: (user ID, workspace ID)."""

COMPARED = (
    "username",
    "email",
    "workspace",
    "via",
    "permissions",
    "notifications",
    "active",
    *ACCESS_SETTINGS,
)
"""The terms of an access held at both reviews that ``changed`` reports: the account's and
the workspace's names first (the same IDs, renamed), then the access's own terms."""

MAX_PREVIOUS_BYTES = 64 * 2**20
"""The largest ``--since`` file read. The large benchmark site's report (5,000 people, 1,000
workspaces, 13,600 accesses) is 5.4 MiB; a file past 64 MiB is a mistake or an attack, and
would take gigabytes to read."""

MAX_PREVIOUS_DEPTH = 32
"""The deepest nesting of a ``--since`` file: a report nests 5 levels (the report, its
``since``, ``gained``, an access, its permissions). Deeper is not a report, and JSON nested
some thousands deep would exhaust the interpreter's stack while being read."""

HINT = "Give --since a JSON report written by `reconciler access --format json`."


class BadPreviousReport(ReconcilerError):
    """The ``--since`` file is not an access report this version can compare with."""


def _refused(message: str) -> BadPreviousReport:
    return BadPreviousReport(message, hint=HINT)


def read_previous(path: Path) -> AccessReport:
    """The earlier report in the file at ``path``, read no further than ``MAX_PREVIOUS_BYTES``."""
    text = bounded_json.read_file(path, MAX_PREVIOUS_BYTES, "an access report", _refused)
    return load_previous(text, str(path))


def load_previous(text: str, origin: str) -> AccessReport:
    """The earlier report in ``text`` (read from ``origin``, named in every error)."""
    data = bounded_json.parse(text, MAX_PREVIOUS_DEPTH, origin, "an access report", _refused)
    if not isinstance(data, dict) or data.get("format") != ACCESS_FORMAT:
        raise BadPreviousReport(f"{origin} is not a site-reconciler access report.", hint=HINT)
    if data.get("format_version") != ACCESS_FORMAT_VERSION:
        raise BadPreviousReport(
            f"{origin} is an access report of format version "
            f"{data.get('format_version')!r:.20}; this reconciler reads version "
            f"{ACCESS_FORMAT_VERSION}.",
            hint="Compare with a report written by this version, or make a new one.",
        )
    try:
        return codec.from_data(data, AccessReport)
    except codec.DecodeError as exc:
        raise BadPreviousReport(f"{origin} is damaged: {exc}.", hint=HINT) from None


def check_comparable(previous: AccessReport, site: str, scope: ReportScope, origin: str) -> None:
    """Refuse an earlier report of another site, or a narrower one of another scope: before
    the site is read, so that a wrong file costs no call."""
    if _site_identity(previous.site) != _site_identity(site):
        raise BadPreviousReport(
            f"{origin} is a report of {_shown(previous.site)}, not of {site}.",
            hint="Compare reports of the same site.",
        )
    if not previous.scope.whole_site and previous.scope != scope:
        raise BadPreviousReport(
            f"{origin} covers {_scope(previous.scope)}; this report covers {_scope(scope)}.",
            hint="Compare with a whole-site report, or one of the same --user/--workspace.",
        )


def earlier_scope(previous: AccessReport, scope: ReportScope) -> Earlier:
    """What ``scope``'s names and patterns meant in the earlier report: the accounts and
    workspaces they matched then (by the rules ``--user`` and ``--workspace`` match by now)."""
    people = _named_people(previous.entries, scope.users)
    places = {
        pattern: {e.workspace_id for e in previous.entries if _holds(pattern, e.workspace)}
        for pattern in scope.workspaces
    }
    return Earlier(
        frozenset(i for ids in people.values() for i in ids),
        frozenset(i for ids in places.values() for i in ids),
        frozenset(name for name, ids in people.items() if ids),
        frozenset(pattern for pattern, ids in places.items() if ids),
    )


@dataclass(frozen=True, slots=True)
class Covered:
    """Whom and which workspaces a narrowed report covers, by ID: what its ``--user`` and
    ``--workspace`` mean on the site now (``read.py`` read them). None: not narrowed so."""

    people: frozenset[int] | None = None
    workspaces: frozenset[int] | None = None

    @classmethod
    def of(cls, report: AccessReport) -> Covered:
        """What ``report`` shows: its people and workspaces (a person with no access left is
        not among them -- the job gives what the read resolved instead)."""
        scope = report.scope
        return cls(
            frozenset(p.id for p in report.people) if scope.users else None,
            frozenset(w.id for w in report.workspaces) if scope.workspaces else None,
        )


def compare(
    previous: AccessReport, current: AccessReport, origin: str, covered: Covered | None = None
) -> Since:
    """Access gained, lost and changed from ``previous`` to ``current``, each access keyed by
    (user ID, workspace ID); ``covered``: what ``current``'s scope means on the site now."""
    check_comparable(previous, current.site, current.scope, origin)
    within = _within(previous, current.scope, covered or Covered.of(current))
    before, after = _by_key(within), _by_key(current.entries)
    held = sorted(before.keys() & after.keys(), key=lambda key: _order(after[key]))
    return Since(
        previous.read_at,
        current.read_at,
        previous.sign_off,
        _sorted(after[key] for key in after.keys() - before.keys()),
        _sorted(before[key] for key in before.keys() - after.keys()),
        tuple(shift for key in held for shift in _shifts(before[key], after[key])),
    )


def _within(previous: AccessReport, scope: ReportScope, covered: Covered) -> list[Access]:
    """The earlier entries that ``scope`` covers: those of the IDs it means now or meant then."""
    if scope.whole_site:
        return list(previous.entries)
    earlier = earlier_scope(previous, scope)
    people = (covered.people or frozenset()) | earlier.user_ids
    places = (covered.workspaces or frozenset()) | earlier.workspace_ids
    return [
        e
        for e in previous.entries
        if (not scope.users or e.user_id in people)
        and (not scope.workspaces or e.workspace_id in places)
    ]


def _named_people(entries: Iterable[Access], names: Iterable[str]) -> dict[str, set[int]]:
    """The accounts of ``entries`` each ``--user`` name may mean (every one: this is a
    search of the past, not a choice of one person to act on)."""
    accounts = {e.user_id: LiveUser(e.user_id, e.person, e.email) for e in entries}
    directory = UserDirectory.of(accounts.values())
    return {
        name: {u.id for u in directory.candidates(UserRef(name, Source("--user")))}
        for name in names
    }


def _holds(pattern: str, workspace: str) -> bool:
    return Selection((f"workspace:{pattern}",)).holds("workspace", workspace)


def _by_key(entries: Iterable[Access]) -> dict[Key, Access]:
    return {(e.user_id, e.workspace_id): e for e in entries}


def _order(entry: Access) -> tuple[str, int, str, int]:
    return (
        person_key(entry.person),
        entry.user_id,
        workspace_key(entry.workspace),
        entry.workspace_id,
    )


def _sorted(entries: Iterable[Access]) -> tuple[Access, ...]:
    return tuple(sorted(entries, key=_order))


def _compared(entry: Access) -> dict[str, str]:
    return {
        "username": entry.person,
        "email": entry.email,
        "workspace": entry.workspace,
        **terms(entry),
    }


def _shifts(before: Access, after: Access) -> list[AccessShift]:
    old, new = _compared(before), _compared(after)
    return [
        AccessShift(
            after.workspace,
            after.person,
            name,
            old[name],
            new[name],
            workspace_id=after.workspace_id,
            user_id=after.user_id,
        )
        for name in COMPARED
        if old[name] != new[name]
    ]


def _site_identity(url: str) -> str | None:
    """The site's one normal form; None for what is no site URL (it matches no site)."""
    try:
        return check_site_url(url)
    except ConfigError:
        return None


def _shown(text: str) -> str:
    """A URL from the file as the error shows it: as written when it is plain, else quoted."""
    return text if text.isprintable() and len(text) <= 200 else f"{text!r:.200}"


def _scope(scope: ReportScope) -> str:
    given = [f"--user {u}" for u in scope.users]
    given += [f"--workspace {w}" for w in scope.workspaces]
    return " ".join(given) or "the whole site"
