"""The user group kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Kind
from reconciler.kinds.group.actions import ACTIONS
from reconciler.kinds.group.adopt import adopt
from reconciler.kinds.group.diff import compare_groups
from reconciler.kinds.group.plan import plan, retire

KIND: Kind = Kind("group", ACTIONS, compare_groups, plan, retire, adopt)
