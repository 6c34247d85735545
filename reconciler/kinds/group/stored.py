"""A group's record as older versions of the tool stored it, in format 3's shape: format 1
knew a group's members only if the tool created it (``members_known``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def upgrade(item: Mapping[str, Any], version: int) -> Mapping[str, Any]:
    if version == 1:
        return {"members_known": item.get("origin") == "created", **item}
    return item
