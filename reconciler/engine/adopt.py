"""Adopt: record the objects a manifest names that already exist on the site, as managed.

Adopting changes nothing on the site. It tells the tool that those objects are now its to
manage, so that a later prune may delete them once they leave the manifest, and it records
what the site cannot report: ``root_access`` and the override switches as the manifest
declares them, and group members as the manifest lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.engine.diff import Comparison
from reconciler.engine.state import RecordedGroup, RecordedWorkspace, SiteState


@dataclass(frozen=True, slots=True)
class Adoption:
    adopted: list[str]  # sentences: what is now managed
    absent: list[str]  # declared objects not on the site (plan will create them)


def adopt(comparison: Comparison, state: SiteState) -> Adoption:
    """Record every declared object that exists on the site as managed (origin "adopted")."""
    adopted: list[str] = []
    absent: list[str] = []
    for ws in comparison.workspaces:
        if ws.status == "missing":
            absent.append(f'workspace "{ws.name}"')
        if ws.status != "present" or ws.live is None or ws.desired is None:
            continue
        record = state.workspaces.get(ws.name)
        if record is not None and record.managed and record.id == ws.live.id:
            continue  # already managed: keep what was recorded
        observed = ws.live.details_observed
        state.workspaces[ws.name] = RecordedWorkspace(
            id=ws.live.id,
            managed=True,
            origin="adopted",
            root_access=ws.desired.root_access,
            permissions=ws.live.permissions or None if observed else ws.desired.permissions,
            notifications=ws.desired.notifications,
            settings_known=True,
            members=ws.live.users if ws.live.users is not None else ws.desired_users,
        )
        adopted.append(f'workspace "{ws.name}" (id {ws.live.id})')
    for group in comparison.groups:
        if group.status == "missing":
            absent.append(f'user group "{group.name}"')
        if group.status != "present" or group.id is None:
            continue
        current = state.groups.get(group.name)
        if current is not None and current.managed and current.id == group.id:
            continue
        state.groups[group.name] = RecordedGroup(
            id=group.id, managed=True, origin="adopted", members=group.desired_members
        )
        adopted.append(f'user group "{group.name}" (id {group.id})')
    return Adoption(adopted, absent)
