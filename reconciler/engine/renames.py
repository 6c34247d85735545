"""Renames in the manifest (``previously: [Old Name]``): keep the object, move the records.

The site's API cannot rename a workspace, a group or a user. Without help, renaming one in
the manifest reads as "delete Old, create New": a workspace's files would be destroyed. So a
workspace, group or user may say what it was called before, as peribolos does, and:

* when the tool's records hold the old name and the site still has that object (by its
  recorded ID, under the old name or already under the new one), the records move to the new
  name (``RecordMoved``): nothing is deleted or created. **The site keeps the old name** --
  the API has no way to change it -- until a person renames it in the web app; the tool follows
  the object by its ID either way, compares and changes it under the manifest's new name, and
  the plan says so (``moved_notice``);
* a plan that would still delete an old name and create a new one that says ``previously``
  of it (the records could not be moved: the new name has records of its own, or the site's
  object is gone) is refused: that is exactly the destruction ``previously`` exists to
  prevent (``rename_guards``).

``reconciler state mv KIND OLD NEW`` moves a record by hand, with the same event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from reconciler.engine.diff import Comparison, WorkspaceDiff
from reconciler.engine.plan import Change
from reconciler.engine.records import Event, Records, Tables
from reconciler.engine.users import Resolution
from reconciler.identity import NameSet, NameTable, name_key, same_name, username_key
from reconciler.kinds import workspace
from reconciler.kinds.workspace import RecordedSettings
from reconciler.model import DesiredSite, LiveSite

Kind = Literal["workspace", "group", "user"]


@dataclass(frozen=True, slots=True)
class RecordMoved(Event):
    """The record of ``old`` is now the record of ``new``: the same site object, renamed in the
    manifest (``previously``) or by ``state mv``. The site is not changed."""

    kind: Kind
    old: str
    new: str

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = getattr(tables, f"{self.kind}s")
        record = table.get(self.old)
        if record is None or self.new in table:
            return  # never onto another record (``record_moves`` and ``state mv`` make sure
            # no record of another spelling of the new name exists either)
        table[self.new] = table.pop(self.old)
        digests = tables.digests
        if (old_key := f"{self.kind}:{self.old}") in digests:
            del digests[old_key]  # the new name is compared afresh


@dataclass(frozen=True, slots=True)
class Move:
    """A record the manifest's ``previously`` moves, and what the site calls the object."""

    kind: Kind
    old: str
    new: str
    object_id: int | None
    site_name: str | None  # None: the site does not list it (groups on some sites)
    respelled: bool = False  # the manifest writes the recorded name in another spelling

    def notice(self) -> str | None:
        what = {"workspace": "Workspace", "group": "User group", "user": "User"}[self.kind]
        if self.respelled:
            return None  # the same name, as the site compares names: nothing to say
        if self.site_name == self.new:
            return (
                f'{what} "{self.new}" (previously "{self.old}", ID {self.object_id}): the '
                "tool's records move to the new name; the site already calls it by it."
            )
        called = f'"{self.site_name}"' if self.site_name else f'"{self.old}" (as recorded)'
        return (
            f'{what} "{self.new}" (previously "{self.old}", ID {self.object_id}): the tool\'s '
            "records move to the new name; nothing is deleted or created. The site's API "
            f"cannot rename, so the site keeps calling it {called} until someone renames it "
            "in the web app; the tool follows it by ID either way."
        )


def _declared(desired: DesiredSite) -> Iterator[tuple[Kind, str, tuple[str, ...]]]:
    for ws in desired.workspaces:
        yield "workspace", ws.name, ws.previously
    for group in desired.groups:
        yield "group", group.name, group.previously
    for user in desired.users:
        yield "user", user.username, user.previously


