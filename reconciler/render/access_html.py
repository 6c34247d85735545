"""An access report as one self-contained HTML file: open it in a browser, attach it to a review.

Inline CSS and a small inline script (click a column heading to sort), nothing fetched: a
Content-Security-Policy forbids every request. The page is the template
``templates/access.html.j2``, which escapes every value it prints (``render/templating.py``):
this module only says what goes where. The person x workspace matrix is drawn when it has at
most ``MATRIX_MAX_CELLS`` cells; a larger site gets the table of every access (sortable the
same way) and a sentence saying why.
"""

from __future__ import annotations

from reconciler.access.model import ACCESS_SETTINGS, AccessReport
from reconciler.access.words import known_text
from reconciler.render.access_parts import (
    COLUMNS,
    FINDING_LABELS,
    Grouped,
    opening,
    row,
    row_texts,
    since_heading,
    since_lines,
)
from reconciler.render.templating import render_html

MATRIX_MAX_CELLS = 40_000
MATRIX_COLUMNS = ("person", "name", "e-mail", "active", "administrator")
SINCE_CLASSES = {"+": "gained", "-": "lost", "~": "changed"}

Cell = tuple[str, str, str]
"""A table cell: its text, its CSS class and its tooltip (empty: none)."""


def _cell(text: str) -> Cell:
    return (text, "", "")


def _matrix_rows(report: AccessReport, grouped: Grouped) -> list[list[Cell]] | None:
    """Who reaches which workspace, a row per person; None when too large for a page."""
    if len(report.people) * len(report.workspaces) > MATRIX_MAX_CELLS:
        return None
    rows = []
    for person in report.people:
        reached = {e.workspace_id: e for e in grouped.by_person[person.id]}
        cells = [
            _cell(person.username),
            _cell(person.name),
            _cell(person.email),
            _cell(known_text(person.active)),
            _cell("yes" if person.administrator else "no"),
        ]
        for ws in report.workspaces:
            entry = reached.get(ws.id)
            if entry is None:
                cells.append(_cell(""))
                continue
            mark = ("M" if entry.member else "") + ("A" if entry.administrator else "")
            tip = f"{entry.via}; permissions: {row(entry)['permissions']}"
            cells.append((mark, mark.lower(), tip))
        rows.append(cells)
    return rows


def render_access_html(report: AccessReport) -> str:
    grouped = Grouped.of(report)
    return render_html(
        "access.html.j2",
        site=report.site,
        opening=opening(report),
        findings=[(f.kind, FINDING_LABELS[f.kind], f.person, f.detail) for f in report.findings],
        since_heading=since_heading(report),
        since_lines=[(SINCE_CLASSES[sym], text) for sym, text in since_lines(report)],
        notes=report.notes,
        people=len(report.people),
        workspaces=len(report.workspaces),
        matrix_header=[*MATRIX_COLUMNS, *(ws.name for ws in report.workspaces)],
        matrix_rows=_matrix_rows(report, grouped),
        header=["workspace", *COLUMNS, *ACCESS_SETTINGS],
        rows=[
            [
                _cell(e.workspace),
                *(_cell(text) for text in row_texts(e)),
                *(_cell(known_text(value)) for value in e.access_settings().values()),
            ]
            for e in report.entries
        ],
    )
