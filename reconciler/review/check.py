"""``review check``: whether a review is complete, untampered and decided by the right people.

Every problem is found in one pass and named by its row:

* the population: a row altered since ``review start`` (its facts do not match its
  ``row_check``), one added (no check, or another's), one repeated, rows added or removed
  (the count and the digest), a header edited (the digest);
* each decision: none yet, neither ``keep`` nor ``revoke``, a ``revoke`` without a
  justification, no ``decided_by`` or ``decided_at`` (a date, not before the population was
  read), a decision by the person about their own access (self-review, by identity:
  ``reviewers.People``), and one by someone who is not the row's assigned reviewer -- a
  warning, or an error when the review was started under ``policy.review.strict``.

Only errors fail the check; the review passes when there are none and every row is decided.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from reconciler.model import LiveUser
from reconciler.review.model import (
    DECISIONS,
    Review,
    Row,
    population_digest,
    row_check,
    spellings,
    unneutralised,
)
from reconciler.review.reviewers import People


@dataclass(frozen=True, slots=True)
class Problem:
    severity: Literal["error", "warning"]
    message: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """What ``review check`` found: the problems, and the decisions counted."""

    problems: tuple[Problem, ...]
    rows: int
    keep: int
    revoke: int

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    @property
    def passed(self) -> bool:
        return not self.errors and self.keep + self.revoke == self.rows


def check_review(review: Review) -> Verdict:
    """Every problem of ``review`` (module doc)."""
    problems = [*_population(review), *_decisions(review)]
    verdicts = Counter(row.decision.verdict for row in review.rows)
    return Verdict(tuple(problems), len(review.rows), verdicts["keep"], verdicts["revoke"])


def people_of(review: Review) -> People:
    """The people of the review, as its rows name them (the CSV's neutralising undone), and
    its assigned reviewers as the site knew them."""
    seen: dict[int, LiveUser] = {}
    for row in review.rows:
        user_id = row.number("user_id")
        if user_id is not None:
            email = unneutralised(row.text("email"))
            seen.setdefault(user_id, LiveUser(user_id, unneutralised(row.text("person")), email))
    for reviewer in review.header.reviewers:
        if reviewer.user_id is not None:
            seen.setdefault(
                reviewer.user_id, LiveUser(reviewer.user_id, reviewer.username, reviewer.email)
            )
    return People.of(seen.values())


# --- the population ------------------------------------------------------------------------


def _population(review: Review) -> Iterator[Problem]:
    header = review.header
    sound: list[Row] = []
    first: dict[tuple[int | None, int | None], Row] = {}
    for row in review.rows:
        expected = row_check(header.site, header.read_at, row.facts)
        if not row.row_check:
            yield _error(row, "has no row_check: a row added to the population after it started")
        elif row.row_check != expected:
            yield _error(row, "was altered since the review started: its facts do not match "
                         "its row_check (only decision, justification, decided_by and "
                         "decided_at are a reviewer's to write)")  # fmt: skip
        elif row.key in first:
            yield _error(row, f"repeats the access of {first[row.key].label}")
        else:
            first[row.key] = row
            sound.append(row)
    count = len(review.rows)
    if count != header.row_count:
        yield Problem(
            "error",
            f"the file has {count} rows; the population had {header.row_count} when the "
            "review started: rows were added or removed",
        )
    digest = population_digest(
        header.site, header.read_at, header.strict, header.reviewers, (r.facts for r in sound)
    )
    if digest != header.digest and len(sound) == count == header.row_count:
        yield Problem(
            "error",
            "the population does not match its digest: its header (site, read time, strict) "
            "was edited, or rows were swapped for others",
        )


# --- the decisions -------------------------------------------------------------------------


def _decisions(review: Review) -> Iterator[Problem]:
    people = people_of(review)
    started = _date(review.header.read_at)
    for row in review.rows:
        yield from _decision(row, people, started, review.header.strict)


def _decision(
    row: Row, people: People, started: datetime.date | None, strict: bool
) -> Iterator[Problem]:
    decision = row.decision
    verdict = decision.verdict
    if not verdict:
        yield _error(row, "has no decision yet (keep or revoke)")
        return
    if verdict not in DECISIONS:
        yield _error(row, f"has the decision {decision.decision!r:.60}: write keep or revoke")
        return
    if verdict == "revoke" and not decision.justification.strip():
        yield _error(row, "is revoked without a justification")
    decided_by = decision.decided_by.strip()
    if not decided_by:
        yield _error(row, "does not say who decided (decided_by)")
    else:
        yield from _who(row, decided_by, people, strict)
    yield from _when(row, decision.decided_at.strip(), started)


def _who(row: Row, decided_by: str, people: People, strict: bool) -> Iterator[Problem]:
    person = (*spellings(row.text("person")), *spellings(row.text("email")))
    if people.names_person(decided_by, row.number("user_id"), person):
        yield _error(
            row,
            f"is decided by {decided_by!r:.80}, the person whose access it is: no one may "
            "review their own access (another reviewer must decide)",
        )
        return
    assigned = row.reviewers
    if assigned and not any(people.same_person(decided_by, r) for r in assigned):
        severity: Literal["error", "warning"] = "error" if strict else "warning"
        yield Problem(
            severity,
            f"{row.label} is decided by {decided_by!r:.80}, not by its assigned reviewer "
            f"({', '.join(assigned)})" + (" (policy.review.strict)" if strict else ""),
        )


def _when(row: Row, decided_at: str, started: datetime.date | None) -> Iterator[Problem]:
    if not decided_at:
        yield _error(row, "does not say when it was decided (decided_at)")
        return
    day = _date(decided_at)
    if day is None:
        yield _error(row, f"has decided_at {decided_at!r:.40}: write a date, YYYY-MM-DD")
    elif started is not None and day < started:
        yield _error(
            row, f"was decided on {day.isoformat()}, before the population was read ({started})"
        )


def _date(text: str) -> datetime.date | None:
    """An ISO 8601 date, or the date of an ISO 8601 time; None for anything else."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text).date()
    except ValueError:
        return None


def _error(row: Row, message: str) -> Problem:
    return Problem("error", f"{row.label} {message}")
