"""The guards against a rename that would destroy (``previously: [Old Name]``).

The site's API cannot rename a workspace, a group or a user: renaming one in the manifest
reads as "delete Old, create New", and a workspace's files would be destroyed. Settling
identities (``engine/read/identities.py``) moves the records to the new name whenever it can, so
nothing is deleted or created. What is left for the guard step:

* a plan that would still delete an old name and create a new one that says ``previously``
  of it (the records could not be moved: the new name has records of its own, or the site's
  object is gone) is refused: that is exactly the destruction ``previously`` exists to
  prevent (``rename_guards``);
* an object deleted while another of the same content is created under another name,
  without ``previously``, is most likely a rename: the plan warns (each kind's
  ``lookalikes``; ``kinds/workspace/renames.py`` for a workspace's users and settings).

``reconciler state mv KIND OLD NEW`` moves a record by hand, with the same event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from reconciler.core.changes import Change
from reconciler.engine.planning.diff import Comparison
from reconciler.kinds import registry


def rename_guards(
    renamed: Iterable[tuple[str, str, tuple[str, ...]]],
    deleted: set[tuple[str, str]],
    created: set[tuple[str, str]],
) -> list[str]:
    """Why a plan that deletes an old name and creates a new one that says ``previously`` of
    it must not run: the rename would destroy the object (and a workspace's files).
    ``renamed``: (kind, name, previously) of each declared object that has old names."""
    rules: dict[str, Callable[[str], str]] = {k.name: k.name_key for k in registry.KINDS}

    def name_key(kind: str, name: str) -> str:
        return rules[kind](name)

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


def rename_problems(comparison: Comparison, changes: Iterable[Change]) -> list[str]:
    """A delete of an old name and a create of a new one that says ``previously`` of it."""
    renamed = [
        (kind, diff.name, diff.desired.previously)
        for kind, diffs in comparison.diffs.items()
        for diff in diffs
        if diff.desired is not None
    ]
    done: list[tuple[str, str, str]] = [(c.kind, c.name, c.action) for c in changes]
    deleted = {(kind, name) for kind, name, action in done if action == "delete"}
    created = {(kind, name) for kind, name, action in done if action in ("create", "replace")}
    return rename_guards(renamed, deleted, created)


def lookalike_warnings(comparison: Comparison, changes: Iterable[Change]) -> list[str]:
    """An object deleted and another of the same content created: a rename, most likely
    (each kind's ``lookalikes``: a workspace's users and settings)."""
    done: list[tuple[str, str, str]] = [(c.kind, c.name, c.action) for c in changes]
    deleted = {(kind, name) for kind, name, action in done if action == "delete"}
    created = {(kind, name) for kind, name, action in done if action == "create"}
    return [
        warning
        for kind in registry.KINDS
        for warning in kind.lookalikes(comparison.of(kind.name), deleted, created)
    ]
