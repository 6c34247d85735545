"""``review apply``: each ``revoke`` as an edit of the manifest, or why none is needed or made.

A revocation of a membership becomes the removal of every reference that names the person
from the ``users`` of the workspace (or the ``members`` of its team, which is also a group)
in the file that declares it -- found by the place the manifest loader kept for each
reference (``Source``: file, line, path). Whom a reference names is the manifest's one rule
(``reviewers.People``, over the review's people); a reference that may name someone else too
is never edited, but named. Otherwise:

* **no manifest change**: the manifest declares the workspace but not this access (the person
  was added by hand); the next apply removes it;
* **cannot**: an administrator (they reach every workspace and no API method changes an
  existing user), a workspace the manifest does not declare (no apply touches its members),
  an ambiguous reference, or a list that cannot be edited in place (``yaml_edit``);
* **kept, yet undeclared**: a ``keep`` the next apply would undo, because the manifest
  declares the workspace without this member: add them, or revoke.

Nothing is written to the site: the edited files go through the usual pull request, plan and
apply, and ``review close`` then proves the revocations took effect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reconciler.identity import workspace_key
from reconciler.model import DesiredSite, DesiredWorkspace, UserRef
from reconciler.review.check import people_of
from reconciler.review.model import Review, Row, unneutralised
from reconciler.review.reviewers import People
from reconciler.review.yaml_edit import EditRefused, remove_items

Kind = Literal["edited", "no change", "cannot", "kept, undeclared"]
_ITEM = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one decision: its kind and, in words, what was done or is to do."""

    row: Row
    kind: Kind
    detail: str


@dataclass(frozen=True, slots=True)
class _Removal:
    """References to take out of one list of one file, for one row."""

    row: Row
    file: str
    list_path: str
    indexes: frozenset[int]
    refs: tuple[UserRef, ...]
    team: str | None


@dataclass
class Revocations:
    """The outcomes of a review's decisions, and the manifest files' new text."""

    outcomes: list[Outcome] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # file -> edited text

    def of(self, kind: Kind) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind == kind]


def carry_out(review: Review, desired: DesiredSite) -> Revocations:
    """The manifest edits that carry out ``review``'s revocations (a review that passed
    ``review check``), and what each decision needs besides."""
    people = people_of(review)
    found = Revocations()
    removals: list[_Removal] = []
    for row in review.rows:
        workspace = _declared(desired, unneutralised(row.text("workspace")))
        if row.decision.verdict == "revoke":
            removals += _revoke(row, workspace, people, found)
        elif workspace is not None and _undone_keep(row, workspace, people):
            found.outcomes.append(Outcome(row, "kept, undeclared", _add_hint(row, workspace)))
    _edit(removals, found)
    return found


def _revoke(
    row: Row, workspace: DesiredWorkspace | None, people: People, found: Revocations
) -> list[_Removal]:
    user_id = row.number("user_id")
    person = unneutralised(row.text("person"))
    if "administrator" in row.text("via"):
        found.outcomes.append(Outcome(row, "cannot", _administrator(person)))
    if "member" not in row.text("via"):
        return []
    if workspace is None:
        name = unneutralised(row.text("workspace"))
        found.outcomes.append(
            Outcome(
                row,
                "cannot",
                f'the manifest does not declare the workspace "{name}", so no apply changes its '
                f"members: remove {person} from it in the site's web app, or declare it (its "
                "users without them; `reconciler export` writes it)",
            )
        )
        return []
    naming = [ref for ref in workspace.users if user_id in people.meant(ref.text)]
    ambiguous = [ref for ref in naming if len(people.meant(ref.text)) > 1]
    for ref in ambiguous:
        found.outcomes.append(
            Outcome(
                row,
                "cannot",
                f'the reference "{ref.text}" at {ref.source} may also mean someone else: it '
                "is not edited; write the numeric ID of the one meant, then run review apply "
                "again",
            )
        )
    exact = [ref for ref in naming if ref not in ambiguous]
    if not naming:
        found.outcomes.append(
            Outcome(row, "no change", "the manifest does not declare it: the next apply removes it")
        )
    return _removals(row, exact, workspace.team)


def _removals(row: Row, refs: Iterable[UserRef], team: str | None) -> list[_Removal]:
    """The references grouped by the list (and file) they are items of."""
    by_list: dict[tuple[str, str], list[tuple[int, UserRef]]] = {}
    for ref in refs:
        match = _ITEM.match(ref.source.path)
        if match is not None:
            place = (ref.source.file, match["list"])
            by_list.setdefault(place, []).append((int(match["index"]), ref))
    return [
        _Removal(
            row,
            file,
            list_path,
            frozenset(index for index, _ in listed),
            tuple(ref for _, ref in listed),
            team,
        )
        for (file, list_path), listed in by_list.items()
    ]


def _edit(removals: list[_Removal], found: Revocations) -> None:
    """Make every removal, file by file and list by list; a list that cannot be edited in
    place turns its rows into "cannot", naming where to edit by hand."""
    lists: dict[tuple[str, str], list[_Removal]] = {}
    for removal in removals:
        lists.setdefault((removal.file, removal.list_path), []).append(removal)
    for (file, list_path), together in lists.items():
        text = found.files.get(file)
        if text is None:
            text = Path(file).read_bytes().decode("utf-8")
        indexes = set().union(*(r.indexes for r in together))
        try:
            found.files[file] = remove_items(text, list_path, indexes)
        except EditRefused as refused:
            for removal in together:
                where = ", ".join(str(ref.source) for ref in removal.refs)
                found.outcomes.append(
                    Outcome(removal.row, "cannot", f"{refused}: remove it by hand at {where}")
                )
            continue
        for removal in together:
            found.outcomes.append(Outcome(removal.row, "edited", _edited(removal)))


def _edited(removal: _Removal) -> str:
    texts = ", ".join(f'"{ref.text}"' for ref in removal.refs)
    where = ", ".join(f"{ref.source.file}:{ref.source.line}" for ref in removal.refs)
    also = f' (the team also makes the group "{removal.team}": they leave it too)'
    return f"removed {texts} from {removal.list_path} ({where})" + (also if removal.team else "")


def _declared(desired: DesiredSite, name: str) -> DesiredWorkspace | None:
    """The manifest's workspace of that name on the site (or a name it had before)."""
    key = workspace_key(name)
    for workspace in desired.workspaces:
        names = (workspace.name, *workspace.previously)
        if any(workspace_key(n) == key for n in names):
            return workspace
    return None


def _undone_keep(row: Row, workspace: DesiredWorkspace, people: People) -> bool:
    """A kept membership the manifest does not declare: the next apply would remove it."""
    if row.decision.verdict != "keep" or "member" not in row.text("via"):
        return False
    user_id = row.number("user_id")
    return not any(user_id in people.meant(ref.text) for ref in workspace.users)


def _add_hint(row: Row, workspace: DesiredWorkspace) -> str:
    person = unneutralised(row.text("person"))
    where = f"the team {workspace.team}'s members" if workspace.team else "its users"
    return (
        f"kept, but the manifest does not declare it, so the next apply removes it: add "
        f"{person} to {where} ({workspace.source}), or revoke it"
    )


def _administrator(person: str) -> str:
    return (
        f"{person} is a site administrator and reaches every workspace; no manifest change "
        "ends that (no API method changes an existing user): remove their administrator "
        "status in the site's web app, or delete the account (remove it from users: under "
        "policy.prune_users), then run review close"
    )
