"""The facts of a workspace a plan depends on (its fingerprint), and how one changed, in words:
each workspace of that name on the site, by ID, with its members and the overrides it shows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reconciler.core.actions import WriteAction
from reconciler.core.records import Records
from reconciler.identity import workspace_key
from reconciler.kinds import workspace
from reconciler.model import LiveSite


def keys(actions: Iterable[WriteAction]) -> set[str]:
    """The workspaces the actions touch, by name."""
    return {name for action in actions for kind, name in action.touches() if kind == "workspace"}


def facts(live: LiveSite, records: Records, names: Iterable[str]) -> dict[str, Any]:
    """Each named workspace's facts on the site (None: absent); names compared as the site
    compares them. Members read other than by ``workspace_info`` are partial: not compared."""
    found: dict[str, list[dict[str, Any]]] = {}
    for ws in live.workspaces:
        details = ws.details_observed
        found.setdefault(workspace_key(ws.name), []).append(
            {
                "id": ws.id,
                "users": _sorted_or_none(ws.users) if details else None,
                **{
                    name: _sorted_or_none(getattr(ws, name)) if details else None
                    for name in workspace.OVERRIDES
                },
            }
        )
    return {
        name: sorted(items, key=lambda item: item["id"])
        if (items := found.get(workspace_key(name)))
        else None
        for name in sorted(set(names))
    }


def changed(name: str, was: Any, now: Any) -> str:
    label = f'workspace "{name}"'
    if was is None:
        return f"{label} was created on the site since the plan was made"
    if now is None:
        return f"{label} was deleted from the site since the plan was made"
    if [w["id"] for w in was] != [n["id"] for n in now]:
        return f"{label} was deleted and created again on the site (its ID changed)"
    parts = []
    for old, new in zip(was, now, strict=True):
        if old["users"] != new["users"] and None not in (old["users"], new["users"]):
            joined = sorted(set(new["users"]) - set(old["users"]))
            left = sorted(set(old["users"]) - set(new["users"]))
            moves = [f"user {u} joined" for u in joined] + [f"user {u} left" for u in left]
            parts.append(", ".join(moves))
        for setting in workspace.OVERRIDES:
            if old[setting] != new[setting]:
                parts.append(f"its {setting} override changed")
    return f"{label} changed on the site since the plan was made: " + "; ".join(parts)


def _sorted_or_none(values: Iterable[Any] | None) -> list[Any] | None:
    return None if values is None else sorted(values)
