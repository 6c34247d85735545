"""What changed in the records between two saved versions, in the domain's words.

For auditors: "who was given access to Finance between version 12 and version 15, and when
did the tool learn that alice@acme.example means another account?" deepdiff finds the
differences between the two documents; each is then said about the object it belongs to
(a workspace, a group, a user, a reference) and the field that changed, with the whole
field before and after, never as a path of list indexes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reconciler.engine.records import document as records_document

Change = Literal["added", "removed", "changed"]

_OBJECTS = {"workspaces": "workspace", "groups": "group", "users": "user"}
_KEYED = {"references": "reference", "digests": "digest of"}


@dataclass(frozen=True, slots=True)
class VersionChange:
    """One object (or setting of the records) that changed, and one field of it."""

    kind: str  # workspace, group, user, reference, records
    name: str
    change: Change
    field: str | None = None
    before: Any = None
    after: Any = None


def versions_changes(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, *, site: str, where: str
) -> list[VersionChange]:
    """Every change between two stored versions, each read as records first: versions
    written by different releases (record formats) compare by what they record."""

    def as_records(document: Mapping[str, Any] | None) -> Mapping[str, Any]:
        if not document:
            return {}
        return records_document.to_data(
            records_document.from_data(document, site=site, where=where)
        )

    return records_changes(as_records(old), as_records(new))


def records_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[VersionChange]:
    """Every change from ``old`` to ``new`` (two records documents), object by object."""
    from deepdiff import DeepDiff  # imported here: only `state diff` needs it

    tree = DeepDiff(dict(old), dict(new), view="tree", ignore_order=True)
    touched: dict[tuple[str, ...], None] = {}
    for items in tree.values():
        for item in items:
            path = [str(part) for part in item.path(output_format="list")]
            for place in _places(path, old, new):
                touched.setdefault(place, None)
    return [_change(place, old, new) for place in sorted(touched)]


def _places(
    path: list[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[tuple[str, ...]]:
    """The places a difference is about. deepdiff reports a whole table as changed when much
    of it changed (an empty table filled by a first apply): then each entry that differs."""
    if len(path) == 1 and (path[0] in _OBJECTS or path[0] in _KEYED):
        was, now = _get(old, (path[0],)) or {}, _get(new, (path[0],)) or {}
        names = sorted(set(was) | set(now))
        return [(path[0], name) for name in names if was.get(name) != now.get(name)]
    return [_place(path)]


def _place(path: list[str]) -> tuple[str, ...]:
    """Where a difference belongs: (table, name, field), (table, name) or (key,)."""
    if path and path[0] in _OBJECTS:
        return tuple(path[:3])
    if path and path[0] in _KEYED:
        return tuple(path[:2])
    return (path[0],) if path else ("document",)


def _get(document: Mapping[str, Any], place: tuple[str, ...]) -> Any:
    value: Any = document
    for part in place:
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _change(
    place: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any]
) -> VersionChange:
    before, after = _get(old, place), _get(new, place)
    change: Change = "added" if before is None else "removed" if after is None else "changed"
    table = place[0]
    if table in _OBJECTS:
        field = place[2] if len(place) > 2 else None
        return VersionChange(_OBJECTS[table], place[1], change, field, before, after)
    if table in _KEYED and len(place) > 1:
        return VersionChange(_KEYED[table], place[1], change, None, before, after)
    return VersionChange("records", table, change, None, before, after)
