"""The engine's three jobs end to end: plan, apply (a fresh or a saved plan), drift.

Each function takes what it needs explicitly (a client, a state store, options) and runs the
one-way flow: records + live read -> compare -> plan -> execute -> records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from reconciler import __version__
from reconciler.api.client import SiteClient
from reconciler.engine.adopt import Adoption, adopt
from reconciler.engine.apply import ApplyReport, Executor, Outcome
from reconciler.engine.diff import Comparison, compare
from reconciler.engine.export import Export, export_site
from reconciler.engine.facts import describe_changes, detailed_names, fingerprints
from reconciler.engine.journal import Journal, discard, recover
from reconciler.engine.live import LiveReader, Progress
from reconciler.engine.pending import settle
from reconciler.engine.plan import Plan
from reconciler.engine.planner import PlanContext, PlanOptions, build_plan
from reconciler.engine.state import SiteState, StateStore
from reconciler.engine.users import UserDirectory, resolve_references
from reconciler.errors import ManifestError, RefusedForSafety
from reconciler.model import DesiredSite, LiveSite, LiveUser, UserRef

log = structlog.get_logger("reconciler.engine")


class UnknownUsers(ManifestError):
    """The manifest names users the site does not have."""

    def __init__(self, refs: tuple[UserRef, ...]) -> None:
        lines = [f'{ref.source}: no user on the site is "{ref.text}"' for ref in refs]
        super().__init__(
            f"{len(refs)} user reference(s) match no user on the site:\n  " + "\n  ".join(lines),
            hint="Use the username, e-mail address or numeric ID of an existing user.",
        )
        self.refs = refs


@dataclass(frozen=True, slots=True)
class Site:
    """An open site: the client to reach it and the store of what the tool recorded."""

    client: SiteClient
    store: StateStore
    progress: Progress | None = None


def load_state(store: StateStore) -> SiteState:
    """The records, with any journal of an interrupted apply folded in (in memory only)."""
    state = store.load()
    recover(store, state)
    return state


def _context(desired: DesiredSite, site: Site, digest: str) -> PlanContext:
    return PlanContext(
        site=site.store.site,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        tool_version=__version__,
        manifest_files=desired.files,
        manifest_digest=digest,
    )


@dataclass(frozen=True, slots=True)
class Observation:
    """A fresh read of the site compared with the manifest and the records."""

    live: LiveSite
    directory: UserDirectory
    comparison: Comparison


async def observe(desired: DesiredSite, site: Site, state: SiteState) -> Observation:
    """Read the site and compare it with ``desired``; ``state`` is settled in memory."""
    return compare_live(desired, await read_live(desired, site, state), state)


async def read_live(desired: DesiredSite, site: Site, state: SiteState) -> LiveSite:
    """The live site, with the details of the workspaces ``desired`` declares."""

    def fallback(users: tuple[LiveUser, ...]) -> set[int]:
        ids = set(resolve_references(desired, UserDirectory.of(users)).ids.values())
        return ids | {m for ws in state.workspaces.values() for m in ws.members}

    return await LiveReader(site.client, site.progress).read(
        [ws.name for ws in desired.workspaces], fallback
    )


def compare_live(desired: DesiredSite, live: LiveSite, state: SiteState) -> Observation:
    """Compare a read of the site with ``desired``; ``state`` is settled in memory."""
    settle(state, live)
    directory = UserDirectory.of(live.users)
    resolution = resolve_references(desired, directory)
    if resolution.unknown:
        raise UnknownUsers(resolution.unknown)
    return Observation(live, directory, compare(desired, live, state, resolution))


async def make_plan(
    desired: DesiredSite,
    site: Site,
    state: SiteState,
    options: PlanOptions,
    manifest_digest: str = "",
) -> Plan:
    """Read the site and plan the changes that make it match ``desired`` (nothing is saved).

    Logs ``plan_timings`` (info): where a plan's time goes -- waiting for the site versus the
    tool's own CPU -- is what a benchmark or a slow pipeline needs to know.
    """
    startup_cpu = time.process_time()  # start-up, imports, manifest: spent before the plan
    started, calls_before = time.perf_counter(), site.client.stats.total
    live = await read_live(desired, site, state)
    read_s, read_cpu = time.perf_counter() - started, time.process_time() - startup_cpu
    seen = compare_live(desired, live, state)
    plan = build_plan(
        seen.comparison,
        seen.live,
        state,
        seen.directory,
        desired.policy,
        options,
        _context(desired, site, manifest_digest),
    )
    log.info(
        "plan_timings",
        startup_cpu_s=round(startup_cpu, 3),
        read_s=round(read_s, 3),
        read_cpu_s=round(read_cpu, 3),
        compare_plan_cpu_s=round(time.process_time() - startup_cpu - read_cpu, 3),
        plan_s=round(time.perf_counter() - started, 3),
        read_calls=site.client.stats.total - calls_before,
        actions=len(plan.actions),
    )
    return plan


async def adopt_manifest(desired: DesiredSite, site: Site, state: SiteState) -> Adoption:
    """Record the declared objects that exist on the site as managed; the site is unchanged."""
    adoption = adopt((await observe(desired, site, state)).comparison, state)
    site.store.save(state)
    return adoption


async def export_site_manifest(site: Site) -> Export:
    """A manifest of the live site, with the records' facts where the site cannot tell."""
    state = load_state(site.store)
    live = await LiveReader(site.client, site.progress).read(None)
    settle(state, live)
    return export_site(live, state, site.store.site)


