"""The plan's third step, *read*: the live site a plan compares with, from what the names
step said to look for (``engine/read/wanted.py``), never from the manifest itself.

A full read takes every workspace, the users and the groups. A scoped one (``--changed``,
``--target``: ``engine/read/scope.py``) reads the touched set, widens it by what the site shows
changed behind the tool's back (managed workspaces and groups deleted or renamed by hand, a
reference that now means another user), reads what the widening added, and resolves every
reference fresh from the site, as a full plan would: never from what the records remember
of a user (an e-mail may have moved to another account).
"""

from __future__ import annotations

from dataclasses import replace

from reconciler.core.records import Records
from reconciler.core.users import UserDirectory
from reconciler.engine.read.live import LiveReader
from reconciler.engine.read.scope import Scope, widened
from reconciler.engine.read.wanted import Wanted
from reconciler.identity import NameSet
from reconciler.model import LiveSite, LiveUser

MAX_SCOPED_LOOKUPS = 250
"""Past this many references to look up, one read of the whole user list is cheaper: searches
go out concurrently (a round trip per eight), the user list one page after another."""


async def read_site(
    reader: LiveReader, wanted: Wanted, records: Records, scope: Scope | None
) -> tuple[LiveSite, Scope | None]:
    """The site as the plan needs it, and the scope as the read widened it (None: all)."""
    if scope is None:
        return await _read_full(reader, wanted, records), None
    return await _read_scoped(reader, wanted, records, scope)


async def _read_full(reader: LiveReader, wanted: Wanted, records: Records) -> LiveSite:
    def fallback(users: tuple[LiveUser, ...]) -> set[int]:
        ids = set(wanted.resolve(UserDirectory.of(users)).ids.values())
        return ids | {m for ws in records.workspaces.values() for m in ws.members}

    return await reader.read(
        wanted.with_old_names(wanted.workspaces) + wanted.leaving_workspaces(records),
        fallback,
        who_am_i=bool(wanted.users or records.users),
        memberships_of=wanted.leaving_users(records),
    )


def _part(wanted: Wanted, scope: Scope) -> Wanted:
    return wanted.within(scope.workspaces, scope.groups, scope.users)


async def _read_scoped(
    reader: LiveReader, wanted: Wanted, records: Records, scope: Scope
) -> tuple[LiveSite, Scope]:
    """Read the touched set, widened (see the module's docstring). Every reference of the
    scope is looked up (``Wanted.look_ups``): no partial read proves that no other user
    has it, in another case, as username or e-mail; the calls grow with the change."""
    declared_users = NameSet("user", (u.username for u in wanted.users))
    deleting_users = any(name not in declared_users for name in scope.users)
    managed_groups = records.managed_groups()
    live = await reader.read_scoped(
        wanted.with_old_names(scope.workspaces),
        (),
        locations=bool(managed_groups) or bool(scope.groups),
        all_users=deleting_users,
        who_am_i=deleting_users,
        memberships_of=wanted.leaving_users(records, scope.users),
    )
    every_user = deleting_users  # the whole user list was read: nothing to look up
    wide, looked = widened(scope, live, records).within(), set[str]()
    for _ in range(3):  # each round may pull in objects whose references then need looking up
        added = sorted(wide.workspaces - {ws.name for ws in live.workspaces if ws.details_observed})
        if added:
            live = await reader.with_details(live, wanted.with_old_names(added))
        more = _part(wanted, wide).look_ups() - looked
        if more and not every_user:
            every_user = len(more) > MAX_SCOPED_LOOKUPS
            found = await (reader.every_user() if every_user else reader.look_up(more))
            live = _with_users(live, found)
        looked |= more
        pulled = with_moved_references(wanted, wide, live, records).within()
        if pulled == wide:
            break
        wide = pulled
    return live, wide


def with_moved_references(wanted: Wanted, scope: Scope, live: LiveSite, records: Records) -> Scope:
    """``scope`` with every declared workspace and group naming a reference that now means
    another user than the records say it did (an e-mail moved to a new account, a user
    deleted and made again): a full plan would change their members too."""
    resolution = _part(wanted, scope).resolve(UserDirectory.of(live.users))
    moved = {
        text
        for text, user_id in resolution.ids.items()
        if text in records.references and records.references[text][0] != user_id
    }
    if not moved:
        return scope
    workspaces, groups = wanted.naming(moved)
    return replace(scope, workspaces=scope.workspaces | workspaces, groups=scope.groups | groups)


def _with_users(live: LiveSite, found: tuple[LiveUser, ...]) -> LiveSite:
    """``live`` with the users a look-up found, in place of what another read said of them."""
    ids = {user.id for user in found}
    return replace(live, users=found + tuple(u for u in live.users if u.id not in ids))
