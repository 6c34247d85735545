"""The guards against a rename that would destroy (``previously: [Old Name]``).

The site's API cannot rename a workspace, a group or a user: renaming one in the manifest
reads as "delete Old, create New", and a workspace's files would be destroyed. Settling
identities (``engine/identities.py``) moves the records to the new name whenever it can, so
nothing is deleted or created. What is left for the guard step:

* a plan that would still delete an old name and create a new one that says ``previously``
  of it (the records could not be moved: the new name has records of its own, or the site's
  object is gone) is refused: that is exactly the destruction ``previously`` exists to
  prevent (``rename_guards``);
* a workspace deleted while another with the same users and settings is created under
  another name, without ``previously``, is most likely a rename: the plan warns
  (``looks_like_renames``).

``reconciler state mv KIND OLD NEW`` moves a record by hand, with the same event.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from reconciler.core.changes import Change
from reconciler.engine.diff import Comparison, WorkspaceDiff
from reconciler.identity import NameSet, name_key
from reconciler.kinds import workspace
from reconciler.kinds.workspace import RecordedSettings


def rename_guards(
    renamed: Iterable[tuple[str, str, tuple[str, ...]]],
    deleted: set[tuple[str, str]],
    created: set[tuple[str, str]],
) -> list[str]:
    """Why a plan that deletes an old name and creates a new one that says ``previously`` of
    it must not run: the rename would destroy the object (and a workspace's files).
    ``renamed``: (kind, name, previously) of each declared object that has old names."""
    made = {(kind, name_key(kind, name)) for kind, name in created}
    gone = {(kind, name_key(kind, name)): name for kind, name in deleted}
    found = []
    for kind, name, previously in renamed:
        if (kind, name_key(kind, name)) not in made:
            continue
        for written in previously:
            old = gone.get((kind, name_key(kind, written)))
            if old is not None:
                found.append(
                    f'{kind} "{old}" would be deleted and "{name}" created, though "{name}" '
                    f'says it was previously "{old}": a rename must keep the object, and the '
                    f"records could not be moved (`reconciler state show` says why; `reconciler "
                    f'state mv {kind} "{old}" "{name}"` moves them by hand; or drop '
                    "`previously` to really delete and create)"
                )
    return found


def _content(diff: WorkspaceDiff) -> tuple[Any, RecordedSettings] | None:
    """What a deleted workspace holds besides its files (``workspace.fingerprint``)."""
    live, record = diff.live, diff.record
    if live is None or record is None:
        return None
    return workspace.fingerprint(live.users, live, record.settings, record.members)


def looks_like_renames(
    workspaces: Iterable[WorkspaceDiff],
    deleted: set[tuple[str, str]],
    created: set[tuple[str, str]],
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


def rename_problems(comparison: Comparison, changes: Iterable[Change]) -> list[str]:
    """A delete of an old name and a create of a new one that says ``previously`` of it."""
    renamed = [
        *(("workspace", d.name, d.desired.previously) for d in comparison.workspaces if d.desired),
        *(("group", d.name, d.desired.previously) for d in comparison.groups if d.desired),
        *(("user", d.username, d.desired.previously) for d in comparison.users if d.desired),
    ]
    done: list[tuple[str, str, str]] = [(c.kind, c.name, c.action) for c in changes]
    deleted = {(kind, name) for kind, name, action in done if action == "delete"}
    created = {(kind, name) for kind, name, action in done if action in ("create", "replace")}
    return rename_guards(renamed, deleted, created)


def lookalike_warnings(comparison: Comparison, changes: Iterable[Change]) -> list[str]:
    """A workspace deleted and another of the same content created: a rename, most likely."""
    done: list[tuple[str, str, str]] = [(c.kind, c.name, c.action) for c in changes]
    deleted = {(kind, name) for kind, name, action in done if action == "delete"}
    created = {(kind, name) for kind, name, action in done if action == "create"}
    return looks_like_renames(comparison.workspaces, deleted, created)
