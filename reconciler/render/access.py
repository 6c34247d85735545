"""An access report in the format asked for: the report's formats, by name (``ACCESS_FORMATS``).

JSON is the report as the codec writes it (``docs/access.md``: format version, site, read-at
time, the reviewer's sign-off to fill in, the entries), the file a later ``--since`` reads.
CSV is one row per person and workspace, for a spreadsheet: every text cell quoted, and no
cell or piece of one a spreadsheet may split off can start a formula (``neutralised``).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Sequence

from reconciler import codec
from reconciler.access.model import ACCESS_SETTINGS, Access, AccessReport
from reconciler.access.words import known_text, manifest_text
from reconciler.render.access_html import render_access_html
from reconciler.render.access_text import render_access_markdown, render_access_text
from reconciler.render.formats import Format, Formats, View

CSV_COLUMNS = (
    "workspace",
    "workspace_id",
    "person",
    "user_id",
    "email",
    "name",
    "active",
    "via",
    "permissions",
    "permissions_from",
    "notifications",
    "notifications_from",
    *ACCESS_SETTINGS,
    "manifest",
)
FORMULA_STARTS = "=+-@\t\r"
"""A spreadsheet takes a cell beginning with one of these for a formula."""
SPLITS = ",;\t\r\n"
"""Where a spreadsheet may cut a cell in pieces, each read as a cell of its own: the separators
of CSV in every locale (``,``; ``;`` where the comma is the decimal mark; tab) and line breaks.
Quoting keeps a cell whole only for a reader that splits as this file does."""
_FORMULA = re.compile(rf"(^|[{re.escape(SPLITS)}])([ \"]*)(?=[{re.escape(FORMULA_STARTS)}])")


def render_access_json(report: AccessReport) -> str:
    """One key a line, and one list item (an access, a finding, a person) a line: a file a
    reviewer can sign off in an editor, two quarters' files diff line by line, and a
    5,000-person site is written by the C encoder in a blink."""
    return _block(codec.to_data(report), 0) + "\n"


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _block(value: object, depth: int) -> str:
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(value, dict) and (
        depth == 0 or any(isinstance(v, list) and v for v in value.values())
    ):
        keys = [f"{inner}{_compact(k)}: {_block(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(keys) + f"\n{pad}}}"
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return "[\n" + ",\n".join(inner + _compact(item) for item in value) + f"\n{pad}]"
    return _compact(value)


def neutralised(text: str) -> str:
    """``text`` with a ``'`` before every formula start that begins it or a piece of it a
    spreadsheet may split off (after a separator or a line break, and any spaces or quotes),
    so each piece is shown as text, never computed (``docs/access.md``)."""
    return _FORMULA.sub(r"\1\2'", text)


def csv_text(rows: Iterable[Sequence[str | int]]) -> str:
    """``rows`` as CSV a spreadsheet opens safely: every text cell quoted (``QUOTE_NONNUMERIC``:
    a bare carriage return, a ``;`` or a tab would cut an unquoted one) and neutralised;
    numbers (the IDs) as numbers. The one CSV writer of the tool's reports and review files."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        writer.writerow([neutralised(c) if isinstance(c, str) else c for c in row])
    return buffer.getvalue()


def render_access_csv(report: AccessReport) -> str:
    """One row per access, under a row of column names."""
    names = {p.id: p.name for p in report.people}

    def cells(e: Access) -> tuple[str | int, ...]:
        return (
            e.workspace,
            e.workspace_id,
            e.person,
            e.user_id,
            e.email,
            names.get(e.user_id, ""),
            known_text(e.active),
            e.via,
            "" if e.permissions is None else " ".join(sorted(e.permissions)),
            e.permissions_from,
            "" if e.notifications is None else " ".join(sorted(e.notifications)),
            e.notifications_from,
            *(known_text(value) for value in e.access_settings().values()),
            "" if e.manifest is None else manifest_text(e),
        )

    return csv_text([CSV_COLUMNS, *(cells(e) for e in report.entries)])


ACCESS_FORMATS: Formats[AccessReport] = Formats(
    Format("text", "people", lambda report, view: render_access_text(report, color=view.color)),
    Format("markdown", "a review document", lambda report, view: render_access_markdown(report)),
    Format("csv", "a spreadsheet", lambda report, view: render_access_csv(report)),
    Format("json", "programs and --since", lambda report, view: render_access_json(report)),
    Format("html", "a browser (one file)", lambda report, view: render_access_html(report)),
)


def render_access(report: AccessReport, fmt: str, color: bool = False) -> str:
    return ACCESS_FORMATS.render(report, fmt, View(color))