def record_moves(desired: DesiredSite, records: Records, live: LiveSite) -> list[Move]:
    """The records that move to a declared name: one recorded under another spelling of the
    same name (``Legal`` for ``legal``: the same object, silently), or one ``previously``
    names -- the new name has no record, an old one does (managed, no longer declared), and
    the site still has that object under its ID (named the old or the new name) -- or cannot
    say (groups on a site that does not list them, users outside a partial read). Names are
    compared as the site compares them (``reconciler.identity``)."""
    declared = {kind: NameSet(kind) for kind in ("workspace", "group", "user")}
    for kind, name, _ in _declared(desired):
        declared[kind].add(name)
    live_names: dict[Kind, dict[int, str]] = {
        "workspace": {ws.id: ws.name for ws in live.workspaces},
        "group": {g.id: g.name for g in live.groups},
        "user": {u.id: u.username for u in live.users},
    }
    complete = {"workspace": True, "group": live.groups_listed, "user": live.users_complete}
    tables: dict[Kind, NameTable[Any]] = {
        "workspace": NameTable("workspace", records.workspaces),
        "group": NameTable("group", records.groups),
        "user": NameTable("user", records.users),
    }
    moves: list[Move] = []
    taken: dict[Kind, NameSet] = {kind: NameSet(kind) for kind in tables}
    for kind, name, previously in _declared(desired):
        own = tables[kind].find(name)
        if own is not None:
            if own[0] != name:  # another spelling of the same name: the record follows
                moves.append(Move(kind, own[0], name, getattr(own[1], "id", None), None, True))
            continue
        for old in previously:
            found = tables[kind].find(old)
            if found is None:
                continue
            recorded, record = found
            object_id = getattr(record, "id", None)
            if not record.managed or object_id is None:
                continue
            if recorded in declared[kind] or recorded in taken[kind]:
                continue
            site_name = live_names[kind].get(object_id)
            if site_name is None and complete[kind]:
                continue  # gone from the site: nothing to keep
            if site_name is not None and not (
                same_name(kind, site_name, recorded) or same_name(kind, site_name, name)
            ):
                continue  # renamed by hand to something else: the diff reports it
            moves.append(Move(kind, recorded, name, object_id, site_name))
            taken[kind].add(recorded)
            break
    return moves


def moved_events(moves: list[Move]) -> list[Event]:
    return [RecordMoved(m.kind, m.old, m.new) for m in moves]


def move_notices(moves: list[Move]) -> tuple[str, ...]:
    return tuple(notice for move in moves if (notice := move.notice()) is not None)


def with_old_names(desired: DesiredSite, names: Iterable[str]) -> list[str]:
    """``names`` of workspaces and the names they had before: the site may still use one (a
    workspace's details are read by the name the site lists)."""
    wanted = set(names)
    chosen = NameSet("workspace", wanted)
    old = {n for ws in desired.workspaces if ws.name in chosen for n in ws.previously}
    return sorted(wanted | old)


def still_called(
    desired: DesiredSite, live: LiveSite, records: Records, moves: list[Move]
) -> tuple[str, ...]:
    """A line for each declared workspace or group whose recorded object the site still calls
    by an old name (its records moved before; the API cannot rename it). A plan that moves
    records by ``previously`` says so in its own notices instead."""
    if any(not move.respelled for move in moves):
        return ()
    ids: dict[Kind, dict[int, str]] = {
        "workspace": {ws.id: ws.name for ws in live.workspaces},
        "group": {g.id: g.name for g in live.groups},
    }
    tables: dict[Kind, Any] = {"workspace": records.workspaces, "group": records.groups}
    found = []
    for kind, name, previously in _declared(desired):
        record = tables[kind].get(name) if kind != "user" else None
        called = ids[kind].get(getattr(record, "id", None) or -1) if kind != "user" else None
        if (
            called is not None
            and not same_name(kind, called, name)
            and called in NameSet(kind, previously)
        ):
            found.append(
                f'The site still calls {kind} "{name}" by its old name "{called}" (the API '
                "cannot rename it); rename it in the web app when convenient."
            )
    return tuple(found)


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


def renamed_users(
    resolution: Resolution, desired: DesiredSite, records: Records, live: LiveSite
) -> Resolution:
    """``resolution`` with references to a renamed user's new username bound to the site's
    user, which keeps the old username (the API cannot rename): never a user to create."""
    by_id = {user.id: user for user in live.users}
    recorded = NameTable("user", records.users)
    aliases: dict[str, int] = {}
    for user in desired.users:
        record = recorded.get(user.username)
        found = by_id.get(record.id) if record is not None else None
        if found is not None and found.username in NameSet("user", user.previously):
            aliases[username_key(user.username)] = found.id
    bound = {
        text: aliases[username_key(text)]
        for text in resolution.new
        if username_key(text) in aliases
    }
    if not bound:
        return resolution
    new = {text: name for text, name in resolution.new.items() if text not in bound}
    return replace(resolution, ids={**resolution.ids, **bound}, new=new)
