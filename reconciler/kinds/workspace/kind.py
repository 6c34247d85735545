"""The workspace kind, as the engine loops over it (``core/kind.py``, ``kinds/registry.py``)."""

from __future__ import annotations

from reconciler.core.kind import Kind
from reconciler.kinds.workspace.actions import ACTIONS
from reconciler.kinds.workspace.adopt import adopt
from reconciler.kinds.workspace.diff import compare_workspaces
from reconciler.kinds.workspace.plan import plan, retire
from reconciler.kinds.workspace.renames import looks_like_renames

KIND: Kind = Kind("workspace", ACTIONS, compare_workspaces, plan, retire, adopt, looks_like_renames)
