"""A workspace's record as older versions of the tool stored it, in format 3's shape: each
setting its own ``{"value": ...}`` when known (format 2 kept the known ones under
``settings``; format 1 had one flag, ``settings_known``, for all three)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.kinds import workspace

_SETTINGS = workspace.SETTINGS_OF_FORMAT_2


def upgrade(item: Mapping[str, Any], version: int) -> Mapping[str, Any]:
    if version >= 3:
        return item
    if version == 1:
        settings = {k: item.get(k) for k in _SETTINGS} if item.get("settings_known") else {}
    else:
        settings = item.get("settings", {})
        if not isinstance(settings, Mapping):
            raise TypeError("the settings of a workspace are not a mapping")
    kept = {k: v for k, v in item.items() if k not in ("settings", "settings_known", *_SETTINGS)}
    return {**kept, **{k: {"value": settings[k]} for k in _SETTINGS if k in settings}}
