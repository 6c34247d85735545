"""The table-driven diff and planner cases (``tests/cases/diff/*.yaml``) and the plan of a
case, shared by the planner's tests and the renderers' (which render those plans)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconciler.core.planning import PlanOptions
from reconciler.core.users import UserDirectory, resolve_references
from reconciler.engine.planning.diff import compare
from reconciler.engine.planning.plan import Plan, PlanContext
from reconciler.engine.planning.planner import build_plan
from tests.support.models import desired_site, live_site, site_state

CASES = sorted((Path(__file__).parents[1] / "cases" / "diff").glob("*.yaml"))


def plan_case(case: dict[str, Any]) -> Plan:
    """The plan of one case in compact form (desired, live, records, options), made as the
    engine makes it."""
    desired = desired_site(case.get("desired", {}))
    live = live_site(case.get("live", {}))
    state = site_state(case.get("state", {}))
    directory = UserDirectory.of(live.users)
    resolution = resolve_references(desired, directory)
    options = case.get("options", {})
    return build_plan(
        compare(desired, live, state, resolution),
        live,
        state,
        directory,
        desired.policy,
        PlanOptions(
            frozenset(options.get("replace", [])),
            options.get("force", False),
            options.get("assume_no_groups", False),
        ),
        PlanContext(
            "https://acme.example.net",
            "2026-11-21T00:00:00Z",
            "test",
            manifest_files=tuple(case.get("manifest_files", ["case.yaml"])),
        ),
    )
