"""A workspace setting that could change in place is compared, not dropped (issue 43 item 3).

Every workspace setting today needs a replacement (no API method changes a workspace), so
the comparison once kept only those and dropped the rest. Made up here: ``root_access`` as a
setting the site could change in place (the kind's ``REQUIRES_REPLACEMENT`` without it). The
difference is then reported, field by field, as one the tool cannot make -- never replaced,
never lost -- while the settings that need a replacement still do.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.kinds import workspace
from tests.support.plan_cases import plan_case

CASE: dict[str, Any] = {
    "options": {"replace": ["Finance"]},
    "desired": {"workspaces": [{"name": "Finance", "users": ["alice"], "root_access": False}]},
    "live": {"workspaces": [{"id": 10, "name": "Finance", "users": [1001]}]},
    "state": {
        "workspaces": {
            "Finance": {"id": 10, "settings_known": True, "root_access": True, "members": [1001]}
        }
    },
}


def _changes(plan: Any) -> list[tuple[str, str, list[str]]]:
    return [(c.kind, c.action, [f.field for f in c.fields]) for c in plan.changes]


def test_a_setting_that_needs_a_replacement_is_replaced() -> None:
    plan = plan_case(CASE)
    assert _changes(plan) == [("workspace", "replace", ["root_access"])]


def test_a_setting_that_could_change_in_place_is_reported_and_not_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        workspace, "REQUIRES_REPLACEMENT", workspace.REQUIRES_REPLACEMENT - {"root_access"}
    )
    plan = plan_case(CASE)
    assert _changes(plan) == [("workspace", "differs", ["root_access"])]
    (change,) = plan.changes
    (field,) = change.fields
    assert (field.before, field.after, field.basis) == (True, False, "recorded")
    assert plan.actions == ()  # nothing the API could do, so nothing destroyed either
