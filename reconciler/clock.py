"""Which day it is for the manifest's ``expires:`` dates: one clock, read in one place.

An expiry is a day, not a moment: ``expires: 2026-12-31`` means the access ends on that day,
so from that date on a plan removes it. Days are UTC days, the runners' own, so a nightly job
and a laptop in another time zone agree on which grants have ended. ``--at DATE`` (``plan``,
``drift``, ``access``, ``validate``) shows the site as the manifest wants it on another day, a
preview; ``RECONCILER_TODAY`` sets the clock itself, and exists for tests only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime

from reconciler.environment import TODAY, read

DAY_FORMAT = "YYYY-MM-DD"
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadDay(ValueError):
    """Text that is not a day written ``YYYY-MM-DD``, or a day no calendar has."""


def parse_day(text: str) -> date:
    """The day ``text`` writes as ``YYYY-MM-DD``; ``BadDay`` saying why it is none."""
    if not _DAY.fullmatch(text):
        raise BadDay(f"{text!r} is not a date written {DAY_FORMAT}")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadDay(f"{text!r} is no day of the calendar") from None


def today(env: Mapping[str, str] | None = None) -> date:
    """Today (UTC), or the day ``RECONCILER_TODAY`` sets (tests only)."""
    fixed = read(os.environ if env is None else env, TODAY)
    if fixed is not None:
        try:
            return parse_day(fixed)
        except BadDay as exc:
            raise BadDay(f"{TODAY.name}: {exc}") from None
    return datetime.now(UTC).date()


def days_between(start: date, end: date) -> int:
    return (end - start).days
