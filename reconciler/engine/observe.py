"""Read the site and compare it with the manifest and the records: the first half of every job.

A full observation reads every declared workspace, the users and the groups. A change-scoped
one (``--changed``, see ``engine/scope.py``) reads only what the touched set needs and
compares only the touched objects; everything else is left exactly as it is. Either way the
result is an ``Observation`` that the planner turns into a plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from reconciler import __version__
from reconciler.api.client import SiteClient
from reconciler.engine.diff import Comparison, compare
from reconciler.engine.live import LiveReader, Progress
from reconciler.engine.manifest_snapshot import desired_to_data
from reconciler.engine.pending import settled_read, wait_for_landing
from reconciler.engine.plan import Plan, PlanContext, PlanOptions, RecordChange
from reconciler.engine.plan_key import PlanSecret
from reconciler.engine.planner import build_plan
from reconciler.engine.record_changes import members_dropped, moved
from reconciler.engine.records import Records, reduce
from reconciler.engine.renames import (
    move_notices,
    moved_events,
    record_moves,
    renamed_users,
    still_called,
    with_old_names,
)
from reconciler.engine.scope import (
    Scope,
    scoped_records,
    scoped_site,
    widened,
    with_moved_references,
)
from reconciler.engine.targets import select
from reconciler.engine.users import Resolution, UserDirectory, resolve_references, unverified
from reconciler.errors import ManifestError
from reconciler.identity import NameSet
from reconciler.model import DesiredSite, LiveSite, LiveUser
from reconciler.state.backend import Holder, RecordStore


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
class OpenSite:
    """An open site: the client to reach it, its records, and who is acting."""

    client: SiteClient
    store: RecordStore
    holder: Holder
    progress: Progress | None = None
    lock_wait: float = 0.0
    plan_secret: PlanSecret | None = None  # RECONCILER_PLAN_KEY, when the pipeline gives one


@dataclass(frozen=True, slots=True)
class LoadedManifest:
    """A loaded manifest and the digest of the files it was read from."""

    desired: DesiredSite
    digest: str = ""


@dataclass(frozen=True, slots=True)
class ReadTimes:
    """How long the live read took, and the tool's own CPU during it (``plan_timings``)."""

    wall_s: float
    cpu_s: float

    @classmethod
    def since(cls, wall: float, cpu: float) -> ReadTimes:
        return cls(time.perf_counter() - wall, time.process_time() - cpu)


