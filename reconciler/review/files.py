"""A review file written and read back: CSV for a spreadsheet, JSON for programs.

Both hold the same header (``Header``: format, site, read time, tool version, ``strict``,
row count, digest) and rows (``model.COLUMNS``).

* CSV: the header as ``key,value`` rows, an empty row, then the table with its column names.
  It is written by the reports' one CSV writer (``render.access.csv_text``: every text cell
  quoted and neutralised, so a spreadsheet computes nothing in it) and read back as a
  spreadsheet saves it: columns in any order, extra columns (a reviewer's notes) ignored,
  short rows and trailing empty cells accepted.
* JSON: one header key a line and one row a line, so a pull request's diff shows each
  decision on its own line.

A file that is not a review (a damaged one, a report, one too large or too deep) is one
``BadReview`` naming it, never a traceback.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler import bounded_json
from reconciler.errors import ReconcilerError
from reconciler.render.access import csv_text
from reconciler.review.model import (
    ADDED_COLUMNS,
    COLUMNS,
    DECISION_COLUMNS,
    FACT_COLUMNS,
    REVIEW_FORMAT,
    REVIEW_FORMAT_VERSION,
    Cell,
    Decision,
    Header,
    Review,
    Reviewer,
    Row,
    unneutralised,
)

MAX_REVIEW_BYTES = 64 * 2**20
"""The largest review file read: a site of 13,600 accesses makes about 5 MiB."""
MAX_REVIEW_DEPTH = 8
"""A review nests 3 levels (the file, its rows, a row)."""

HEADER_KEYS = (
    "format",
    "format_version",
    "site",
    "read_at",
    "tool_version",
    "strict",
    "row_count",
    "digest",
)
REVIEWER_KEY = "reviewer"
"""A CSV header row per assigned reviewer: reference, user ID, username, e-mail address."""
REVIEWER_FIELDS = ("reference", "user_id", "username", "email")
HINT = "Give a review file written by `reconciler review start -o REVIEW.csv` (or .json)."


if TYPE_CHECKING:
    from _csv import Reader as CsvReader


class BadReview(ReconcilerError):
    """The file is not a review this version can read."""


# --- writing -------------------------------------------------------------------------------


def review_text(review: Review, kind: str) -> str:
    """The review as ``kind`` (``csv`` or ``json``)."""
    return _csv_text(review) if kind == "csv" else _json_text(review)


def _header_values(header: Header) -> dict[str, Cell | bool]:
    return {
        "format": REVIEW_FORMAT,
        "format_version": REVIEW_FORMAT_VERSION,
        "site": header.site,
        "read_at": header.read_at,
        "tool_version": header.tool_version,
        "strict": header.strict,
        "row_count": header.row_count,
        "digest": header.digest,
    }


def _row_values(row: Row) -> dict[str, Cell]:
    decision = row.decision
    return {
        **{column: row.facts.get(column, "") for column in FACT_COLUMNS},
        "decision": decision.decision,
        "justification": decision.justification,
        "decided_by": decision.decided_by,
        "decided_at": decision.decided_at,
        "row_check": row.row_check,
    }


def _reviewer_values(reviewer: Reviewer) -> dict[str, Cell | None]:
    return {
        "reference": reviewer.reference,
        "user_id": reviewer.user_id,
        "username": reviewer.username,
        "email": reviewer.email,
    }


def _csv_text(review: Review) -> str:
    def cell(value: Cell | bool) -> Cell:
        return ("true" if value else "false") if isinstance(value, bool) else value

    preamble = [[key, cell(value)] for key, value in _header_values(review.header).items()]
    preamble += [
        [REVIEWER_KEY, *("" if v is None else v for v in _reviewer_values(r).values())]
        for r in review.header.reviewers
    ]
    table = [[_row_values(row)[column] for column in COLUMNS] for row in review.rows]
    return csv_text([*preamble, [], list(COLUMNS), *table])


def _json_text(review: Review) -> str:
    reviewers = [_reviewer_values(r) for r in review.header.reviewers]
    header = [
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},"
        for k, v in {**_header_values(review.header), "reviewers": reviewers}.items()
    ]
    rows = ",\n".join(f"    {json.dumps(_row_values(r), ensure_ascii=False)}" for r in review.rows)
    return "\n".join(["{", *header, '  "rows": [', rows, "  ]", "}"]) + "\n"


# --- reading -------------------------------------------------------------------------------


def _refused(message: str) -> BadReview:
    return BadReview(message, hint=HINT)


def read_review(path: Path) -> Review:
    """The review in the file at ``path``."""
    text = bounded_json.read_file(path, MAX_REVIEW_BYTES, "a review file", _refused)
    text = text.removeprefix("\ufeff")  # a spreadsheet may save UTF-8 with a byte-order mark
    if text.lstrip().startswith("{"):
        return _from_json(text, str(path))
    return _from_csv(text, str(path))


def _from_json(text: str, origin: str) -> Review:
    data = bounded_json.parse(text, MAX_REVIEW_DEPTH, origin, "a review file", _refused)
    if not isinstance(data, dict):
        raise BadReview(f"{origin} is not a review file.", hint=HINT)
    header = _header(data, origin)
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise BadReview(f"{origin} has no list of rows.", hint=HINT)
    return Review(
        header,
        tuple(_row(item, f"rows[{i}]", origin) for i, item in enumerate(rows, start=1)),
        origin,
        "json",
    )


def _from_csv(text: str, origin: str) -> Review:
    reader = csv.reader(text.splitlines(keepends=True))
    try:
        values, columns = _csv_preamble(reader, origin)
        header = _header(values, origin)
        rows = tuple(_csv_rows(reader, columns, origin))
    except csv.Error as exc:
        raise BadReview(f"{origin} is not a CSV file a review can be ({exc}).", hint=HINT) from None
    return Review(header, rows, origin, "csv")


def _csv_preamble(reader: CsvReader, origin: str) -> tuple[dict[str, Any], dict[str, int]]:
    """The header's ``key,value`` rows, then the columns' positions by name."""
    values: dict[str, Any] = {}
    for row in reader:
        cells = _trimmed(row)
        if cells and unneutralised(cells[0]) == COLUMNS[0]:
            names = [unneutralised(cell).strip() for cell in cells]
            missing = [c for c in COLUMNS if c not in names and c not in ADDED_COLUMNS]
            if missing:
                raise BadReview(
                    f"{origin} lacks the column(s) {', '.join(missing)}.",
                    hint="Keep every column `review start` wrote (add your own after them).",
                )
            positions = {name: names.index(name) for name in COLUMNS if name in names}
            return _csv_header_values(values), positions
        if cells and cells[0] == REVIEWER_KEY:
            fields = [*map(unneutralised, cells[1:5]), "", "", "", ""][:4]
            values.setdefault("reviewers", []).append(
                dict(zip(REVIEWER_FIELDS, fields, strict=True))
            )
        elif cells and cells[0] in HEADER_KEYS:
            values[cells[0]] = unneutralised(cells[1]) if len(cells) > 1 else ""
    raise BadReview(f"{origin} has no row of column names: not a review file.", hint=HINT)


def _csv_header_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The CSV header's text as the JSON header's types (numbers and ``strict``)."""
    typed: dict[str, Any] = dict(values)
    for key in ("format_version", "row_count"):
        text = values.get(key, "").strip()
        typed[key] = int(text) if text.isascii() and text.isdigit() else text
    for reviewer in typed.get("reviewers", []):
        text = reviewer["user_id"].strip()
        reviewer["user_id"] = int(text) if text.isascii() and text.isdigit() else text or None
    strict = values.get("strict", "").strip().casefold()
    typed["strict"] = {"true": True, "false": False}.get(strict, strict)
    return typed


