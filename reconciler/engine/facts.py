"""The live facts a plan's actions depend on, object by object, and how they changed.

A plan saves a fingerprint of every workspace, group and user its actions touch. When a
saved plan turns out stale, the same fingerprints are taken again from a fresh read and the
refusal says, in the domain's words, what changed ("user group "finance-team" was created on
the site since the plan was made"). A change to an object the plan does not touch is not
mentioned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reconciler.core.records import Records
from reconciler.identity import NameTable, group_key, workspace_key
from reconciler.kinds import workspace
from reconciler.model import LiveSite


def _sorted_or_none(values: Iterable[Any] | None) -> list[Any] | None:
    return None if values is None else sorted(values)


def fingerprints(
    live: LiveSite,
    records: Records,
    workspaces: Iterable[str],
    groups: Iterable[str],
    users: Iterable[int],
) -> dict[str, Any]:
    """The facts of the named objects, as JSON-able data (``None`` = the object is absent);
    names are compared as the site compares them (``reconciler.identity``)."""
    live_ws: dict[str, list[dict[str, Any]]] = {}
    for ws in live.workspaces:
        details = ws.details_observed  # members read some other way are partial: not compared
        live_ws.setdefault(workspace_key(ws.name), []).append(
            {
                "id": ws.id,
                "users": _sorted_or_none(ws.users) if details else None,
                **{  # the settings the site shows (the kind's overrides)
                    name: _sorted_or_none(getattr(ws, name)) if details else None
                    for name in workspace.OVERRIDES
                },
            }
        )
    live_groups: dict[str, list[int]] = {}
    for group in live.groups:
        live_groups.setdefault(group_key(group.name), []).append(group.id)
    user_names = {user.id: user.username for user in live.users}
    return {
        "workspaces": {
            name: sorted(found, key=lambda item: item["id"])
            if (found := live_ws.get(workspace_key(name)))
            else None
            for name in sorted(set(workspaces))
        },
        "groups": {name: _group_fact(name, live_groups, records) for name in sorted(set(groups))},
        "users": {str(uid): user_names.get(uid) for uid in sorted(set(users))},
    }


def _group_fact(name: str, live_groups: dict[str, list[int]], records: Records) -> Any:
    record = NameTable("group", records.groups).get(name)
    return {
        "ids_on_site": sorted(live_groups.get(group_key(name), [])),
        "recorded_id": record.id if record else None,
        "recorded_members": sorted(record.members) if record else None,
    }


def describe_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Plain sentences, one per object whose facts differ between two fingerprints."""
    differing = _differing(before, after)
    sentences: list[str] = []
    for name in differing["workspaces"]:
        sentences.append(
            _workspace_change(name, before["workspaces"][name], after["workspaces"][name])
        )
    for name in differing["groups"]:
        sentences.append(_group_change(name, before["groups"][name], after["groups"][name]))
    for uid in differing["users"]:
        was, now = before["users"][uid], after["users"][uid]
        if now is None:
            sentences.append(f'user {uid} ("{was}") no longer exists on the site')
        elif was is None:
            sentences.append(f'user {uid} now exists on the site, as "{now}"')
        else:
            sentences.append(f'user {uid} was renamed from "{was}" to "{now}"')
    return sentences


def _differing(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[str]]:
    """The objects, by section, whose facts differ (deepdiff finds where): only objects the
    plan fingerprinted, which both fingerprints name."""
    from deepdiff import DeepDiff  # only a stale plan needs it

    found: dict[str, set[str]] = {"workspaces": set(), "groups": set(), "users": set()}
    tree = DeepDiff(dict(before), dict(after), view="tree")
    for items in tree.values():
        for item in items:
            path = [str(part) for part in item.path(output_format="list")]
            if len(path) >= 2 and path[0] in found:
                section, name = path[0], path[1]
                if name in before.get(section, {}) and name in after.get(section, {}):
                    found[section].add(name)
    return {section: sorted(names) for section, names in found.items()}


def _workspace_change(name: str, was: Any, now: Any) -> str:
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


def _group_change(name: str, was: Any, now: Any) -> str:
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
