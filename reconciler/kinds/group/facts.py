"""The facts of a user group a plan depends on (its fingerprint), and how one changed, in
words: the IDs of the groups of its name the site lists, and what the records hold."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reconciler.core.actions import WriteAction
from reconciler.core.records import Records
from reconciler.identity import NameTable, group_key
from reconciler.model import LiveSite


def keys(actions: Iterable[WriteAction]) -> set[str]:
    """The groups the actions touch, by name."""
    return {name for action in actions for kind, name in action.touches() if kind == "group"}


def facts(live: LiveSite, records: Records, names: Iterable[str]) -> dict[str, Any]:
    listed: dict[str, list[int]] = {}
    for group in live.groups:
        listed.setdefault(group_key(group.name), []).append(group.id)
    recorded = NameTable("group", records.groups)
    found = {}
    for name in sorted(set(names)):
        record = recorded.get(name)
        found[name] = {
            "ids_on_site": sorted(listed.get(group_key(name), [])),
            "recorded_id": record.id if record else None,
            "recorded_members": sorted(record.members) if record else None,
        }
    return found


def changed(name: str, was: Any, now: Any) -> str:
    label = f'user group "{name}"'
    if was["ids_on_site"] != now["ids_on_site"]:
        if not was["ids_on_site"]:
            return f"{label} was created on the site (by someone else) since the plan was made"
        if not now["ids_on_site"]:
            return f"{label} was deleted from the site since the plan was made"
        return f"{label} was deleted and created again on the site since the plan was made"
    if was["recorded_id"] != now["recorded_id"]:
        return f"{label} was created or adopted by another apply since the plan was made"
    return f"{label}'s members were changed by another apply since the plan was made"
