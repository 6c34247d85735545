"""The user kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Fingerprint, Kind
from reconciler.kinds import user
from reconciler.kinds.user import facts
from reconciler.kinds.user.actions import ACTIONS
from reconciler.kinds.user.adopt import adopt
from reconciler.kinds.user.diff import compare_users
from reconciler.kinds.user.plan import plan, retire

KIND: Kind = Kind(
    name="user",
    name_key=user.name_key,
    actions=ACTIONS,
    compare=compare_users,
    plan=plan,
    retire=retire,
    adopt=adopt,
    fingerprint=Fingerprint(facts.keys, facts.facts, facts.changed),
)
