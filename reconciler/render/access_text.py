"""An access report as text (a terminal or a log) and as Markdown (a review document):
findings first, then what changed since the last review, then who reaches each workspace and
what each person reaches. The text escapes control characters (``render_lines``); the
Markdown is a template that escapes every value (``render/templating.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

from rich.cells import cell_len

from reconciler.access.model import AccessReport
from reconciler.render.access_parts import (
    COLUMNS,
    FINDING_LABELS,
    Grouped,
    opening,
    person_summary,
    row_texts,
    since_heading,
    since_lines,
    workspace_title,
)
from reconciler.render.lines import Line
from reconciler.render.templating import render_markdown
from reconciler.render.text import render_lines

FINDING_STYLES = {"administrator": "warning", "unusual_domain": "warning"}


def display_width(text: str) -> int:
    """The cells a terminal gives ``text`` (``rich.cells.cell_len``: a wide letter takes two,
    as names in CJK scripts do, a control character none). Printable ASCII -- nearly every
    cell of a report -- takes one a character: its length, without measuring each one."""
    if text.isascii() and text.isprintable():
        return len(text)
    return cell_len(text)


def _table(rows: Sequence[Sequence[str]], indent: str) -> list[str]:
    """Rows (cells by ``COLUMNS``) aligned in columns under a header line, by the cells a
    terminal gives each character (``display_width``). A table of printable ASCII alone --
    checked once, not cell by cell -- is padded by length, a line at a time."""
    table = [COLUMNS, *rows]
    every_cell = "".join(chain.from_iterable(table))
    if every_cell.isascii() and every_cell.isprintable():
        return _plain_table(table, indent)
    return _measured_table(table, indent)


def _plain_table(table: Sequence[Sequence[str]], indent: str) -> list[str]:
    """``_table`` where each cell's width is its length (printable ASCII)."""
    line = "  ".join(f"{{:<{max(map(len, column))}}}" for column in zip(*table, strict=True))
    return [indent + line.format(*cells).rstrip() for cells in table]


def _measured_table(table: Sequence[Sequence[str]], indent: str) -> list[str]:
    """``_table`` of any text: each cell measured once, and padded to its column's width."""
    measured = [[display_width(cell) for cell in cells] for cells in table]
    widths = [max(column) for column in zip(*measured, strict=True)]
    return [
        indent
        + "  ".join(
            [
                cell + " " * (width - used)
                for cell, used, width in zip(cells, used_by, widths, strict=True)
            ]
        ).rstrip()
        for cells, used_by in zip(table, measured, strict=True)
    ]


def access_lines(report: AccessReport) -> list[Line]:
    lines = [Line(text, "heading") for text in opening(report)] + [Line("")]
    if report.findings:
        width = max(display_width(label) for label in FINDING_LABELS.values())
        lines.append(Line(f"Findings ({len(report.findings)}):", "heading"))
        for f in report.findings:
            text = f"  {FINDING_LABELS[f.kind]:<{width}}  {f.person}: {f.detail}"
            lines.append(Line(text, FINDING_STYLES.get(f.kind, "delete")))
        lines.append(Line(""))
    heading = since_heading(report)
    if heading is not None:
        styles = {"+": "create", "-": "delete", "~": "change"}
        lines.append(Line(heading, "heading"))
        lines += [Line(f"  {sym} {text}", styles[sym]) for sym, text in since_lines(report)]
        lines.append(Line(""))
    if report.notes:
        lines += [Line("Notes:", "heading"), *(Line(f"  {n}", "dim") for n in report.notes)]
        lines.append(Line(""))
    grouped = Grouped.of(report)
    lines.append(Line("By workspace:", "heading"))
    for ws in report.workspaces:
        entries = grouped.by_workspace.get(ws.id, [])
        lines += [Line(""), Line(workspace_title(ws))]
        if entries:
            lines += [Line(text) for text in _table([row_texts(e) for e in entries], "  ")]
        else:
            lines.append(Line("  nobody in this report reaches it", "dim"))
    lines += [Line(""), Line("By person:", "heading")]
    for person in report.people:
        lines.append(Line(f"  {person_summary(person, grouped.by_person[person.id])}"))
    return lines


def render_access_text(report: AccessReport, *, color: bool = False) -> str:
    return render_lines(access_lines(report), color=color)


def render_access_markdown(report: AccessReport) -> str:
    """The template ``templates/access.md.j2`` escapes every value it prints: this says only
    what goes where."""
    grouped = Grouped.of(report)
    return render_markdown(
        "access.md.j2",
        site=report.site,
        opening=opening(report),
        findings=[(FINDING_LABELS[f.kind], f.person, f.detail) for f in report.findings],
        since_heading=since_heading(report),
        since_lines=[text for _, text in since_lines(report)],
        notes=report.notes,
        columns=COLUMNS,
        workspaces=[
            (
                workspace_title(ws),
                [list(row_texts(e)) for e in grouped.by_workspace.get(ws.id, [])],
            )
            for ws in report.workspaces
        ],
        people=[person_summary(p, grouped.by_person[p.id]) for p in report.people],
    )
