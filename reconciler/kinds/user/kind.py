"""The user kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Kind
from reconciler.kinds.user.actions import ACTIONS
from reconciler.kinds.user.adopt import adopt
from reconciler.kinds.user.diff import compare_users
from reconciler.kinds.user.plan import plan, retire

KIND: Kind = Kind("user", ACTIONS, compare_users, plan, retire, adopt)
