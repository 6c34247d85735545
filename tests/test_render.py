"""Renderers of plans and drift: the text users read, the Markdown comment, the JSON file."""

from __future__ import annotations

import json

import pytest
import yaml

from reconciler.engine.drift import drift_report
from reconciler.engine.plan import Plan
from reconciler.errors import ReconcilerError
from reconciler.render.drift import render_drift_markdown, render_drift_text
from reconciler.render.markdown import MAX_COMMENT_CHARS, render_markdown
from reconciler.render.text import render_text
from tests.test_planner import CASES, plan_case


def case(name: str) -> Plan:
    path = next(p for p in CASES if p.stem.startswith(name))
    return plan_case(yaml.safe_load(path.read_text()))


def test_text_shows_terraform_style_symbols_and_summary() -> None:
    text = render_text(case("09"))
    assert '+ workspace "New"' in text
    assert '- workspace "Old" (id 10) will be DELETED: destroys all files in the workspace' in text
    assert "Plan: 1 to create, 0 to change, 1 to delete. 2 API calls" in text
    assert 'workspace "Archive 2019": left the manifest; kept because it matches' in text


def test_text_says_no_changes_and_colours_only_when_asked() -> None:
    plan = case("02")
    assert "No changes. The site matches the manifest." in render_text(plan)
    assert "\x1b[" not in render_text(plan)
    assert "\x1b[" in render_text(case("09"), color=True)


def test_refused_plan_says_why_apply_will_refuse() -> None:
    text = render_text(case("10"))
    assert "Apply will refuse this plan:" in text and "max_delete_fraction" in text


def test_markdown_puts_the_summary_first_and_details_in_collapsible_sections() -> None:
    markdown = render_markdown(case("09"))
    first_lines = markdown.splitlines()[:4]
    assert any(line.startswith("**Plan: 1 to create") for line in first_lines)
    assert "<details><summary>Changes (2)</summary>" in markdown
    assert 'this plan deletes workspace "Old"' in markdown


def test_markdown_of_a_huge_plan_is_trimmed_with_a_note() -> None:
    workspaces = [{"name": f"Team {n:04}", "users": ["alice", "bob"]} for n in range(3000)]
    plan = plan_case({"desired": {"workspaces": workspaces}})
    markdown = render_markdown(plan)
    assert len(render_text(plan)) > MAX_COMMENT_CHARS  # the untrimmed plan would not fit
    assert len(markdown) <= MAX_COMMENT_CHARS
    assert "more lines trimmed to fit a comment" in markdown
    assert markdown.count("```") % 2 == 0  # no fence left open
    assert markdown.startswith("### site-reconciler plan")


def test_plan_file_round_trips_and_refuses_tampering() -> None:
    plan = case("03")
    text = plan.to_json()
    again = Plan.from_json(text, origin="plan.json")
    assert again.checksum == plan.checksum and again.actions == plan.actions
    data = json.loads(text)
    data["actions"][0]["params"]["user_id"] = 1
    with pytest.raises(ReconcilerError, match="changed after it was saved"):
        Plan.from_json(json.dumps(data), origin="plan.json")
    with pytest.raises(ReconcilerError, match="not a site-reconciler plan"):
        Plan.from_json('{"format": "other"}', origin="x.json")


def test_drift_lists_each_category_separately() -> None:
    report = drift_report(case("08"))
    assert report["in_sync"] is False
    assert [item["name"] for item in report["extra"]] == ["Old"]
    assert [item["name"] for item in report["unmanaged"]] == ["Handmade"]
    text = render_drift_text(report)
    assert "Extra (left the manifest, still on the site):" in text
    assert "Drift: 1 extra." in text
    assert "<details><summary>Unmanaged" in render_drift_markdown(report)
    assert drift_report(case("02"))["in_sync"] is True
