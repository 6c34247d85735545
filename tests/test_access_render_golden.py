"""Every format of the access report, compared with a reviewed file: one vocabulary in all.

The files ``tests/golden/access.*`` are the report of the site in
``tests/golden/access-site.yaml``, compared with the earlier report described there. To
accept a change of wording, regenerate them explicitly and read the diff before committing::

    RECONCILER_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_access_render_golden.py
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace

import pytest

from reconciler.access.model import SignOff
from reconciler.access.since import load_previous
from reconciler.render.access import ACCESS_FORMATS, CSV_COLUMNS, render_access
from tests.support.access_golden import golden_report
from tests.support.golden import GOLDEN, REGENERATE

SUFFIXES = {"text": "txt", "markdown": "md", "csv": "csv", "json": "json", "html": "html"}


@pytest.mark.parametrize("fmt", ACCESS_FORMATS.names)
def test_each_format_matches_its_reviewed_file(fmt: str) -> None:
    text = render_access(golden_report(), fmt)
    path = GOLDEN / f"access.{SUFFIXES[fmt]}"
    if REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: regenerate (see this module's doc) and review it"
    assert text == path.read_text(encoding="utf-8"), f"{fmt} changed: review, then regenerate"


def test_every_format_is_in_the_table() -> None:
    assert set(ACCESS_FORMATS.names) == set(SUFFIXES)


def test_the_golden_report_shows_every_finding_and_a_comparison() -> None:
    report = golden_report()
    assert {f.kind for f in report.findings} == {
        "deactivated",
        "administrator",
        "undeclared",
        "unmanaged_user",
        "unusual_domain",
    }
    assert report.since is not None
    assert report.since.gained and report.since.lost and report.since.changed


def test_findings_come_first_in_every_format_for_people() -> None:
    report = golden_report()
    for fmt in ("text", "markdown", "html"):
        text = render_access(report, fmt)
        first_finding = text.index("deactivated, yet still")
        assert first_finding < text.index("dave@gmail.example"), fmt


def test_the_html_report_is_one_file_that_fetches_nothing() -> None:
    html = render_access(golden_report(), "html")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert not re.search(r"\b(src|href)\s*=", html, re.IGNORECASE)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert html.count("<script>") == 1 and "<link" not in html
    assert '<table class="sortable matrix">' in html  # the person x workspace matrix
    # the site's names are text, never markup
    assert "=Scans &lt;2019&gt; | old" in html and "<2019>" not in html


def test_the_csv_is_one_row_per_person_and_workspace_with_no_formula() -> None:
    report = golden_report()
    rows = list(csv.DictReader(io.StringIO(render_access(report, "csv"))))
    assert len(rows) == len(report.entries)
    assert list(rows[0]) == list(CSV_COLUMNS)
    scans = [row["workspace"] for row in rows if "Scans" in row["workspace"]]
    assert scans and all(name.startswith("'=") for name in scans)


def test_the_json_report_reads_back_as_the_same_report() -> None:
    report = golden_report()
    assert load_previous(render_access(report, "json"), "report.json") == report


def test_the_json_report_leaves_room_for_the_sign_off() -> None:
    text = render_access(golden_report(), "json")
    assert '"format": "site-reconciler-access"' in text and '"format_version": 1' in text
    fresh = replace(golden_report(), sign_off=SignOff(None, None, None))
    assert ' "sign_off": {"reviewer": null, "date": null, "notes": null},\n' in (
        render_access(fresh, "json")
    )


def test_the_text_table_lines_up_a_wide_name_by_its_cells() -> None:
    """A name in a CJK script takes two terminal cells a letter: the columns after it are
    measured in cells, not characters, so they line up under the header (issue 43)."""
    from rich.cells import cell_len

    report = golden_report()
    wide = replace(report.entries[0], person="張偉")
    text = render_access(replace(report, entries=(wide, *report.entries[1:]), since=None), "text")
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "張偉" in line)
    header = next(line for line in reversed(lines[:at]) if line.strip().startswith("person"))
    row = lines[at]
    via = row.split()[1]  # the second column's value
    assert cell_len(row[: row.index(via)]) == cell_len(header[: header.index("via")])
