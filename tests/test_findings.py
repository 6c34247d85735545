"""How a finding is shown: the text line editors and CI parse, and the JSON object."""

from __future__ import annotations

import json

import pytest

from reconciler.findings import Finding, place, render_json, render_text, tally
from reconciler.model import Source

HERE = Source("site.yaml", 12, 5, "workspaces[3].permissions")


@pytest.mark.parametrize(
    ("finding", "text"),
    [
        (
            Finding.error("no permission on", HERE, "turn one on"),
            "site.yaml:12:5: error: no permission on (at workspaces[3].permissions) — turn one on",
        ),
        (Finding.warning("listed twice", Source("a.yaml", 3)), "a.yaml:3: warning: listed twice"),
        (
            Finding.error("no such file", Source("x.yaml"), "fix"),
            "x.yaml: error: no such file — fix",
        ),
    ],
)
def test_text_rendering(finding: Finding, text: str) -> None:
    assert finding.render() == text


def test_json_rendering_always_has_every_key() -> None:
    findings = [Finding.error("bad", HERE, "fix it"), Finding.warning("odd", Source("b.yaml"))]
    assert json.loads(render_json(findings)) == [
        {
            "severity": "error",
            "file": "site.yaml",
            "line": 12,
            "column": 5,
            "path": "workspaces[3].permissions",
            "message": "bad",
            "hint": "fix it",
        },
        {
            "severity": "warning",
            "file": "b.yaml",
            "line": None,
            "column": None,
            "path": "",
            "message": "odd",
            "hint": "",
        },
    ]


def test_text_of_several_findings_is_one_line_each() -> None:
    findings = [Finding.error("a", HERE), Finding.warning("b", HERE)]
    assert render_text(findings).count("\n") == 1


def test_tally_counts_in_words() -> None:
    error, warning = Finding.error("a", HERE), Finding.warning("b", HERE)
    assert tally([error, error, error, warning]) == "3 errors, 1 warning"
    assert tally([warning, warning]) == "2 warnings"
    assert tally([]) == ""


def test_place_is_short_within_a_file() -> None:
    assert place(Source("site.yaml", 4), HERE) == "line 4"
    assert place(Source("team.yaml", 4), HERE) == "team.yaml:4"
