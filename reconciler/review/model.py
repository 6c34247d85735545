"""A review file: the population an access review froze, and the decisions reviewers wrote.

One row per person and workspace, as ``reconciler access`` reads it. The tool writes the
*facts* (``FACT_COLUMNS``: who, where, how reached, with what, declared or not, findings, the
assigned reviewer); a reviewer writes the *decision* (``DECISION_COLUMNS``). The facts are
sealed twice, so that an edited population is found whatever order a spreadsheet left the
rows in:

* each row's ``row_check``: a digest of the site, the read time and the row's facts, so the
  row that was altered (or added: it has none, or a wrong one) is named;
* the header's ``digest``: over the site, the read time, ``strict`` and every row's facts,
  sorted, so rows removed, or a header edited, are found too.

Facts are compared in a canonical text form (``canonical``): as a spreadsheet shows and
writes them back -- neutralised as the CSV writes them (``render.access.neutralised``), and
``true``/``false`` in any case (a spreadsheet saves ``TRUE``) -- so a JSON file and its CSV
twin, and a CSV saved again by a spreadsheet, have one digest. The digests are not a
signature: they prove that a file is the population as started unless someone recomputed
them, which the file's history (a pull request's diff) shows; ``docs/access.md`` says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from reconciler.access.model import ACCESS_SETTINGS
from reconciler.render.access import FORMULA_STARTS, SPLITS, neutralised

REVIEW_FORMAT = "site-reconciler-access-review"
REVIEW_FORMAT_VERSION = 1
"""Raised when a column or header key changes meaning."""

FACT_COLUMNS = (
    "workspace",
    "workspace_id",
    "person",
    "user_id",
    "email",
    "name",
    "active",
    "via",
    "permissions",
    "notifications",
    *ACCESS_SETTINGS,
    "manifest",
    "expires",
    "findings",
    "reviewer",
)
"""What the tool writes and seals: the access, what the reviewer decides on, and who is to."""

ADDED_COLUMNS = frozenset({"expires"})
"""Fact columns added within the format's version: a file written before them is read without
them, and a row's digests take them in only where they hold something -- so the digests of a
review started before them still hold."""

DECISION_COLUMNS = ("decision", "justification", "decided_by", "decided_at")
"""What a reviewer writes: ``keep`` or ``revoke``, why, who decided and when."""

COLUMNS = (*FACT_COLUMNS, *DECISION_COLUMNS, "row_check")

BOOLEAN_COLUMNS = frozenset({"active", *ACCESS_SETTINGS})
DECISIONS = ("keep", "revoke")
REVIEWER_SEPARATOR = ", "
"""Between the assigned reviewers of one row (user references hold no comma)."""

Cell = str | int


@dataclass(frozen=True, slots=True)
class Decision:
    """What the reviewer wrote in a row (blank: not yet)."""

    decision: str = ""
    justification: str = ""
    decided_by: str = ""
    decided_at: str = ""

    @property
    def verdict(self) -> str:
        """The decision as compared: ``keep``, ``revoke``, something else, or blank."""
        return self.decision.strip().casefold()


@dataclass(frozen=True, slots=True)
class Row:
    """One access: the facts as written (text from a CSV, numbers from JSON), the decision,
    the row's check, and where it is in its file (``line 12``, ``rows[3]``) for messages."""

    facts: Mapping[str, Cell]
    decision: Decision = field(default_factory=Decision)
    row_check: str = ""
    where: str = ""

    def text(self, column: str) -> str:
        return str(self.facts.get(column, ""))

    def number(self, column: str) -> int | None:
        """An ID column as a number; None when it is not one (an edited row)."""
        value = self.facts.get(column)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value or "").strip()
        return int(text) if text.isascii() and text.isdigit() else None

    @property
    def key(self) -> tuple[int | None, int | None]:
        """The access: (user ID, workspace ID), as ``access --since`` keys it."""
        return self.number("user_id"), self.number("workspace_id")

    @property
    def label(self) -> str:
        """How messages name the row: ``carol @ "Finance" (line 12)``."""
        where = f" ({self.where})" if self.where else ""
        person, workspace = (unneutralised(self.text(c)) for c in ("person", "workspace"))
        return f'{person} @ "{workspace}"{where}'

    @property
    def reviewers(self) -> tuple[str, ...]:
        assigned = unneutralised(self.text("reviewer"))
        return tuple(r.strip() for r in assigned.split(REVIEWER_SEPARATOR.strip()) if r.strip())


