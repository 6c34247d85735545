"""Expiring access in the shipped templates (issue 45, item 3), run as the forges run them:
nobody has to remember. The nightly drift names expired access as drift and its webhook hears
of an expiry the notice window ahead; a team that opts in (``RECONCILER_EXPIRE_ON_SCHEDULE``)
has the schedule remove it through the sealed plan and the guarded apply, and nothing else.

The day the jobs judge on is set through the clock the docs name for tests
(``RECONCILER_TODAY``), given to the jobs as a team would edit a variable.
"""

from __future__ import annotations

import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_OK
from tests.support.ci_pipelines import FORGES, TeamFactory, ci_tool, make_team
from tests.support.loopback import EXAMPLE_SITE

__all__ = ["ci_tool", "make_team"]  # fixtures
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.parametrize("forge", FORGES)]

ENDS = "2030-06-30"
BOB = 1002
TIMED = "users: [alice, {user: bob@acme.example, expires: 2030-06-30}, erin, 1042]"


def test_the_schedule_removes_expired_access_where_the_team_opted_in(
    make_team: TeamFactory, forge: str
) -> None:
    example = EXAMPLE_SITE.read_text(encoding="utf-8")
    manifest = example.replace("users: [alice, bob@acme.example, erin, 1042]", TIMED)
    assert manifest != example
    team = make_team(forge, manifest=manifest)
    team.apply_from_main()
    assert BOB in team.site.workspaces()["Finance"]["members"]

    warned = team.nightly(RECONCILER_TODAY="2030-06-25")
    assert warned.exit_code == EXIT_OK, warned.log  # nothing drifted yet
    [*_, told] = team.forge_api.hooks
    assert f'bob@acme.example loses access to "Finance" on {ENDS} (in 5 days)' in told["text"]

    # without the opt-in: drift names it, the schedule applies nothing
    drifted = team.nightly(RECONCILER_TODAY="2030-07-01")
    assert drifted.exit_code == EXIT_CHANGES, drifted.log
    report = sorted(team.root.glob("run-*/artifacts/*/drift.md"))[-1].read_text()
    assert f"its entry in the manifest expired on {ENDS}" in report
    untouched = team.scheduled_apply(RECONCILER_TODAY="2030-07-01")
    assert untouched.plan.skipped and untouched.apply.skipped
    assert BOB in team.site.workspaces()["Finance"]["members"]

    team.variables["RECONCILER_EXPIRE_ON_SCHEDULE"] = "true"
    team.edit("name: Payments\n", "name: Payments 2\n")  # merged? no: not the schedule's to do
    removed = team.scheduled_apply(RECONCILER_TODAY="2030-07-01")
    assert removed.plan.exit_code == EXIT_OK, removed.plan.log
    assert removed.applied and removed.apply.exit_code == EXIT_OK, removed.apply.log
    workspaces = team.site.workspaces()
    assert BOB not in workspaces["Finance"]["members"]
    assert 1001 in workspaces["Finance"]["members"]  # alice's access is standing
    assert "Payments 2" not in workspaces  # only expired access: no unreviewed change
    plan = sorted(team.root.glob("run-*/artifacts/*/plan.md"))[-1].read_text()
    assert f"(expired {ENDS})" in plan and "--expired-only" in plan
