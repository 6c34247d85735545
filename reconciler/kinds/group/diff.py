"""Compare the declared user groups with the site's and the records: part of
``engine.planning.diff.compare``.

The site cannot report a group's members, and lists groups only on some sites
(``live.groups_listed``): members are compared with what the tool recorded applying, a group
is matched by its recorded ID where the site lists it, and a creation whose answer was lost
is ``uncertain`` (never created twice). Statuses otherwise as for workspaces.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from reconciler.core.actions import UserKey
from reconciler.core.records import RecordedGroup, Records
from reconciler.core.users import Resolution
from reconciler.identity import NameSet, NameTable, group_key, same_name
from reconciler.model import DesiredGroup, DesiredSite, LiveGroup, LiveSite


@dataclass(frozen=True, slots=True)
class GroupDiff:
    """One user group, declared or managed (statuses as for workspaces, plus ``uncertain``:
    a creation whose outcome could not be checked on a site that does not list groups)."""

    name: str
    status: Literal["missing", "present", "extra", "uncertain", "renamed", "vanished"]
    desired: DesiredGroup | None
    id: int | None
    record: RecordedGroup | None
    desired_members: frozenset[UserKey] = frozenset()
    members_to_add: frozenset[UserKey] = frozenset()
    members_to_remove: frozenset[int] = frozenset()
    members_known: bool = True  # False: the tool has no record of the group's members
    live_name: str | None = None  # what the site calls it, where it lists the group
    gone_id: int | None = None
    unobservable: tuple[str, ...] = ()  # members: recorded, said by ``members_known``

    @property
    def managed(self) -> bool:
        return self.record is not None and self.record.managed


def compare_groups(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    resolution: Resolution,
    conflicts: list[str],
) -> list[GroupDiff]:
    live_by_name: dict[str, list[LiveGroup]] = defaultdict(list)
    for group in live.groups:
        live_by_name[group_key(group.name)].append(group)
    by_id = {group.id: group for group in live.groups}
    recorded = NameTable("group", records.groups)
    diffs: list[GroupDiff] = []
    for want in desired.groups:
        members = resolution.ids_of(want.members)
        record = recorded.get(want.name)
        if record is not None and record.uncertain and record.id is None:
            diffs.append(GroupDiff(want.name, "uncertain", want, None, record, members))
            continue
        gone_id = None
        recorded_id = record.id if record is not None else None
        if record is not None and recorded_id is not None:
            listed = by_id.get(recorded_id)
            renamed = listed is not None and not same_name("group", listed.name, want.name)
            if listed is not None and renamed and record.managed:
                if listed.name in NameSet("group", want.previously):  # the site keeps the old name
                    diffs.append(_present_group(want, recorded_id, record, members, listed))
                else:
                    diffs.append(_renamed_group(want.name, want, record, listed, members))
                continue
            if live.groups_listed and listed is None:
                gone_id, record = recorded_id, None  # deleted by hand: create it again
            else:
                diffs.append(_present_group(want, recorded_id, record, members, listed))
                continue
        found = live_by_name.get(group_key(want.name), [])
        if len(found) > 1:
            ids = ", ".join(str(g.id) for g in found)
            conflicts.append(
                f'The site has {len(found)} user groups named "{want.name}" (IDs {ids}); the '
                "tool cannot tell which one the manifest means. Remove the extra ones by hand."
            )
        elif found:
            diffs.append(_present_group(want, found[0].id, None, members, found[0]))
        else:
            diffs.append(
                GroupDiff(want.name, "missing", want, None, None, members, members, gone_id=gone_id)
            )
    declared = NameSet("group", (g.name for g in desired.groups))
    for name, record in sorted(records.managed_groups().items()):
        if name in declared or record.id is None:
            continue
        listed = by_id.get(record.id)
        if listed is not None and not same_name("group", listed.name, name):
            diffs.append(_renamed_group(name, None, record, listed, frozenset()))
        elif live.groups_listed and listed is None:
            diffs.append(GroupDiff(name, "vanished", None, None, record, gone_id=record.id))
        else:
            live_name = listed.name if listed is not None else None
            diffs.append(GroupDiff(name, "extra", None, record.id, record, live_name=live_name))
    return diffs


def _renamed_group(
    name: str,
    want: DesiredGroup | None,
    record: RecordedGroup,
    listed: LiveGroup,
    members: frozenset[UserKey],
) -> GroupDiff:
    return GroupDiff(name, "renamed", want, listed.id, record, members, live_name=listed.name)


def _present_group(
    want: DesiredGroup,
    group_id: int,
    record: RecordedGroup | None,
    members: frozenset[UserKey],
    listed: LiveGroup | None,
) -> GroupDiff:
    """Members cannot be read back: compare with what the tool recorded applying.

    A member the tool added can always be removed; a declared member it never added is
    added (adding an existing member changes nothing). Whether that is drift is known only
    when the records hold every member (``members_known``: the tool created the group).
    """
    recorded = record.members if record is not None else frozenset()
    unsure = record.unsure if record is not None else frozenset()  # an interrupted change
    return GroupDiff(
        want.name,
        "present",
        want,
        group_id,
        record,
        members,
        (members - recorded) | (members & unsure),
        frozenset(u for u in (recorded | unsure) - members if isinstance(u, int)),
        members_known=record is not None and record.members_known,
        live_name=listed.name if listed is not None else None,
    )
