"""Adopting declared user groups that exist on the site: recorded as managed; their members
stay as recorded (the site cannot report them), never copied from the manifest."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.core.kind import Adoption
from reconciler.core.records import GroupAdopted, RecordedGroup, Records
from reconciler.kinds.group.diff import GroupDiff


def adopt(diffs: Iterable[GroupDiff], records: Records) -> Adoption:
    found = Adoption()
    for group in diffs:
        if group.status == "missing":
            found += Adoption(absent=(f'user group "{group.name}"',))
        if group.status != "present" or group.id is None or group.desired is None:
            continue
        current = records.groups.get(group.name)
        if current is not None and current.managed and current.id == group.id:
            continue
        adopted = RecordedGroup(
            id=group.id,
            managed=True,
            origin="adopted",
            members=current.members if current is not None else frozenset(),
            source=group.desired.source.file,
        )
        found += Adoption(
            adopted=(f'user group "{group.name}" (id {group.id})',),
            events=(GroupAdopted(group.name, adopted),),
        )
    return found
