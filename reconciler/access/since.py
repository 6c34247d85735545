"""``--since PREVIOUS.json``: what access was gained and lost since an earlier review.

The earlier report is read back by the project's codec, strictly, after its size, nesting,
format and version are checked, and compared only with a report of its own site (both URLs
in their one normal form, ``api.config.check_site_url``): a damaged, oversized, foreign or
edited-out-of-shape file is one clear error before the site is read, never a traceback, a
call to the site nor a silent comparison with nothing. An access is one person at one
workspace, both by name (``identity.py``): a workspace deleted and made again under its name
is the same place for a reviewer. A whole-site report can be compared with any later one (its
entries outside the later one's ``--user``/``--workspace`` are left out); narrower reports
only with one of the same scope, or a lost access would be only out of sight.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reconciler import codec
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
from reconciler.access.words import terms
from reconciler.api.config import check_site_url
from reconciler.engine.targets import Selection
from reconciler.errors import ConfigError, ReconcilerError

Key = tuple[str, str]

COMPARED = ("via", "permissions", "notifications", "active", *ACCESS_SETTINGS)
"""The terms of an access held at both reviews that ``changed`` reports."""


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


def read_previous(path: Path) -> AccessReport:
    """The earlier report in the file at ``path``, read no further than ``MAX_PREVIOUS_BYTES``."""
    too_large = f"{path} is larger than {MAX_PREVIOUS_BYTES // 2**20} MiB: not an access report."
    try:
        if path.stat().st_size > MAX_PREVIOUS_BYTES:
            raise BadPreviousReport(too_large, hint=HINT)
        with path.open("rb") as handle:
            data = handle.read(MAX_PREVIOUS_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadPreviousReport(f"Cannot read the earlier report {path}: {exc}.") from None
    if len(data) > MAX_PREVIOUS_BYTES:  # it grew while we looked
        raise BadPreviousReport(too_large, hint=HINT)
    return load_previous(text, str(path))


def load_previous(text: str, origin: str) -> AccessReport:
    """The earlier report in ``text`` (read from ``origin``, named in every error)."""
    too_deep = (
        f"{origin} is nested more than {MAX_PREVIOUS_DEPTH} levels deep: not an access report."
    )
    try:
        data = json.loads(text)
    except RecursionError:
        raise BadPreviousReport(too_deep, hint=HINT) from None
    except ValueError as exc:
        raise BadPreviousReport(f"{origin} is not JSON ({exc}).", hint=HINT) from None
    if _nesting(data) > MAX_PREVIOUS_DEPTH:
        raise BadPreviousReport(too_deep, hint=HINT)
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


def _nesting(data: Any) -> int:
    """How deep ``data`` nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, list):
            continue  # a scalar at the top
        deepest = max(deepest, depth)
        stack.extend((item, depth + 1) for item in value if isinstance(item, dict | list))
    return deepest


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


def compare(previous: AccessReport, current: AccessReport, origin: str) -> Since:
    """Access gained, lost and changed from ``previous`` to ``current``."""
    check_comparable(previous, current.site, current.scope, origin)
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
