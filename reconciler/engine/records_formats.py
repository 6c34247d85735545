"""Records of formats 1 and 2, read in format 3's shape: the stored records of an older
version of the tool stay readable (``engine/records_document.py`` reads format 3 by the
codec).

Format 3 writes each workspace setting as its own ``{"value": ...}`` when known; format 2
kept the known ones under ``settings``; format 1 had one flag for all three, and its groups
knew their members only if the tool created them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.kinds import workspace


def upgraded(document: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A format 1 or 2 document in format 3's shape: each workspace setting is its own
    ``{"value": ...}`` when known (format 2 kept the known ones under ``settings``; format 1
    had one flag for all three), and format 1's groups know their members only if created."""
    upgraded = dict(document)
    workspaces = document.get("workspaces", {})
    if isinstance(workspaces, Mapping):
        upgraded["workspaces"] = {
            name: _workspace_upgraded(item, version) if isinstance(item, Mapping) else item
            for name, item in workspaces.items()
        }
    groups = document.get("groups", {})
    if version == 1 and isinstance(groups, Mapping):
        upgraded["groups"] = {
            name: {"members_known": item.get("origin") == "created", **item}
            if isinstance(item, Mapping)
            else item
            for name, item in groups.items()
        }
    return upgraded


_SETTINGS = workspace.SETTINGS_OF_FORMAT_2


def _workspace_upgraded(item: Mapping[str, Any], version: int) -> dict[str, Any]:
    if version == 1:
        settings = {k: item.get(k) for k in _SETTINGS} if item.get("settings_known") else {}
    else:
        settings = item.get("settings", {})
        if not isinstance(settings, Mapping):
            raise TypeError("the settings of a workspace are not a mapping")
    kept = {k: v for k, v in item.items() if k not in ("settings", "settings_known", *_SETTINGS)}
    return {**kept, **{k: {"value": settings[k]} for k in _SETTINGS if k in settings}}
