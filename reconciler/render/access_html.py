"""An access report as one self-contained HTML file: open it in a browser, attach it to a review.

Inline CSS and a small inline script (click a column heading to sort), nothing fetched: a
Content-Security-Policy forbids every request. Every text from the site is escaped. The
person x workspace matrix is drawn when it has at most ``MATRIX_MAX_CELLS`` cells; a larger
site gets the table of every access (sortable the same way) and a sentence saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from reconciler.access.model import ACCESS_SETTINGS, AccessReport
from reconciler.access.words import known_text
from reconciler.render.access_parts import (
    COLUMNS,
    FINDING_LABELS,
    Grouped,
    opening,
    row,
    since_heading,
    since_lines,
)

MATRIX_MAX_CELLS = 40_000

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " \\25B2"; } th.sorted-desc::after { content: " \\25BC"; }
td.m { background: #e3f2e3; } td.a { background: #fff2cc; } td.ma { background: #d9ead3; }
.finding-deactivated, .finding-undeclared, .finding-unmanaged_user { color: #a00; }
.gained { color: #070; } .lost { color: #a00; }
.note { color: #666; }
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var ascending = !th.classList.contains("sorted-asc");
      table.querySelectorAll("th").forEach(function (h) {
        h.classList.remove("sorted-asc", "sorted-desc");
      });
      th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
      rows.sort(function (a, b) {
        var x = a.cells[column].textContent, y = b.cells[column].textContent;
        var order = x.localeCompare(y, undefined, {numeric: true, sensitivity: "base"});
        return ascending ? order : -order;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], *, classes: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return (
        f'<table class="{" ".join(["sortable", *classes.split()])}"><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}\n</tbody></table>"
    )


def _td(text: str, cls: str = "", title: str = "") -> str:
    attributes = (f' class="{cls}"' if cls else "") + (f' title="{escape(title)}"' if title else "")
    return f"<td{attributes}>{escape(text)}</td>"


def _matrix(report: AccessReport, grouped: Grouped) -> str:
    cells = len(report.people) * len(report.workspaces)
    if cells > MATRIX_MAX_CELLS:
        return (
            f'<p class="note">{len(report.people)} people x {len(report.workspaces)} workspaces '
            f"is too large a matrix for a page; the table below lists every access.</p>"
        )
    header = ["person", "name", "e-mail", "active", "administrator"]
    header += [ws.name for ws in report.workspaces]
    rows = []
    for person in report.people:
        reached = {e.workspace_id: e for e in grouped.by_person[person.id]}
        cells_of = [
            _td(person.username),
            _td(person.name),
            _td(person.email),
            _td(known_text(person.active)),
            _td("yes" if person.administrator else "no"),
        ]
        for ws in report.workspaces:
            entry = reached.get(ws.id)
            if entry is None:
                cells_of.append(_td(""))
                continue
            mark = ("M" if entry.member else "") + ("A" if entry.administrator else "")
            words = row(entry)
            tip = f"{entry.via}; permissions: {words['permissions']}"
            cells_of.append(_td(mark, mark.lower(), tip))
        rows.append(cells_of)
    return (
        '<p class="note">M: member; A: administrator (reaches every workspace). '
        "Hover a cell for the permissions.</p>" + _table(header, rows, classes="matrix")
    )


def render_access_html(report: AccessReport) -> str:
    grouped = Grouped.of(report)
    parts = [f"<p>{escape(text)}</p>" for text in opening(report)]
    parts.append("<h2>Findings</h2>")
    if report.findings:
        items = "".join(
            f'<li class="finding-{f.kind}"><strong>{escape(FINDING_LABELS[f.kind])}</strong> '
            f"{escape(f.person)}: {escape(f.detail)}</li>"
            for f in report.findings
        )
        parts.append(f"<ul>{items}</ul>")
    else:
        parts.append("<p>None.</p>")
    heading = since_heading(report)
    if heading is not None:
        css = {"+": "gained", "-": "lost", "~": "changed"}
        items = "".join(
            f'<li class="{css[sym]}">{escape(text)}</li>' for sym, text in since_lines(report)
        )
        parts += [
            "<h2>Since the last review</h2>",
            f"<p>{escape(heading)}</p>",
            f"<ul>{items}</ul>",
        ]
    if report.notes:
        parts += [
            "<h2>Notes</h2>",
            "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul>",
        ]
    parts += ["<h2>Who reaches what</h2>", _matrix(report, grouped)]
    header = ["workspace", *COLUMNS, *ACCESS_SETTINGS]
    rows = [
        [
            _td(e.workspace),
            *(_td(row(e)[c]) for c in COLUMNS),
            *(_td(known_text(value)) for value in e.access_settings().values()),
        ]
        for e in report.entries
    ]
    parts += ["<h2>Every access</h2>", _table(header, rows)]
    title = escape(f"Access report: {report.site}")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{title}</title><style>{STYLE}</style></head>\n<body>\n"
        f"<h1>{title}</h1>\n" + "\n".join(parts) + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