@dataclass(frozen=True, slots=True)
class Reviewer:
    """An assigned reviewer as the site knew them when the review started: the reference
    written (``policy.reviewers``, an owner) and the account it named -- so that a review
    checked offline knows that ``vera`` and ``vera@acme.example`` are one reviewer, though
    a reviewer may reach no workspace and so be no row's person. ``user_id`` None: the
    reference named no one on the site, or several people."""

    reference: str
    user_id: int | None = None
    username: str = ""
    email: str = ""


@dataclass(frozen=True, slots=True)
class Header:
    """What the file states about its population: whose, when, by which version, how large,
    whether a reviewer who is not the assigned one is an error, who the assigned reviewers
    are, and the digest."""

    site: str
    read_at: str
    tool_version: str
    strict: bool
    row_count: int
    digest: str
    reviewers: tuple[Reviewer, ...] = ()


@dataclass(frozen=True, slots=True)
class Review:
    """A review file as read (``origin``: its path) or as ``review start`` made it."""

    header: Header
    rows: tuple[Row, ...]
    origin: str = ""
    kind: Literal["csv", "json"] = "json"


def canonical(column: str, value: Cell) -> str:
    """A fact as the digests compare it (module doc)."""
    text = neutralised(str(value))
    return text.casefold() if column in BOOLEAN_COLUMNS else text


def _facts_line(facts: Mapping[str, Cell]) -> list[str]:
    return [
        canonical(column, facts.get(column, ""))
        for column in FACT_COLUMNS
        if column not in ADDED_COLUMNS or facts.get(column, "") != ""
    ]


def row_check(site: str, read_at: str, facts: Mapping[str, Cell]) -> str:
    """The seal of one row: its facts, of this site, read at this time."""
    line = json.dumps([site, read_at, *_facts_line(facts)], ensure_ascii=False)
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:20]


def population_digest(
    site: str,
    read_at: str,
    strict: bool,
    reviewers: Iterable[Reviewer],
    rows: Iterable[Mapping[str, Cell]],
) -> str:
    """The seal of the whole population, in any order of its rows."""
    lines = sorted(json.dumps(_facts_line(facts), ensure_ascii=False) for facts in rows)
    who = sorted(
        [r.reference, "" if r.user_id is None else str(r.user_id), r.username, r.email]
        for r in reviewers
    )
    document = json.dumps(
        {"site": site, "read_at": read_at, "strict": strict, "reviewers": who, "rows": lines},
        ensure_ascii=False,
        sort_keys=True,
    )
    return "sha256:" + hashlib.sha256(document.encode("utf-8")).hexdigest()


def sealed(
    site: str,
    read_at: str,
    tool_version: str,
    strict: bool,
    reviewers: tuple[Reviewer, ...],
    facts: Iterable[Mapping[str, Cell]],
) -> Review:
    """A new review of these facts, each row and the whole sealed, nothing decided."""
    rows = tuple(Row(dict(f), Decision(), row_check(site, read_at, f)) for f in facts)
    digest = population_digest(site, read_at, strict, reviewers, (row.facts for row in rows))
    header = Header(site, read_at, tool_version, strict, len(rows), digest, reviewers)
    return Review(header, rows)


def unneutralised(text: str) -> str:
    """``text`` as written before the CSV neutralised it: the ``'`` the writer put before a
    formula start taken out, where putting it back gives ``text`` again. A name that itself
    held such a ``'`` reads without it: the comparisons that use this (self-review, the
    assigned reviewer) then compare both forms (``spellings``)."""
    restored = _QUOTE.sub(r"\1\2", text)
    return restored if neutralised(restored) == text else text


def spellings(text: str) -> tuple[str, ...]:
    """``text`` as written and as it was before the CSV neutralised it (once if the same)."""
    return tuple(dict.fromkeys((text, unneutralised(text))))


_QUOTE = re.compile(rf"(^|[{re.escape(SPLITS)}])([ \"]*)'(?=[{re.escape(FORMULA_STARTS)}])")
"""The ``'`` ``neutralised`` puts before a formula start, with what precedes it."""
