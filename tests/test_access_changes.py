"""Plans say who gains and who loses access: one case file in tests/cases/access/ per behaviour.

Each case is a desired site, a live site and records in the compact form of the diff cases,
and the lines the plan's access section must show, in order (sorted by person; counted by
workspace past twenty). The plan's JSON always lists every change, and a plan file stays
readable both ways: a file written before plans carried access changes keeps its checksum.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.engine.drift import drift_report
from reconciler.engine.planning.plan import Plan
from reconciler.render.access_plan import MAX_LISTED, access_lines
from reconciler.render.markdown import render_markdown
from reconciler.render.text import render_text
from tests.support.plan_cases import plan_case

CASES = sorted((Path(__file__).parent / "cases" / "access").glob("*.yaml"))


def case(name: str) -> dict[str, Any]:
    path = next(p for p in CASES if p.stem.startswith(name))
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    plan = plan_case(data)
    assert plan.access is not None
    assert [line.text.strip() for line in access_lines(plan.access)] == data["expect"]


def test_the_json_lists_every_change_even_when_the_text_counts_them() -> None:
    plan = plan_case(case("08"))
    assert plan.access is not None and len(plan.access) > MAX_LISTED
    listed = plan.data["access"]
    # 20 people gain Big; 4 members of Finance lose the old one (its ID), gain the new one and
    # gain delete_files there
    assert len(listed) == 32
    assert {
        "person": "u21",
        "workspace": "Finance",
        "effect": "gains",
        "what": "delete_files",
        "via": "member",
        "cause": "override changed",
        "user_id": 2021,
    } in listed


def test_the_text_plan_shows_access_before_the_summary_and_markdown_in_a_section() -> None:
    plan = plan_case(case("01"))
    text = render_text(plan)
    assert text.index("Who gains or loses access:") < text.index("Plan: ")
    markdown = render_markdown(plan)
    assert "<summary>Who gains or loses access (2)</summary>" in markdown
    # in a ``diff`` block, the sign opens the line so a code host colours it
    assert '\n+ bob gains access to "Legal" (id 11) (member added)\n' in markdown
    assert '\n- carol loses access to "Legal" (id 11) (member removed)\n' in markdown


def test_a_plan_that_changes_nobody_s_access_has_no_section() -> None:
    plan = plan_case({"desired": {"groups": [{"name": "auditors", "members": ["alice"]}]}})
    assert plan.access == ()
    assert plan.data["access"] == []
    assert "Who gains or loses access" not in render_text(plan)


def test_drift_names_access_drift_the_site_against_the_manifest() -> None:
    report = drift_report(plan_case(case("01")))
    details = [item.detail for item in report.access]
    assert details == [
        'bob cannot reach "Legal" (id 11) on the site; the manifest says they can',
        'carol can reach "Legal" (id 11) on the site; the manifest does not say so',
    ]


def test_a_plan_file_reads_back_with_the_same_checksum() -> None:
    plan = plan_case(case("06"))
    again = Plan.from_data(plan.data)
    assert again.access == plan.access
    assert again.checksum == plan.checksum


def test_a_plan_file_saved_before_access_changes_keeps_its_checksum() -> None:
    """Same ``format_version``: a file without the key is read as it was written, so its
    checksum (and seal) still match and apply takes it."""
    data = dict(plan_case(case("01")).data)
    del data["access"]
    older = Plan.from_data(data)
    assert older.access is None
    assert "access" not in older.data
    assert older.data == data
