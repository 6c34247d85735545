"""Renderers of plans and drift: the text users read, the Markdown comment, the JSON file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from reconciler.engine.drift import drift_report
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_file import read_plan_file, seal, unseal
from reconciler.errors import RefusedForSafety
from reconciler.render.drift import render_drift_markdown, render_drift_text
from reconciler.render.markdown import MAX_PART_CHARS, markdown_parts, render_markdown
from reconciler.render.text import render_text
from tests.support.loopback import REPO
from tests.support.plan_cases import CASES, plan_case


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


@pytest.mark.slow
def test_markdown_of_a_huge_plan_is_split_into_comments_not_trimmed() -> None:
    workspaces = [{"name": f"Team {n:04}", "users": ["alice", "bob"]} for n in range(3000)]
    plan = plan_case({"desired": {"workspaces": workspaces}})
    parts = markdown_parts(plan)
    assert len(render_text(plan)) > MAX_PART_CHARS  # the whole plan would not fit one comment
    assert len(parts) > 1 and all(len(part) <= MAX_PART_CHARS for part in parts)
    assert "trimmed" not in render_markdown(plan)
    assert all(part.count("```") % 2 == 0 for part in parts)  # no fence left open
    assert parts[0].splitlines()[1].startswith("### site-reconciler plan")
    assert sum('workspace "Team 2999"' in part for part in parts) == 1


KEY = b"k" * 32


def test_plan_file_round_trips_and_refuses_tampering_with_exit_3() -> None:
    plan = case("03")
    text = seal(plan, KEY)
    again = unseal(read_plan_file(text, "plan.json"), KEY, "the records")
    assert again.checksum == plan.checksum and again.actions == plan.actions
    assert again.data == plan.data
    data = json.loads(text)
    data["actions"][0]["params"]["user_id"] = 1
    data["checksum"] = Plan.from_data(
        {k: v for k, v in data.items() if k not in ("checksum", "seal")}
    ).checksum  # an attacker recomputes the checksum: the seal still refuses the file
    with pytest.raises(RefusedForSafety, match="changed after it was saved"):
        unseal(read_plan_file(json.dumps(data), "plan.json"), KEY, "the records")
    with pytest.raises(RefusedForSafety, match="not a site-reconciler plan"):
        read_plan_file('{"format": "other"}', "x.json")


def test_a_plan_sealed_with_other_records_is_refused_naming_state() -> None:
    text = seal(case("03"), KEY)
    with pytest.raises(RefusedForSafety, match="made against other records") as refused:
        unseal(read_plan_file(text, "plan.json"), b"o" * 32, "/runner/.reconciler")
    assert "--state" in str(refused.value.hint)


def test_drift_lists_each_category_separately() -> None:
    report = drift_report(case("08"))
    assert report.in_sync is False
    assert [item.name for item in report.extra] == ["Old"]
    assert [item.name for item in report.unmanaged] == ["Handmade"]
    text = render_drift_text(report)
    assert "Extra (left the manifest, still on the site):" in text
    assert "Drift: 1 extra." in text
    assert "<details><summary>Unmanaged" in render_drift_markdown(report)
    assert drift_report(case("02")).in_sync is True


@pytest.mark.e2e
def test_only_html_and_markdown_load_the_template_engine() -> None:
    """Jinja2 costs every command that imports it about 50 ms: it is loaded when an HTML or
    Markdown report is first written, never by the renderers' modules nor for text."""
    code = (
        "import sys\n"
        "from reconciler.cli import main\n"
        "from reconciler.render import access, drift, plans, records_diff\n"
        "from tests.support.access_golden import golden_report\n"
        "access.render_access(golden_report(), 'text')\n"
        "print('jinja2' in sys.modules, end=' ')\n"
        "access.render_access(golden_report(), 'markdown')\n"
        "print('jinja2' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout == "False True\n"
