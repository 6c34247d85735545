"""The workspace kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Fingerprint, Kind
from reconciler.kinds import workspace
from reconciler.kinds.workspace import facts, stored
from reconciler.kinds.workspace.actions import ACTIONS
from reconciler.kinds.workspace.adopt import adopt
from reconciler.kinds.workspace.diff import compare_workspaces
from reconciler.kinds.workspace.plan import plan, retire
from reconciler.kinds.workspace.renames import looks_like_renames

KIND: Kind = Kind(
    name="workspace",
    name_key=workspace.name_key,
    actions=ACTIONS,
    compare=compare_workspaces,
    plan=plan,
    retire=retire,
    adopt=adopt,
    fingerprint=Fingerprint(facts.keys, facts.facts, facts.changed),
    lookalikes=looks_like_renames,
    upgrade=stored.upgrade,
)
