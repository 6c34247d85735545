"""The engine's jobs end to end: plan, apply (a manifest or a saved plan), drift, adopt,
forget and export. The CLI parses its arguments, calls one of these and renders the result;
the test harness calls the same functions.

Each job runs the one-way flow: records + live read -> compare -> plan -> execute -> records.
Reading jobs (``make_plan``, ``drift``, ``export``, here) never change the records; changing
jobs take the site's lock and save explicitly (``ledger``): the apply jobs are
``applying.py``'s, the jobs on the records alone ``record_jobs.py``'s.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import structlog

from reconciler.core.planning import PlanOptions
from reconciler.engine.apply.applying import (
    ApplyResult,
    Approval,
    AutoApprove,
    apply_manifest,
    apply_saved,
)
from reconciler.engine.apply.pending import settle
from reconciler.engine.drift import DriftReport, drift_report
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_file import PlanFile, seal
from reconciler.engine.planning.plan_key import PlanSecret, sealing_key
from reconciler.engine.planning.saved import trusted_plan
from reconciler.engine.read.identities import UnknownUsers
from reconciler.engine.read.live import LiveReader
from reconciler.engine.read.observe import LoadedManifest, OpenSite, observe, plan_from
from reconciler.engine.records import ledger
from reconciler.engine.records.jobs import adopt, forget, move
from reconciler.state.backend import RecordStore

if TYPE_CHECKING:
    # Imported where used: ``plan`` and ``apply`` start faster without them (issue 14).
    from reconciler.manifest.export import Export

log = structlog.get_logger("reconciler.engine")


# --- reading --------------------------------------------------------------------------------


async def make_plan(manifest: LoadedManifest, site: OpenSite, options: PlanOptions) -> Plan:
    """Read the site and plan the changes that make it match the manifest; nothing is saved.

    Logs ``plan_timings`` (info): where a plan's time goes -- waiting for the site versus the
    tool's own CPU -- is what a benchmark or a slow pipeline needs to know.
    """
    startup_cpu = time.process_time()
    started, calls_before = time.perf_counter(), site.client.stats.total
    reader = LiveReader(site.client, site.progress)
    if options.reads_whole_site:
        reader.head_start()  # the site's lists travel while the records are read
    try:
        reading = await ledger.read_meanwhile(site.store)
        seen = await observe(manifest.desired, site, reading.records, options, reader)
    finally:
        await reader.drop_head_start()
    plan = plan_from(manifest, site, seen, options, reading.problems)
    log.info(
        "plan_timings",
        startup_cpu_s=round(startup_cpu, 3),
        read_s=round(seen.read.wall_s, 3),
        read_cpu_s=round(seen.read.cpu_s, 3),
        compare_plan_cpu_s=round(time.process_time() - startup_cpu - seen.read.cpu_s, 3),
        plan_s=round(time.perf_counter() - started, 3),
        read_calls=site.client.stats.total - calls_before,
        actions=len(plan.actions),
    )
    return plan


async def drift(
    manifest: LoadedManifest, site: OpenSite, options: PlanOptions | None = None
) -> DriftReport:
    """What differs between the site and the manifest, by category: a full read, unless
    ``options`` target some objects (``--target``/``--exclude``)."""
    return drift_report(await make_plan(manifest, site, options or PlanOptions()))


def show_saved(plan_file: PlanFile, store: RecordStore, secret: PlanSecret | None) -> Plan:
    """A saved plan to print again (``reconciler show``): its seal checked as apply checks
    it, against the records alone; the site is never contacted."""
    return trusted_plan(plan_file, store, secret)


def save_plan(plan: Plan, site: OpenSite) -> str:
    """The sealed plan file's text: only these records' holders can make one apply accepts."""
    key = sealing_key(site.store, site.plan_secret, create=True)
    assert key is not None  # created on first use
    return seal(plan, key)


async def export(site: OpenSite, *, users: bool = False) -> Export:
    """A manifest of the live site, with the records' facts where the site cannot tell."""
    from reconciler.manifest.export import export_site

    records = ledger.read(site.store).records
    live = await LiveReader(site.client, site.progress).read(None)
    records, _ = settle(records, live)
    return export_site(live, records, site.store.site, users=users)


__all__ = [
    "ApplyResult",
    "Approval",
    "AutoApprove",
    "LoadedManifest",
    "OpenSite",
    "UnknownUsers",
    "adopt",
    "apply_manifest",
    "apply_saved",
    "drift",
    "export",
    "forget",
    "make_plan",
    "move",
    "save_plan",
    "show_saved",
]
