"""The live facts a plan's actions depend on, object by object, and how they changed.

A plan saves a fingerprint of every workspace, group and user its actions touch. Before a
saved plan is applied, the same fingerprints are taken again from a fresh read: any object
whose fingerprint changed makes the plan stale, and the refusal names what changed. A change
to an object the plan does not touch does not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reconciler.engine.state import SiteState
from reconciler.model import LiveSite


def _sorted_or_none(values: Iterable[Any] | None) -> list[Any] | None:
    return None if values is None else sorted(values)


def fingerprints(
    live: LiveSite,
    state: SiteState,
    workspaces: Iterable[str],
    groups: Iterable[str],
    users: Iterable[int],
) -> dict[str, Any]:
    """The facts of the named objects, as JSON-able data (``None`` = the object is absent)."""
    live_ws: dict[str, list[dict[str, Any]]] = {}
    for ws in live.workspaces:
        details = ws.details_observed  # members read some other way are partial: not compared
        live_ws.setdefault(ws.name, []).append(
            {
                "id": ws.id,
                "users": _sorted_or_none(ws.users) if details else None,
                "permissions": _sorted_or_none(ws.permissions) if details else None,
                "notifications": _sorted_or_none(ws.notifications) if details else None,
            }
        )
    live_groups: dict[str, list[int]] = {}
    for group in live.groups:
        live_groups.setdefault(group.name, []).append(group.id)
    user_names = {user.id: user.username for user in live.users}
    return {
        "workspaces": {
            name: sorted(live_ws[name], key=lambda item: item["id"]) if name in live_ws else None
            for name in sorted(set(workspaces))
        },
        "groups": {name: _group_fact(name, live_groups, state) for name in sorted(set(groups))},
        "users": {str(uid): user_names.get(uid) for uid in sorted(set(users))},
    }


def _group_fact(name: str, live_groups: dict[str, list[int]], state: SiteState) -> Any:
    record = state.groups.get(name)
    return {
        "ids_on_site": sorted(live_groups.get(name, [])),
        "recorded_id": record.id if record else None,
        "recorded_members": sorted(record.members) if record else None,
    }


def detailed_names(facts: dict[str, Any]) -> list[str]:
    """The workspaces whose details a fingerprint holds: the ones to read again to compare."""
    return [
        name
        for name, items in facts["workspaces"].items()
        if items and any(item["users"] is not None for item in items)
    ]


def describe_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Plain sentences, one per object whose facts differ between two fingerprints."""
    sentences: list[str] = []
    for section, label in (("workspaces", "workspace"), ("groups", "group"), ("users", "user")):
        old, new = before.get(section, {}), after.get(section, {})
        for name in sorted(set(old) | set(new)):
            was, now = old.get(name), new.get(name)
            if was == now:
                continue
            if was is None:
                sentences.append(f'{label} "{name}" now exists on the site')
            elif now is None:
                sentences.append(f'{label} "{name}" no longer exists on the site')
            else:
                from deepdiff import DeepDiff  # only a stale plan needs it: keep start-up light

                diff = DeepDiff(was, now, ignore_order=True, verbose_level=2)
                sentences.append(f'{label} "{name}" changed: {_summarise(diff)}')
    return sentences


def _summarise(diff: Any) -> str:
    parts = []
    for kind, changes in diff.to_dict().items():
        items = changes.items() if isinstance(changes, dict) else ((c, None) for c in changes)
        for where, detail in items:
            field = str(where).replace("root", "", 1) or "value"
            if isinstance(detail, dict) and "old_value" in detail:
                parts.append(f"{field} {detail['old_value']!r} -> {detail['new_value']!r}")
            else:
                parts.append(f"{field} {kind.replace('_', ' ')}")
    return "; ".join(parts) or "its facts differ"
