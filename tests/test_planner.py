"""Table-driven tests of diff + planner: one case file in tests/cases/diff/ per behaviour.

Each case holds the desired site, the live site and the tool's records in compact form, and
the changes, actions, refusals and lists the plan must contain. Adding a case is adding a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.plan_cases import CASES, plan_case


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    expect = case["expect"]
    plan = plan_case(case)
    data = plan.data
    changes = [[c["kind"], c["name"], c["action"]] for c in data["changes"]]
    assert changes == expect.get("changes", []), "changes"
    assert [a["id"] for a in data["actions"]] == expect.get("actions", []), "actions"
    for action_id, params in expect.get("params", {}).items():
        actual = next(a for a in data["actions"] if a["id"] == action_id)["params"]
        assert {k: actual[k] for k in params} == params, action_id
    assert len(data["safety"]["problems"]) == expect.get("refusals", 0), data["safety"]
    assert [[k["kind"], k["name"]] for k in data["kept"]] == expect.get("kept", []), "kept"
    records = [[r["action"], r["kind"], r["name"]] for r in data["record_changes"]]
    assert records == expect.get("records", []), "record changes"
    assert [[u["kind"], u["name"]] for u in data["unmanaged"]] == expect.get("unmanaged", [])
    assert len(data["warnings"]) == expect.get("warnings", 0), data["warnings"]
    for words in expect.get("warning_mentions", []):
        assert any(words in line for line in data["warnings"]), data["warnings"]
    for words in expect.get("unobservable_mentions", []):
        assert any(words in line for line in data["unobservable"]), data["unobservable"]
    for action_id, depends in expect.get("depends", {}).items():
        actual = next(a for a in data["actions"] if a["id"] == action_id)["depends_on"]
        assert actual == depends, action_id
    for change in expect.get("change_details", []):
        found = next(c for c in data["changes"] if c["name"] == change["name"])
        assert {k: found[k] for k in change} == change


def test_case_files_exist() -> None:
    assert len(CASES) >= 10
