"""Adding a kind is its package and one line in ``kinds/registry.py`` (issue 43, item 1).

A made-up kind -- "empty group" notices: every declared group without members is reported,
and a write of its own is planned for it -- is added the way a real one would be: one
``Kind`` object, one line in ``KINDS``. Nothing of the engine is changed, and the plan the
engine makes carries the kind's comparison, its write (ordered by phase, waiting for the
users it names), its changes, its warnings and what its retirement keeps, in the registry's
order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from reconciler.core.actions import NO_RESULT, Phase, Result, Settlement, WriteAction
from reconciler.core.changes import Change
from reconciler.core.kind import Adoption, Fingerprint, Kind
from reconciler.core.planning import Kept, PlanInputs, Planned
from reconciler.core.records import Records, Tables
from reconciler.core.users import Resolution
from reconciler.kinds import registry
from reconciler.model import DesiredSite, LiveSite
from tests.support.plan_cases import plan_case


@dataclass(frozen=True, slots=True)
class EmptyGroup:
    name: str
    status: str
    desired: Any
    unobservable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Remind(WriteAction):
    """The test kind's one write (it would send a reminder; here it sends nothing)."""

    method = "remind_owner"
    default_phase = Phase.CREATE_GROUPS
    group: str

    @property
    def key(self) -> str:
        return self.group

    def summary(self) -> str:
        return f'remind the owner of "{self.group}"'

    async def call(self, client: Any) -> Result:
        return NO_RESULT

    async def settle(self, client: Any) -> Settlement:
        return Settlement(remaining=self)

    def fold(self, tables: Tables, result: Result) -> None:
        pass


def _compare(
    desired: DesiredSite, live: LiveSite, records: Records, r: Resolution, conflicts: list[str]
) -> list[EmptyGroup]:
    return [EmptyGroup(g.name, "present", g) for g in desired.groups if not g.members]


def _plan(diffs: Sequence[EmptyGroup], inputs: PlanInputs) -> Planned:
    changes = tuple(Change("group", d.name, "differs", note="no members") for d in diffs)
    actions = tuple(Remind(group=d.name) for d in diffs)
    warnings = tuple(f'group "{d.name}" has no members' for d in diffs)
    return Planned(actions=actions, changes=changes, warnings=warnings)


def _retire(diffs: Sequence[EmptyGroup], inputs: PlanInputs) -> Planned:
    return Planned(kept=tuple(Kept("group", d.name, "empty, and kept") for d in diffs))


def _nothing(*args: Iterable[Any]) -> Any:
    return {}


EMPTY_GROUPS = Kind(
    name="empty-group",  # type: ignore[arg-type]  # a kind outside the three real ones
    name_key=str.casefold,
    actions=(Remind,),
    compare=_compare,
    plan=_plan,
    retire=_retire,
    adopt=lambda diffs, records: Adoption(),
    fingerprint=Fingerprint(lambda actions: set(), _nothing, lambda key, was, now: ""),
)


def test_a_new_kind_is_its_package_and_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "KINDS", (*registry.KINDS, EMPTY_GROUPS))  # the one line
    plan = plan_case(
        {
            "desired": {
                "groups": [{"name": "crew", "members": []}, {"name": "ops", "members": ["bob"]}],
            }
        }
    )
    assert [a.id for a in plan.actions if isinstance(a, Remind)] == ["remind_owner:crew"]
    phases = [a.phase for a in plan.actions]
    assert phases == sorted(phases, key=list(Phase).index)  # ordered with every other write
    assert 'group "crew" has no members' in plan.warnings
    assert ("group", "crew", "differs") in [(c.kind, c.name, c.action) for c in plan.changes]
    assert [k.reason for k in plan.kept] == ["empty, and kept"]  # its retirement ran
    assert "remind_owner" in [a["method"] for a in plan.data["actions"]]


def test_without_its_line_the_engine_knows_nothing_of_it() -> None:
    plan = plan_case({"desired": {"groups": [{"name": "crew", "members": []}]}})
    assert not [a for a in plan.actions if isinstance(a, Remind)]