NOT_TIMED = ReadTimes(0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Observation:
    """A fresh read of the site compared with the manifest and the (settled) records.

    ``desired`` is what was compared: the whole manifest, or its touched part (``scope``).
    ``records`` are always all of them, with pending writes settled and ``record_changes``
    (moves, dead members dropped) folded in: what an apply saves.
    """

    desired: DesiredSite
    live: LiveSite
    records: Records
    directory: UserDirectory
    resolution: Resolution
    comparison: Comparison
    scope: Scope | None = None
    learnt: tuple[str, ...] = ()
    notices: tuple[str, ...] = field(default=())
    read: ReadTimes = NOT_TIMED
    record_changes: tuple[RecordChange, ...] = ()


async def observe(
    desired: DesiredSite, site: OpenSite, records: Records, options: PlanOptions
) -> Observation:
    """Select, read and compare, in that order: the whole site, or (``options.changed``) the
    touched set only, or (``--target``/``--exclude``) the selected objects only. Creations an
    interrupted apply sent are given the time to land first (``pending.wait_for_landing``)."""
    waited = await wait_for_landing(site.client, records)
    scope, notices = select(desired, records, options)
    wall, cpu = time.perf_counter(), time.process_time()
    if scope is None:
        live = await _read_full(desired, site, records)
    else:
        live, scope = await _read_scoped(desired, site, records, scope)
    seen = compare_live(desired, live, records, read=ReadTimes.since(wall, cpu), scope=scope)
    return _with_notices(seen, *notices, *([waited] if waited else []))


async def _read_full(desired: DesiredSite, site: OpenSite, records: Records) -> LiveSite:
    def fallback(users: tuple[LiveUser, ...]) -> set[int]:
        ids = set(resolve_references(desired, UserDirectory.of(users)).ids.values())
        return ids | {m for ws in records.workspaces.values() for m in ws.members}

    return await LiveReader(site.client, site.progress).read(
        with_old_names(desired, [ws.name for ws in desired.workspaces]),
        fallback,
        who_am_i=bool(desired.users or records.users),
    )


def compare_live(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    *,
    read: ReadTimes,
    scope: Scope | None = None,
) -> Observation:
    """Compare a read of the site with ``desired`` (its touched part, with a ``scope``)."""
    alive, settled, learnt = settled_read(records, live)
    compared = desired if scope is None else scoped_site(desired, scope)
    moves = [m for m in record_moves(desired, settled, live) if _in(scope, m.kind, m.new)]
    settled = reduce(settled, moved_events(moves))
    directory = UserDirectory.of(live.users)
    resolution = renamed_users(resolve_references(compared, directory), desired, settled, live)
    if resolution.unknown or resolution.ambiguous:
        raise UnknownUsers(resolution)
    base = settled if scope is None else scoped_records(settled, scope)
    comparison = compare(compared, live, base, resolution)
    if scope is not None:  # a partial read cannot tell unmanaged objects from untouched ones
        comparison = Comparison(
            comparison.workspaces,
            comparison.groups,
            (),
            comparison.conflicts,
            comparison.notes,
            comparison.users,
        )
    notices: tuple[str, ...] = (scope.describe(),) if scope is not None else ()
    notices += move_notices(moves) or still_called(compared, live, settled, moves)
    return Observation(
        compared,
        live,
        settled,
        directory,
        resolution,
        comparison,
        scope,
        tuple(learnt),
        notices,
        read,
        (*members_dropped(records, alive), *moved(moves)),
    )


def _in(scope: Scope | None, kind: str, name: str) -> bool:
    return scope is None or scope.holds(kind, name)


MAX_SCOPED_LOOKUPS = 250
"""Past this many references to look up, one read of the whole user list is cheaper: searches
go out concurrently (a round trip per eight), the user list one page after another."""


async def _read_scoped(
    desired: DesiredSite, site: OpenSite, records: Records, scope: Scope
) -> tuple[LiveSite, Scope]:
    """Read the touched set, widen it by what the site shows changed behind the tool's back
    (managed workspaces and groups deleted or renamed by hand), read what the widening
    added, and resolve every reference fresh from the site, as a full plan would: never from
    what the records remember of a user (an e-mail may have moved to another account).

    Fresh means read by this plan: a reference that a member of a workspace it read, or a
    user ``users_location_access`` listed, names exactly is resolved from that; only the
    others are looked up (``users.unverified``), so the calls grow with the change."""
    reader = LiveReader(site.client, site.progress)
    declared_users = NameSet("user", (u.username for u in desired.users))
    deleting_users = any(name not in declared_users for name in scope.users)
    managed_groups = records.managed_groups()
    live = await reader.read_scoped(
        with_old_names(desired, scope.workspaces),
        (),
        locations=bool(managed_groups) or bool(scope.groups),
        all_users=deleting_users,
        who_am_i=deleting_users,
    )
    every_user = deleting_users  # the whole user list was read: nothing to look up
    wide, looked = widened(scope, live, records).within(), set[str]()
    for _ in range(3):  # each round may pull in objects whose references then need looking up
        added = sorted(wide.workspaces - {ws.name for ws in live.workspaces if ws.details_observed})
        if added:
            live = await reader.with_details(live, with_old_names(desired, added))
        more = unverified(scoped_site(desired, wide), UserDirectory.of(live.users)) - looked
        if more and not every_user:
            every_user = len(more) > MAX_SCOPED_LOOKUPS
            found = await (reader.every_user() if every_user else reader.look_up(more))
            live = _with_users(live, found)
        looked |= more
        pulled = with_moved_references(desired, wide, live, records).within()
        if pulled == wide:
            break
        wide = pulled
    return live, wide


def _with_users(live: LiveSite, found: tuple[LiveUser, ...]) -> LiveSite:
    """``live`` with the users a look-up found, in place of what another read said of them."""
    ids = {user.id for user in found}
    return replace(live, users=found + tuple(u for u in live.users if u.id not in ids))


def _with_notices(seen: Observation, *notices: str) -> Observation:
    return replace(seen, notices=(*seen.notices, *notices))


def _context(manifest: LoadedManifest, site: OpenSite, scope: Scope | None) -> PlanContext:
    return PlanContext(
        site=site.store.site,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        tool_version=__version__,
        manifest_files=manifest.desired.files,
        manifest_digest=manifest.digest,
        desired=desired_to_data(manifest.desired),
        desired_site=manifest.desired,
        state=site.store.location,
        scope=None if scope is None else scope.to_data(),
    )


def _no_records_notice(seen: Observation, site: OpenSite) -> list[str]:
    """Without records, removals, prunes and group members cannot be judged: say so first."""
    present = any(d.status == "present" for d in seen.comparison.workspaces) or any(
        d.status == "present" for d in seen.comparison.groups
    )
    if not (seen.records.empty and present):
        return []
    return [
        f"The tool has no records for this site in {site.store.location}, though objects the "
        "manifest declares exist on it. Without records, removals and prunes cannot be planned "
        "and group members cannot be judged. If a pipeline or another machine applied this "
        "manifest before, point the tool at its records: --state URL (or RECONCILER_STATE, or "
        "site.state in the manifest). If not, run `reconciler adopt` first."
    ]


def plan_from(
    manifest: LoadedManifest,
    site: OpenSite,
    seen: Observation,
    options: PlanOptions,
    warnings: tuple[str, ...] = (),
) -> Plan:
    """The plan for an observation of the site (nothing is read or saved)."""
    return build_plan(
        seen.comparison,
        seen.live,
        seen.records,
        seen.directory,
        manifest.desired.policy,
        options,
        _context(manifest, site, seen.scope),
        (*seen.notices, *_no_records_notice(seen, site)),
        warnings,
        seen.record_changes,
    )
