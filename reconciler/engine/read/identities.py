"""The plan's fourth step, *settle identities*: once the site is read, which record, which site
object and which user each name of the manifest means.

Names alone cannot say: the site's API cannot rename, so a workspace, group or user renamed
in the manifest (``previously: [Old Name]``) is still listed under its old name, and its
records sit under that name too. Settling, in one place and in this order:

1. writes an interrupted apply left pending are settled from what the read shows, and the
   recorded members whose users are gone are dropped (``pending.settled_read``);
2. records move to the manifest's name: one the manifest respells (``Legal`` for ``legal``,
   the same name as the site compares names) or one ``previously`` names, when the site still
   has that object under its recorded ID (``record_moves``); the move is a ``RecordMoved``
   event (``record_changes``), shown in the plan and saved by its apply. **The site keeps the
   old name** until a person renames it in the web app; the tool follows the object by its ID;
3. the manifest's user references are resolved to the site's users (``users.resolve``), a
   renamed user's new username bound to the account that still has the old one
   (``renamed_users``); a reference to no user, or to two, stops the plan (``UnknownUsers``).

What is compared afterwards (``diff.compare``) is the manifest's part the plan covers, the
records as they will be saved, and the resolution. The refusal of a delete-and-create of a
renamed object is a guard (``renames.rename_guards``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from reconciler.core.planning import RecordChange
from reconciler.core.records import Event, Records, reduce
from reconciler.core.users import Resolution, UserDirectory, resolve_references
from reconciler.engine.apply.pending import settled_read
from reconciler.engine.read.scope import Scope
from reconciler.engine.records.changes import Kind, Move, RecordMoved, members_dropped, moved
from reconciler.errors import ManifestError
from reconciler.identity import NameSet, NameTable, same_name, username_key
from reconciler.model import DesiredSite, LiveSite


class UnknownUsers(ManifestError):
    """The manifest names users the site does not have, or names ambiguously."""

    def __init__(self, resolution: Resolution) -> None:
        lines = [f'{ref.source}: no user on the site is "{ref.text}"' for ref in resolution.unknown]
        lines += [ambiguity.describe() for ambiguity in resolution.ambiguous]
        count = len(resolution.unknown) + len(resolution.ambiguous)
        super().__init__(
            f"{count} user reference(s) match no user, or more than one, on the site:\n  "
            + "\n  ".join(lines),
            hint="Use the username, e-mail address or numeric ID of one existing user.",
        )
        self.refs = resolution.unknown


@dataclass(frozen=True, slots=True)
class Identities:
    """What each name means, settled against a read of the site."""

    compared: DesiredSite  # what is compared: the manifest, or the part a scope covers
    records: Records  # all of them: pending writes settled, moves folded in (what apply saves)
    base: Records  # the records compared with (a scope's objects only)
    directory: UserDirectory  # the site's users the read returned
    resolution: Resolution
    learnt: tuple[str, ...]  # what settling pending writes found out
    notices: tuple[str, ...]  # the scope, the moves, the old names the site still uses
    record_changes: tuple[RecordChange, ...]  # moves and dead members: shown, then saved


def settle(
    desired: DesiredSite, live: LiveSite, records: Records, scope: Scope | None
) -> Identities:
    """Settle the names of ``desired`` (all of it, or what ``scope`` covers) against ``live``
    and the records; raises ``UnknownUsers`` for a reference to no user or to two."""
    alive, settled, learnt = settled_read(records, live)
    compared = desired if scope is None else scope.site_of(desired)
    moves = [m for m in record_moves(desired, settled, live) if _covers(scope, m)]
    settled = reduce(settled, moved_events(moves))
    directory = UserDirectory.of(live.users)
    resolution = renamed_users(resolve_references(compared, directory), desired, settled, live)
    if resolution.unknown or resolution.ambiguous:
        raise UnknownUsers(resolution)
    notices: tuple[str, ...] = (scope.describe(),) if scope is not None else ()
    notices += move_notices(moves) or still_called(compared, live, settled, moves)
    return Identities(
        compared,
        settled,
        settled if scope is None else scope.records_of(settled),
        directory,
        resolution,
        tuple(learnt),
        notices,
        (*members_dropped(records, alive), *moved(moves)),
    )


def _covers(scope: Scope | None, move: Move) -> bool:
    return scope is None or scope.holds(move.kind, move.new)


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
