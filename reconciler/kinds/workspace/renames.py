"""A workspace deleted while another of the same users and settings is created under another
name, without ``previously``: most likely a rename, which would destroy the files (the
workspace kind's ``lookalikes``)."""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from reconciler.identity import NameSet
from reconciler.kinds import workspace
from reconciler.kinds.workspace import RecordedSettings
from reconciler.kinds.workspace.diff import WorkspaceDiff


def _content(diff: WorkspaceDiff) -> tuple[Any, RecordedSettings] | None:
    """What a deleted workspace holds besides its files (``workspace.fingerprint``)."""
    live, record = diff.live, diff.record
    if live is None or record is None:
        return None
    return workspace.fingerprint(live.users, live, record.settings, record.members)


def looks_like_renames(
    workspaces: Iterable[WorkspaceDiff],
    deleted: Set[tuple[str, str]],
    created: Set[tuple[str, str]],
) -> list[str]:
    """Warnings for each workspace deleted while another with the same users and settings is
    created under another name: most likely a rename, which would destroy the files."""
    gone: dict[str, tuple[Any, RecordedSettings]] = {}
    new: list[WorkspaceDiff] = []
    for diff in workspaces:
        if ("workspace", diff.name) in deleted and (content := _content(diff)) is not None:
            gone[diff.name] = content
        elif ("workspace", diff.name) in created and diff.desired is not None:
            new.append(diff)
    found = []
    for diff in new:
        want = diff.desired
        assert want is not None
        for old, content in gone.items():
            same = workspace.same_content(content, diff.desired_users, want.settings)
            if same and old not in NameSet("workspace", want.previously):
                found.append(
                    f'workspace "{old}" is deleted and "{diff.name}" created with the same users '
                    "and settings: this looks like a rename; files would be destroyed. If it is "
                    f'one, write `previously: ["{old}"]` on "{diff.name}": the records then move '
                    "to the new name and nothing is deleted (the API cannot rename)."
                )
    return found
