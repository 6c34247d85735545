"""Convergence, property-based: for generated starting sites and sequences of manifests,
apply makes the site match, a second plan has nothing to do, and apply never touches what it
may not.

Each example seeds a sandbox with hand-made workspaces and groups (some with protected
names, some clashing with declared names), then applies two or three generated manifests in
turn through the real engine, in-process. After each apply:

* plan again: no actions (only *needs replacement* notices for workspaces not named with
  ``--replace``);
* no object the manifest neither declares nor manages changed in any field (by ID);
* no protected name was deleted; with ``prune`` off nothing was deleted (only the workspaces
  named with ``--replace`` were re-created, under the same name);
* no name was multiplied, and every declared object holds exactly the wanted members.

The default run is sized for CI and derandomized (the same examples every run); the soak
variant explores forty times as many at random: ``pytest -m soak tests/test_convergence.py``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.core.planning import PlanOptions
from reconciler.engine.planning.plan import Plan
from reconciler.errors import RefusedForSafety
from reconciler.identity import NameSet, name_matches
from reconciler.sandbox.settings import SandboxSettings
from tests.support.engine_site import EngineSite, engine_site
from tests.support.figures import tally
from tests.support.invariants import (
    KINDS,
    Dump,
    Kind,
    changed_objects,
    duplicates_made,
    objects,
    undeclared_objects,
    with_name,
    workspace_settings,
)
from tests.support.site_strategies import (
    Expectation,
    load_desired,
    manifests,
    starting_seeds,
)

PROFILES: dict[str, SandboxSettings] = {
    "default": SandboxSettings(),
    "errors_as_200": SandboxSettings(errors_as_200=True),
    "legacy_workspace_list": SandboxSettings(legacy_workspace_list=True),
    "omit_groups_in_location_access": SandboxSettings(omit_groups_in_location_access=True),
}
"""Profiles under which the site shows everything the engine needs to observe (groups aside)."""

CI_EXAMPLES = 50
SOAK_EXAMPLES = 2000
TALLY: Counter[str] = Counter()  # this module's figures, reported through tests.support.figures


@dataclass(frozen=True)
class Step:
    document: dict[str, Any]
    replace_needed: bool  # name every workspace that needs replacement with --replace
    force: bool


@dataclass(frozen=True)
class Scenario:
    seed: dict[str, Any]
    steps: list[Step]
    profile: str


scenarios = st.builds(
    Scenario,
    seed=starting_seeds(),
    steps=st.lists(
        st.builds(Step, document=manifests(), replace_needed=st.booleans(), force=st.booleans()),
        min_size=2,
        max_size=3,
    ),
    profile=st.sampled_from(sorted(PROFILES)),
)


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    """A fresh directory per example (hypothesis cannot use function-scoped fixtures)."""
    base = tmp_path_factory.mktemp("convergence")
    counter = itertools.count()
    yield lambda: Path(base / f"example-{next(counter)}")
    tally("convergence (hypothesis)", TALLY)
    TALLY.clear()


# --- one step ------------------------------------------------------------------------------


def _protected(name: str, expectation: Expectation) -> bool:
    return any(name_matches("workspace", name, p) for p in expectation.policy.protect)


def _managed_ids(site: EngineSite) -> dict[Kind, set[int]]:
    records = site.records()
    return {
        "workspaces": {r.id for r in records.workspaces.values() if r.managed},
        "groups": {r.id for r in records.groups.values() if r.managed and r.id is not None},
    }


def _deletion_problems(
    before: Dump,
    after: Dump,
    expectation: Expectation,
    managed: dict[Kind, set[int]],
    replace: frozenset[str],
) -> list[str]:
    """Every object gone must have been prunable, or a workspace named with --replace."""
    problems = []
    prune = expectation.policy.prune
    for kind in KINDS:
        declared = NameSet(
            kind[:-1], expectation.workspaces if kind == "workspaces" else expectation.groups
        )
        was, now = objects(before, kind), objects(after, kind)
        for object_id in set(was) - set(now):
            name = was[object_id]["name"]
            pruned = prune and object_id in managed[kind] and name not in declared
            replaced = kind == "workspaces" and name in NameSet("workspace", replace)
            replaced = replaced and name in declared
            if _protected(name, expectation) or not (pruned or replaced):
                problems.append(f"{kind[:-1]} {name!r} (ID {object_id}) was deleted")
            if not with_name(after, kind, name) and not pruned:
                problems.append(f"the name {name!r} is gone from the site")
    return problems


def _workspace_problems(
    after: Dump, expectation: Expectation, hand_made: set[int], plan: Plan
) -> list[str]:
    """Each declared workspace exists once with the wanted members; the tool's own ones also
    with the wanted settings, unless the plan reports that they need replacement."""
    problems = []
    warnings = " ".join(plan.warnings)
    needs_replacement = {c.name for c in plan.changes if c.action == "needs-replacement"}
    for name, wanted in expectation.workspaces.items():
        if f'"{name}"' in warnings:
            continue  # a name or path clash the tool reported and did not act on
        found = with_name(after, "workspaces", name)
        if len(found) != 1:
            problems.append(f'workspace "{name}": {len(found)} on the site, 1 wanted')
            continue
        live = workspace_settings(found[0])
        if live.users != wanted.users:
            problems.append(f'workspace "{name}": members {sorted(live.users)}')
        reported = name in needs_replacement
        if found[0]["id"] not in hand_made and live != wanted and not reported:
            problems.append(f'workspace "{name}" is {live}, not {wanted}, unreported')
        if live.permissions != wanted.permissions and not reported:
            problems.append(f'workspace "{name}": its permission override differs unreported')
    return problems


def _group_problems(
    after: Dump,
    expectation: Expectation,
    initial: Dump,
    records: dict[str, int | None],
    warnings: str | None,
) -> list[str]:
    """Each declared group is the recorded one, or the only one of its name; ``warnings``
    (None when the site does not list groups) name the clashes the tool reported."""
    problems = []
    hand_made = objects(initial, "groups")
    for name, wanted in expectation.groups.items():
        found = with_name(after, "groups", name)
        recorded = records.get(name)
        if recorded is not None:
            group = objects(after, "groups").get(recorded)
        elif len(found) == 1:
            group = found[0]
        else:
            if warnings is None or f'"{name}"' not in warnings:
                problems.append(f'group "{name}": {len(found)} on the site and no record')
            continue
        if group is None:
            problems.append(f'group "{name}": the recorded group is gone')
            continue
        members = set(group["members"])
        extra = members - wanted - set(hand_made.get(group["id"], {}).get("members", ()))
        if not wanted <= members or extra:
            problems.append(f'group "{name}": members {sorted(members)}, not {sorted(wanted)}')
    return problems


def _tool_made_duplicates(after: Dump, hand_made: dict[Kind, set[int]]) -> list[str]:
    problems = []
    for kind in KINDS:
        made = Counter(
            item["name"] for i, item in objects(after, kind).items() if i not in hand_made[kind]
        )
        problems += [f'{kind[:-1]} "{n}" was created {c} times' for n, c in made.items() if c > 1]
    return problems


async def _apply_step(site: EngineSite, step: Step, path: Path, initial: Dump) -> None:
    """Apply one manifest as an operator would, then plan again and check the site."""
    desired = load_desired(step.document, path)
    managed = _managed_ids(site)
    before = site.dump()
    replace: frozenset[str] = frozenset()
    if step.replace_needed:
        first = await site.plan(desired)
        replace = frozenset(c.name for c in first.changes if c.action == "needs-replacement")
        TALLY["replacements requested"] += len(replace)
    options = PlanOptions(replace, step.force)
    try:
        outcome = await site.apply(desired, options)
    except RefusedForSafety:
        TALLY["guard refusals"] += 1
        assert site.dump() == before, "a refused apply changed the site"
        options = PlanOptions(replace, force=True)
        outcome = await site.apply(desired, options)
    assert outcome.complete, [o.detail for o in outcome.report.outcomes] if outcome.report else ""
    TALLY["applies"] += 1
    TALLY["actions"] += len(outcome.plan.actions)
    TALLY["deletions"] += sum(a.method.endswith("_delete") for a in outcome.plan.actions)

    again = await site.plan(desired, options)
    assert again.actions == (), [a.summary() for a in again.actions]
    assert {c.action for c in again.changes} <= {"needs-replacement"}
    records = {name: group.id for name, group in site.records().groups.items()}
    check = StepCheck(initial, before, site.dump(), Expectation.of(desired, initial["users"]))
    groups_listed = not site.app.sandbox.settings.omit_groups_in_location_access
    assert check.problems(managed, options.replace, again, records, groups_listed) == []


@dataclass(frozen=True)
class StepCheck:
    """The site at the start, before and after one step, and what the step's manifest asks."""

    initial: Dump
    before: Dump
    after: Dump
    expectation: Expectation

    def problems(
        self,
        managed: dict[Kind, set[int]],
        replace: frozenset[str],
        plan: Plan,
        records: dict[str, int | None],
        groups_listed: bool,
    ) -> list[str]:
        hand_made = {kind: set(objects(self.initial, kind)) for kind in KINDS}
        untouchable = undeclared_objects(self.before, self.expectation, managed)
        problems = _tool_made_duplicates(self.after, hand_made)
        duplicates = duplicates_made(self.before, self.after)
        if not groups_listed:  # the tool cannot see hand-made groups, so never touches them
            untouchable["groups"] |= hand_made["groups"] & set(objects(self.before, "groups"))
            duplicates = [p for p in duplicates if p.startswith("workspace")]
        problems += duplicates
        for kind in KINDS:
            problems += changed_objects(self.before, self.after, kind, untouchable[kind])
        problems += _deletion_problems(self.before, self.after, self.expectation, managed, replace)
        problems += _workspace_problems(self.after, self.expectation, hand_made["workspaces"], plan)
        warnings = " ".join(plan.warnings) if groups_listed else None
        return problems + _group_problems(
            self.after, self.expectation, self.initial, records, warnings
        )


async def _run(scenario: Scenario, directory: Path) -> None:
    profile = PROFILES[scenario.profile]
    async with engine_site(scenario.seed, directory / "state", profile) as site:
        initial = site.dump()
        for step in scenario.steps:
            await _apply_step(site, step, directory / "manifest.yaml", initial)
    TALLY["examples"] += 1
    TALLY[f"profile {scenario.profile}"] += 1


# --- the properties ------------------------------------------------------------------------


@pytest.mark.slow
@settings(
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios)
def test_apply_converges_and_touches_only_what_it_may(
    scenario: Scenario, workdirs: Callable[[], Path]
) -> None:
    directory = workdirs()
    directory.mkdir()
    asyncio.run(_run(scenario, directory))


@pytest.mark.soak
@settings(
    max_examples=SOAK_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario=scenarios)
def test_soak_apply_converges_and_touches_only_what_it_may(
    scenario: Scenario, workdirs: Callable[[], Path]
) -> None:
    directory = workdirs()
    directory.mkdir()
    asyncio.run(_run(scenario, directory))
