"""Adopt: record the objects a manifest names that already exist on the site, as managed.

Adopting changes nothing on the site. It tells the tool that those objects are now its to
manage, so that a later prune may delete them once they leave the manifest. Only what the
site reported is recorded as a fact: a workspace setting the site does not report, an
override the site cannot show as on, and a group's members stay *unknown* (reported as
unobservable), never copied from the manifest -- a guess recorded as a fact would later be
"corrected" by a replacement that destroys every file.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.core.records import (
    Event,
    GroupAdopted,
    RecordedGroup,
    RecordedUser,
    RecordedWorkspace,
    Records,
    UserAdopted,
    WorkspaceAdopted,
)
from reconciler.engine.diff import Comparison
from reconciler.kinds import workspace


@dataclass(frozen=True, slots=True)
class Adoption:
    adopted: list[str]  # sentences: what is now managed
    absent: list[str]  # declared objects not on the site (plan will create them)


def adoption_events(comparison: Comparison, records: Records) -> tuple[Adoption, list[Event]]:
    """What adopting the compared objects means, and the events that record it."""
    adopted: list[str] = []
    absent: list[str] = []
    events: list[Event] = []
    for ws in comparison.workspaces:
        if ws.status == "missing":
            absent.append(f'workspace "{ws.name}"')
        if ws.status != "present" or ws.live is None or ws.desired is None:
            continue
        record = records.workspaces.get(ws.name)
        if record is not None and record.managed and record.id == ws.live.id:
            continue  # already managed: keep what was recorded
        events.append(
            WorkspaceAdopted(
                ws.name,
                RecordedWorkspace(
                    id=ws.live.id,
                    managed=True,
                    origin="adopted",
                    settings=workspace.adopted(ws.live),
                    members=ws.live.users or frozenset(),
                    source=ws.desired.source.file,
                ),
            )
        )
        adopted.append(f'workspace "{ws.name}" (id {ws.live.id})')
    for group in comparison.groups:
        if group.status == "missing":
            absent.append(f'user group "{group.name}"')
        if group.status != "present" or group.id is None or group.desired is None:
            continue
        current = records.groups.get(group.name)
        if current is not None and current.managed and current.id == group.id:
            continue
        events.append(
            GroupAdopted(
                group.name,
                RecordedGroup(
                    id=group.id,
                    managed=True,
                    origin="adopted",
                    members=current.members if current is not None else frozenset(),
                    source=group.desired.source.file,
                ),
            )
        )
        adopted.append(f'user group "{group.name}" (id {group.id})')
    for user in comparison.users:
        if user.status == "missing":
            absent.append(f'user "{user.username}"')
        if user.status != "present" or user.live is None or user.desired is None:
            continue
        known = records.users.get(user.username)
        if known is not None and known.managed and known.id == user.live.id:
            continue
        adopted_user = RecordedUser(user.live.id, True, "adopted", user.desired.source.file)
        events.append(UserAdopted(user.username, adopted_user))
        adopted.append(f'user "{user.username}" (id {user.live.id})')
    return Adoption(adopted, absent), events
