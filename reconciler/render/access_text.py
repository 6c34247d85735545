"""An access report as text (a terminal or a log) and as Markdown (a review document):
findings first, then what changed since the last review, then who reaches each workspace and
what each person reaches. The text escapes control characters (``render_lines``); the
Markdown is a template that escapes every value (``render/templating.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from reconciler.access.model import AccessReport
from reconciler.render.access_parts import (
    COLUMNS,
    FINDING_LABELS,
    Grouped,
    opening,
    person_summary,
    row,
    since_heading,
    since_lines,
    workspace_title,
)
from reconciler.render.lines import Line
from reconciler.render.templating import render_markdown
from reconciler.render.text import render_lines

FINDING_STYLES = {"administrator": "warning", "unusual_domain": "warning"}


def _table(rows: Sequence[dict[str, str]], indent: str) -> list[str]:
    """Rows aligned in columns, with a header line, by the cells a terminal gives each
    character (``rich.cells``): a wide letter takes two, as names in CJK scripts do."""
    widths = {c: max(cell_len(c), *(cell_len(r[c]) for r in rows)) for c in COLUMNS}
    lines = ["  ".join(_pad(c, widths[c]) for c in COLUMNS).rstrip()]
    lines += ["  ".join(_pad(r[c], widths[c]) for c in COLUMNS).rstrip() for r in rows]
    return [indent + line for line in lines]


def _pad(text: str, width: int) -> str:
    return text + " " * (width - cell_len(text))


def access_lines(report: AccessReport) -> list[Line]:
    lines = [Line(text, "heading") for text in opening(report)] + [Line("")]
    if report.findings:
        width = max(cell_len(label) for label in FINDING_LABELS.values())
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
            lines += [Line(text) for text in _table([row(e) for e in entries], "  ")]
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
                [[row(e)[c] for c in COLUMNS] for e in grouped.by_workspace.get(ws.id, [])],
            )
            for ws in report.workspaces
        ],
        people=[person_summary(p, grouped.by_person[p.id]) for p in report.people],
    )