def begin_apply(store: StateStore) -> SiteState:
    """Under the apply lock: fold an interrupted apply's journal into the saved records."""
    state = load_state(store)
    if store.journal_file.exists():
        store.save(state)
        discard(store)
    return state


async def check_saved_plan(plan: Plan, site: Site, state: SiteState, force: bool) -> None:
    """Refuse a saved plan made for another site, already applied, or gone stale."""
    if plan.site != site.store.site:
        raise RefusedForSafety(
            f"This plan was made for {plan.site}, not for {site.store.site}.",
            hint="Apply it to the site it was made for, or make a new plan for this site.",
        )
    if plan.checksum in state.applied_plans:
        raise RefusedForSafety(
            "This plan has already been applied; a saved plan can be applied once.",
            hint="Make a new plan to see what, if anything, is left to change.",
        )
    expects = plan.data["expects"]
    user_ids = [int(uid) for uid in expects["users"]]
    live = await LiveReader(site.client, site.progress).read(detailed_names(expects))
    settle(state, live)
    now = fingerprints(live, state, expects["workspaces"], expects["groups"], user_ids)
    changed = describe_changes(expects, now)
    if changed:
        raise RefusedForSafety(
            "The plan is stale: the site changed since it was made.\n  - " + "\n  - ".join(changed),
            hint="Make a new plan and review it.",
        )
    check_guards(plan, force)


def check_guards(plan: Plan, force: bool) -> None:
    if plan.refusals and not force:
        raise RefusedForSafety(
            "Apply refuses this plan: " + "; ".join(plan.refusals) + ".",
            hint="Review the plan; if it is what you want, run apply again with --force.",
        )


async def execute(
    plan: Plan,
    site: Site,
    state: SiteState,
    on_progress: Callable[[Outcome], None] = lambda outcome: None,
) -> ApplyReport:
    """Carry out ``plan`` and save the records, whatever happens on the way.

    The records are saved first: what planning settled in memory (writes an interrupted
    apply left pending) must be on disk before this apply's journal, which builds on it,
    can be folded into them after a crash.
    """
    site.store.save(state)
    journal = Journal(site.store.journal_file)
    try:
        report = await Executor(site.client, state, journal, on_progress).run(plan)
        state.applied_plans.append(plan.checksum)
    finally:
        journal.close()
        site.store.save(state)
    discard(site.store)
    return report