def _csv_rows(reader: CsvReader, columns: Mapping[str, int], origin: str) -> Iterator[Row]:
    """The table's rows, each named by its line in the file (a spreadsheet's row number)."""
    for cells in reader:
        if not any(cell.strip() for cell in cells):
            continue  # an empty row a spreadsheet kept
        values = {name: cells[i] if i < len(cells) else "" for name, i in columns.items()}
        yield _row(values, f"line {reader.line_num}", origin)


def _trimmed(cells: Sequence[str]) -> list[str]:
    """A row without the empty cells a spreadsheet pads short rows with."""
    kept = list(cells)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def _header(data: Mapping[str, Any], origin: str) -> Header:
    if data.get("format") != REVIEW_FORMAT:
        raise BadReview(f"{origin} is not a site-reconciler review file.", hint=HINT)
    if data.get("format_version") != REVIEW_FORMAT_VERSION:
        raise BadReview(
            f"{origin} is a review file of format version {data.get('format_version')!r:.20}; "
            f"this reconciler reads version {REVIEW_FORMAT_VERSION}.",
            hint="Start the review again with this version.",
        )
    texts = {key: data.get(key) for key in ("site", "read_at", "tool_version", "digest")}
    bad = [key for key, value in texts.items() if not isinstance(value, str)]
    if not isinstance(data.get("strict"), bool):
        bad.append("strict")
    count = data.get("row_count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        bad.append("row_count")
    if bad:
        raise BadReview(f"{origin} is damaged: its {', '.join(bad)} cannot be read.", hint=HINT)
    return Header(
        str(data["site"]),
        str(data["read_at"]),
        str(data["tool_version"]),
        bool(data["strict"]),
        int(data["row_count"]),
        str(data["digest"]),
        _reviewers(data.get("reviewers", []), origin),
    )


def _reviewers(items: object, origin: str) -> tuple[Reviewer, ...]:
    """The header's assigned reviewers as the site knew them."""
    damaged = BadReview(f"{origin} is damaged: its reviewers cannot be read.", hint=HINT)
    if not isinstance(items, list):
        raise damaged
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise damaged
        reference, user_id, username, email = (item.get(key) for key in REVIEWER_FIELDS)
        texts = (reference, username, email)
        if not all(isinstance(text, str) for text in texts):
            raise damaged
        if user_id is not None and (not isinstance(user_id, int) or isinstance(user_id, bool)):
            raise damaged
        found.append(Reviewer(str(reference), user_id, str(username), str(email)))
    return tuple(found)


def _row(item: object, where: str, origin: str) -> Row:
    if not isinstance(item, dict):
        raise BadReview(f"{origin}, {where}: a row must be an object.", hint=HINT)
    missing = [c for c in COLUMNS if c not in item and c not in ADDED_COLUMNS]
    if missing:
        raise BadReview(f"{origin}, {where}: lacks {', '.join(missing)}.", hint=HINT)
    facts: dict[str, Cell] = {}
    for column in FACT_COLUMNS:
        value = item.get(column)
        if value is None:
            value = ""
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise BadReview(f"{origin}, {where}: {column} must be text.", hint=HINT)
        facts[column] = value
    written = {column: item[column] for column in (*DECISION_COLUMNS, "row_check")}
    for column, value in written.items():
        if value is not None and not isinstance(value, str):
            raise BadReview(f"{origin}, {where}: {column} must be text.", hint=HINT)
    text = {column: value or "" for column, value in written.items()}
    decision = Decision(*(text[column] for column in DECISION_COLUMNS))
    return Row(facts, decision, text["row_check"].strip(), where)
