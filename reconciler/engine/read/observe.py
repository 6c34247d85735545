"""The plan's way, in one direction: the first half of every job.

``observe`` takes the manifest through the steps in this order, each in its own module,
each entered once:

0. the manifest as it wants the site on the plan's day (``core/expiry.as_of``): the entries
   whose ``expires:`` has come are left out, so their removal is planned like any other;
1. **select** (``targets.select``): everything, the objects ``--target``/``--exclude``
   select, or what changed since the last apply (``--changed``, ``engine/read/scope.py``);
2. **resolve names** (``wanted.Wanted``): the names a read must look for -- each workspace's
   own and those it had before -- and the user references to verify;
3. **read** (``site_read.read_site``): the site, whole or the scope, widened by what the site
   shows changed behind the tool's back;
4. **settle identities** (``identities.settle``): pending writes settled, records moved to
   the manifest's names, user references resolved to the site's users;
5. **compare** (``diff.compare``).

The result is an ``Observation``; ``plan_from`` then plans and guards (``planner``).
Creations an interrupted apply sent are given the time to land first
(``pending.wait_for_landing``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from reconciler import __version__, clock
from reconciler.api.client import SiteClient
from reconciler.core.expiry import Dated, as_of
from reconciler.core.planning import PlanOptions, RecordChange
from reconciler.core.records import Records
from reconciler.core.users import Resolution, UserDirectory
from reconciler.engine.apply.pending import may_still_land, wait_for_landing
from reconciler.engine.planning.diff import Comparison, compare
from reconciler.engine.planning.plan import Plan, PlanContext
from reconciler.engine.planning.plan_key import PlanSecret
from reconciler.engine.planning.planner import build_plan
from reconciler.engine.read.identities import settle
from reconciler.engine.read.live import LiveReader, Progress
from reconciler.engine.read.scope import Scope
from reconciler.engine.read.site_read import read_site
from reconciler.engine.read.targets import select
from reconciler.engine.read.wanted import Wanted
from reconciler.model import DesiredSite, LiveSite
from reconciler.state.backend import Holder, RecordStore


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
    dated: Dated | None = None  # the day's expiries: what ended, what ends soon


async def observe(
    desired: DesiredSite,
    site: OpenSite,
    records: Records,
    options: PlanOptions,
    reader: LiveReader | None = None,
) -> Observation:
    """Select, resolve names, read, settle identities and compare, in that order (see the
    module's docstring). ``reader``: one whose lists may already be on their way
    (``LiveReader.head_start``)."""
    reader = reader or LiveReader(site.client, site.progress)
    if may_still_land(records, time.time()):
        # The lists sent ahead may have been answered before those writes landed, even when
        # the wait's own check finds them landed at once: read the site again after it.
        await reader.drop_head_start()
    waited = await wait_for_landing(site.client, records)
    day = options.day()
    dated = as_of(desired, day, preview=options.at is not None and day != clock.today())
    desired = dated.site
    scope, notices = select(desired, records, options)
    wanted = Wanted.of(desired)
    wall, cpu = time.perf_counter(), time.process_time()
    live, scope = await read_site(reader, wanted, records, scope)
    seen = compare_live(desired, live, records, read=ReadTimes.since(wall, cpu), scope=scope)
    return replace(_with_notices(seen, *notices, *([waited] if waited else [])), dated=dated)


def compare_live(
    desired: DesiredSite,
    live: LiveSite,
    records: Records,
    *,
    read: ReadTimes,
    scope: Scope | None = None,
) -> Observation:
    """Settle identities and compare a read of the site with ``desired`` (its touched part,
    with a ``scope``)."""
    known = settle(desired, live, records, scope)
    comparison = compare(known.compared, live, known.base, known.resolution)
    if scope is not None:  # a partial read cannot tell unmanaged objects from untouched ones
        comparison = replace(comparison, unmanaged=())
    return Observation(
        known.compared,
        live,
        known.records,
        known.directory,
        known.resolution,
        comparison,
        scope,
        known.learnt,
        known.notices,
        read,
        known.record_changes,
    )


def _with_notices(seen: Observation, *notices: str) -> Observation:
    return replace(seen, notices=(*seen.notices, *notices))


def created_now() -> str:
    """When a plan is made, to the microsecond: a plan's checksum is its identity (a saved
    plan runs once, ``Records.plan_runs``), and two plans of the same changes made within
    one second -- add a member, remove them, add them again, as a script or a quick
    reviewer does -- would otherwise be one plan, the third refused as already applied."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def _context(
    manifest: LoadedManifest,
    site: OpenSite,
    scope: Scope | None,
    snapshot: Mapping[str, Any] | None,
) -> PlanContext:
    return PlanContext(
        site=site.store.site,
        created_at=created_now(),
        tool_version=__version__,
        manifest_files=manifest.desired.files,
        manifest_digest=manifest.digest,
        desired_site=manifest.desired,  # its snapshot: ``snapshot``, or made when needed
        state=site.store.location,
        scope=None if scope is None else scope.to_data(),
        made_snapshot=snapshot,
    )


def _no_records_notice(seen: Observation, site: OpenSite) -> list[str]:
    """Without records, removals, prunes and group members cannot be judged: say so first."""
    present = any(d.status == "present" for d in seen.comparison.all())
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
    *,
    snapshot: Mapping[str, Any] | None = None,
) -> Plan:
    """The plan for an observation of the site (nothing is read or saved). ``snapshot``:
    the manifest's, when it was made while the site was read."""
    return build_plan(
        seen.comparison,
        seen.live,
        seen.records,
        seen.directory,
        manifest.desired.policy,
        options,
        _context(manifest, site, seen.scope, snapshot),
        (*seen.notices, *_no_records_notice(seen, site)),
        warnings,
        seen.record_changes,
        seen.dated,
    )
