"""Adopting declared workspaces that exist on the site: recorded as managed, with only what
the site reported as fact (a setting it does not report stays unknown, never copied from the
manifest: a guess recorded as a fact would later be "corrected" by a replacement)."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.core.kind import Adoption
from reconciler.core.records import RecordedWorkspace, Records, WorkspaceAdopted
from reconciler.kinds import workspace
from reconciler.kinds.workspace.diff import WorkspaceDiff


def adopt(diffs: Iterable[WorkspaceDiff], records: Records) -> Adoption:
    found = Adoption()
    for ws in diffs:
        if ws.status == "missing":
            found += Adoption(absent=(f'workspace "{ws.name}"',))
        if ws.status != "present" or ws.live is None or ws.desired is None:
            continue
        record = records.workspaces.get(ws.name)
        if record is not None and record.managed and record.id == ws.live.id:
            continue  # already managed: keep what was recorded
        adopted = RecordedWorkspace(
            id=ws.live.id,
            managed=True,
            origin="adopted",
            settings=workspace.adopted(ws.live),
            members=ws.live.users or frozenset(),
            source=ws.desired.source.file,
        )
        found += Adoption(
            adopted=(f'workspace "{ws.name}" (id {ws.live.id})',),
            events=(WorkspaceAdopted(ws.name, adopted),),
        )
    return found
