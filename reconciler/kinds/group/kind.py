"""The user group kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Fingerprint, Kind
from reconciler.kinds import group
from reconciler.kinds.group import facts, stored
from reconciler.kinds.group.actions import ACTIONS
from reconciler.kinds.group.adopt import adopt
from reconciler.kinds.group.diff import compare_groups
from reconciler.kinds.group.plan import plan, retire

KIND: Kind = Kind(
    name="group",
    name_key=group.name_key,
    actions=ACTIONS,
    compare=compare_groups,
    plan=plan,
    retire=retire,
    adopt=adopt,
    fingerprint=Fingerprint(facts.keys, facts.facts, facts.changed),
    upgrade=stored.upgrade,
)
