"""``--since PREVIOUS.json``: what access was gained and lost since an earlier review.

The earlier report is read back by the project's codec, strictly, after its format and
version are checked: a damaged, edited-out-of-shape or foreign file is one clear error, never
a traceback nor a silent comparison with nothing. An access is one person at one workspace,
both by name (``identity.py``): a workspace deleted and made again under its name is the
same place for a reviewer. A whole-site report can be compared with any later one (its
entries outside the later one's ``--user``/``--workspace`` are left out); narrower reports
only with one of the same scope, or a lost access would be only out of sight.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from reconciler import codec
from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import (
    ACCESS_FORMAT,
    ACCESS_FORMAT_VERSION,
    ACCESS_SETTINGS,
    Access,
    AccessReport,
    AccessShift,
    Since,
)
from reconciler.access.words import terms
from reconciler.engine.targets import Selection
from reconciler.errors import ReconcilerError

Key = tuple[str, str]

COMPARED = ("via", "permissions", "notifications", "active", *ACCESS_SETTINGS)
"""The terms of an access held at both reviews that ``changed`` reports."""


class BadPreviousReport(ReconcilerError):
    """The ``--since`` file is not an access report this version can compare with."""


def load_previous(text: str, origin: str) -> AccessReport:
    """The earlier report in ``text`` (read from ``origin``, named in every error)."""
    hint = "Give --since a JSON report written by `reconciler access --format json`."
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadPreviousReport(f"{origin} is not JSON ({exc}).", hint=hint) from None
    if not isinstance(data, dict) or data.get("format") != ACCESS_FORMAT:
        raise BadPreviousReport(f"{origin} is not a site-reconciler access report.", hint=hint)
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
        raise BadPreviousReport(f"{origin} is damaged: {exc}.", hint=hint) from None


def compare(previous: AccessReport, current: AccessReport, origin: str) -> Since:
    """Access gained, lost and changed from ``previous`` to ``current``."""
    if previous.site != current.site:
        raise BadPreviousReport(
            f"{origin} is a report of {previous.site}, not of {current.site}.",
            hint="Compare reports of the same site.",
        )
    if not previous.scope.whole_site and previous.scope != current.scope:
        raise BadPreviousReport(
            f"{origin} covers {_scope(previous)}; this report covers {_scope(current)}.",
            hint="Compare with a whole-site report, or one of the same --user/--workspace.",
        )
    before = _by_key(_within(previous.entries, current))
    after = _by_key(current.entries)
    changed = [
        shift
        for key in sorted(before.keys() & after.keys())
        for shift in _shifts(before[key], after[key])
    ]
    return Since(
        previous.read_at,
        current.read_at,
        previous.sign_off,
        tuple(after[key] for key in sorted(after.keys() - before.keys())),
        tuple(before[key] for key in sorted(before.keys() - after.keys())),
        tuple(changed),
    )


def _within(entries: Iterable[Access], current: AccessReport) -> list[Access]:
    """``entries`` of a whole-site report that ``current``'s scope covers."""
    scope = current.scope
    if scope.whole_site:
        return list(entries)
    places = Selection(tuple(f"workspace:{p}" for p in scope.workspaces))
    people = {person_key(p.username) for p in current.people}
    return [
        e
        for e in entries
        if (not scope.workspaces or places.holds("workspace", e.workspace))
        and (not scope.users or person_key(e.person) in people)
    ]


def _by_key(entries: Iterable[Access]) -> dict[Key, Access]:
    return {(person_key(e.person), workspace_key(e.workspace)): e for e in entries}


def _shifts(before: Access, after: Access) -> list[AccessShift]:
    old, new = terms(before), terms(after)
    return [
        AccessShift(after.workspace, after.person, name, old[name], new[name])
        for name in COMPARED
        if old[name] != new[name]
    ]


def _scope(report: AccessReport) -> str:
    given = [f"--user {u}" for u in report.scope.users]
    given += [f"--workspace {w}" for w in report.scope.workspaces]
    return " ".join(given) or "the whole site"
