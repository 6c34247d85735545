"""Records of formats 1 and 2, read in format 3's shape: the stored records of an older
version of the tool stay readable (``engine/records/document.py`` reads format 3 by the
codec). What changed is each kind's to say (``Kind.upgrade``): a workspace's settings (each
its own ``{"value": ...}`` when known in format 3; under ``settings`` in format 2; one flag for
all three in format 1), a group's members known (format 1: only if the tool created it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.kinds import registry


def upgraded(document: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A format 1 or 2 document in format 3's shape, each kind's records by its ``upgrade``."""
    upgraded = dict(document)
    for kind in registry.KINDS:
        table = document.get(kind.section)
        if isinstance(table, Mapping):
            upgraded[kind.section] = {
                name: kind.upgrade(item, version) if isinstance(item, Mapping) else item
                for name, item in table.items()
            }
    return upgraded
