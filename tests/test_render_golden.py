"""Every renderer of plans and drift, compared with a reviewed file: one vocabulary in all.

The files under ``tests/golden/`` are what a person or a program reads for the site in
``tests/golden/site.yaml``. A change to any wording shows up here as a diff to review. To
accept one, regenerate the files explicitly and read the diff before committing::

    RECONCILER_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_render_golden.py

A missing file is a failure, never written silently.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from reconciler.engine.drift import drift_report
from reconciler.engine.planning.plan import Plan, canonical
from reconciler.engine.planning.plan_file import key_id, read_plan_file, unseal
from reconciler.errors import RefusedForSafety
from reconciler.render.drift import render_drift_json, render_drift_markdown, render_drift_text
from reconciler.render.json import render_json
from reconciler.render.markdown import markdown_parts, render_markdown
from reconciler.render.text import render_text
from tests.support.golden import GOLDEN, assert_golden
from tests.support.plan_cases import plan_case

RENDERINGS: dict[str, Callable[[Plan], str]] = {
    "plan.txt": render_text,
    "plan.md": render_markdown,
    # a comment limit this small splits the golden plan: numbered parts, summary first
    "plan-parts.md": lambda plan: "".join(markdown_parts(plan, limit=1_800)),
    "plan.json": render_json,
    "drift.txt": lambda plan: render_drift_text(drift_report(plan)),
    "drift.md": lambda plan: render_drift_markdown(drift_report(plan)),
    "drift.json": lambda plan: render_drift_json(drift_report(plan)),
}


def golden_plan() -> Plan:
    return plan_case(yaml.safe_load((GOLDEN / "site.yaml").read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", RENDERINGS)
def test_each_rendering_matches_its_reviewed_file(name: str) -> None:
    assert_golden(name, RENDERINGS[name](golden_plan()))


@pytest.mark.parametrize("name", RENDERINGS)
def test_a_saved_plan_reads_back_and_shows_what_it_showed(name: str) -> None:
    """A plan file saved before an upgrade is read by ``apply``/``review`` and shown again:
    the reviewed ``plan.json`` (every kind of change, as the file writes it: a create's
    ``settings`` and ``members``, ``members_added``/``members_removed``, ``fields``) reads back
    to a plan that renders every reviewed file as it is, its checksum included."""
    data = json.loads((GOLDEN / "plan.json").read_text(encoding="utf-8"))
    checksum = data.pop("checksum")
    saved = Plan.from_data(data)
    assert saved.checksum == checksum
    assert RENDERINGS[name](saved) == (GOLDEN / name).read_text(encoding="utf-8")


def test_the_golden_site_shows_every_kind_of_change() -> None:
    plan = golden_plan()
    actions = {change.action for change in plan.changes}
    assert {"create", "update", "delete", "needs-replacement"} <= actions
    assert plan.kept and plan.unmanaged and plan.unobservable
    assert [change.action for change in plan.record_changes] == ["forget"]


def test_values_are_written_alike_by_every_renderer() -> None:
    """A boolean reads ``true``/``false`` and a missing override ``(no override)`` everywhere:
    never Python's ``True`` or ``None``, in text, Markdown or the JSON reports' sentences."""
    plan = golden_plan()
    for name, render in RENDERINGS.items():
        text = render(plan)
        assert not re.search(r"\b(True|False|None)\b", text), name
    for name in ("plan.txt", "plan.md", "drift.txt", "drift.md", "drift.json"):
        assert "root_access: true -> false" in RENDERINGS[name](plan), name
    assert "+ root_access:    false" in render_text(plan)


def test_text_counts_unmanaged_objects_in_one_line_unless_asked_to_list_them() -> None:
    plan = golden_plan()
    counted = render_text(plan)
    assert (
        "  3 objects not managed by the manifest (1 group, 2 workspaces): left alone; "
        "--show-unmanaged lists them"
    ) in counted
    assert "Handmade" not in counted
    listed = render_text(plan, show_unmanaged=True)
    for line in (
        '  workspace "Handmade" (id 14): not managed; left alone',
        '  workspace "Scans" (id 15): not managed; left alone',
        '  group "old-contractors" (id 7): not managed; left alone',
    ):
        assert line in listed
    drift = drift_report(plan)
    assert "Handmade" not in render_drift_text(drift)
    assert "Handmade" in render_drift_text(drift, show_unmanaged=True)
    # Programs and collapsed sections always get the whole list.
    assert "Handmade" in render_json(plan) and "Handmade" in render_markdown(plan)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda body: body["actions"][0].update(method="workspace_rename"), "workspace_rename"),
        (lambda body: body["changes"][0].update(kind="printer"), "printer"),
        (lambda body: body.update(site=7), "site"),
        (lambda body: body["manifest"].update(desired=[1, 2]), "manifest snapshot"),
    ],
    ids=[
        "an action of another version",
        "a change of no kind",
        "a site that is no text",
        "a snapshot that is no object",
    ],
)
def test_a_sealed_plan_that_does_not_describe_a_plan_is_refused_saying_where(
    damage: Callable[[dict[str, Any]], None], said: str
) -> None:
    """A plan sealed with the right key (another version's, or made by a tool that is not
    this one) that does not read as a plan: refused as damaged, one sentence naming the part,
    never a traceback."""
    key = b"k" * 32
    body = json.loads((GOLDEN / "plan.json").read_text(encoding="utf-8"))
    damage(body)
    mac = hmac.new(key, canonical(body), hashlib.sha256).hexdigest()
    body["seal"] = {"key_id": key_id(key), "mac": mac}
    with pytest.raises(RefusedForSafety) as refused:
        unseal(read_plan_file(json.dumps(body), "plan.json"), key, "records")
    assert "plan.json is damaged" in refused.value.message
    assert said in refused.value.message
