"""The engine's jobs end to end: plan, apply (a manifest or a saved plan), drift, adopt,
forget and export. The CLI parses its arguments, calls one of these and renders the result;
the test harness calls the same functions.

Each job runs the one-way flow: records + live read -> compare -> plan -> execute -> records.
Reading jobs (``make_plan``, ``drift``, ``export``) never change the records; changing jobs
take the site's lock and save explicitly (``ledger``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol

import structlog

from reconciler.engine import ledger
from reconciler.engine.bookkeeping import declared_events, reconciled_event
from reconciler.engine.drift import DriftReport, drift_report
from reconciler.engine.executor import ApplyReport, Executor, Outcome
from reconciler.engine.live import LiveReader
from reconciler.engine.observe import Manifest, Observation, Site, UnknownUsers, observe, plan_from
from reconciler.engine.pending import settle
from reconciler.engine.plan import Plan, PlanOptions
from reconciler.engine.plan_file import PlanFile, seal
from reconciler.engine.plan_key import PlanSecret, sealing_key
from reconciler.engine.policy import recorded_policy, strictest
from reconciler.engine.record_changes import record_events
from reconciler.engine.records import (
    Event,
    Forgotten,
    PlanApplied,
    PlanProgress,
    PolicyApplied,
    Records,
    reduce,
)
from reconciler.engine.renames import RecordMoved
from reconciler.engine.safety import RunCheck
from reconciler.engine.saved import refuse_applied_again, still_needed, trusted_plan
from reconciler.engine.snapshot import desired_from_data, policy_to_data
from reconciler.errors import ReconcilerError, RefusedForSafety, StateError
from reconciler.identity import lookup
from reconciler.model import DesiredSite, Policy
from reconciler.state.backend import Holder, LockLost, RecordStore

if TYPE_CHECKING:
    # Imported where used: ``plan`` and ``apply`` start faster without them (issue 14).
    from reconciler.engine.adopt import Adoption
    from reconciler.engine.export import Export

log = structlog.get_logger("reconciler.engine")


class Review(Protocol):
    """How apply shows a plan and asks for approval (the CLI prompts; tests approve)."""

    def show(self, plan: Plan) -> None: ...

    def approve(self, plan: Plan) -> None:
        """Return to go ahead; raise ``RefusedForSafety`` to stop."""


class AutoApprove:
    """Shows nothing, approves everything: pipelines with ``--auto-approve``, and tests."""

    def show(self, plan: Plan) -> None:
        pass

    def approve(self, plan: Plan) -> None:
        pass


@dataclass(frozen=True, slots=True)
class ApplyResult:
    plan: Plan
    report: ApplyReport | None  # None: no API call was to be made
    learnt: tuple[str, ...] = ()
    records_changed: int = 0  # the plan's record changes this apply saved

    @property
    def complete(self) -> bool:
        return self.report is None or self.report.complete


# --- reading --------------------------------------------------------------------------------


async def make_plan(manifest: Manifest, site: Site, options: PlanOptions) -> Plan:
    """Read the site and plan the changes that make it match the manifest; nothing is saved.

    Logs ``plan_timings`` (info): where a plan's time goes -- waiting for the site versus the
    tool's own CPU -- is what a benchmark or a slow pipeline needs to know.
    """
    startup_cpu = time.process_time()
    started, calls_before = time.perf_counter(), site.client.stats.total
    reading = ledger.read(site.store)
    seen = await observe(manifest.desired, site, reading.records, options)
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


async def drift(manifest: Manifest, site: Site, options: PlanOptions | None = None) -> DriftReport:
    """What differs between the site and the manifest, by category: a full read, unless
    ``options`` target some objects (``--target``/``--exclude``)."""
    return drift_report(await make_plan(manifest, site, options or PlanOptions()))


def show_saved(plan_file: PlanFile, store: RecordStore, secret: PlanSecret | None) -> Plan:
    """A saved plan to print again (``reconciler show``): its seal checked as apply checks
    it, against the records alone; the site is never contacted."""
    return trusted_plan(plan_file, store, secret)


def save_plan(plan: Plan, site: Site) -> str:
    """The sealed plan file's text: only these records' holders can make one apply accepts."""
    key = sealing_key(site.store, site.plan_secret, create=True)
    assert key is not None  # created on first use
    return seal(plan, key)


# --- applying -------------------------------------------------------------------------------


async def apply_manifest(
    manifest: Manifest,
    site: Site,
    options: PlanOptions,
    review: Review,
    on_progress: Callable[[Outcome], None] = lambda outcome: None,
) -> ApplyResult:
    """Plan under the lock, show the plan, ask, and carry it out."""
    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        seen = await observe(manifest.desired, site, state.records, options)
        plan = plan_from(manifest, site, seen, options)
        review.show(plan)
        learnt = (*state.learnt, *seen.learnt)
        if not plan.actions:
            _save_without_writes(state, seen, plan, manifest.desired)
            return ApplyResult(plan, None, learnt, len(plan.changed_records))
        plan.raise_if_unsafe(options.force)
        review.approve(plan)
        report = await _execute(
            plan, plan.checksum, manifest.desired, site, state, seen, on_progress
        )
    return ApplyResult(plan, report, learnt, len(plan.changed_records))


async def apply_saved(
    plan_file: PlanFile,
    site: Site,
    overrides: PlanOptions,
    review: Review,
    on_progress: Callable[[Outcome], None] = lambda outcome: None,
    *,
    job_manifest: Manifest | None = None,
) -> ApplyResult:
    """Apply a saved plan, once, and only the actions the site still needs exactly as saved.

    ``overrides``: ``force`` and ``assume_no_groups`` given to apply add to the plan's own.
    The plan runs under the strictest of its own policy and ``job_manifest``'s (the manifest
    the apply job was given), else the records' last applied one (``policy``).
    """
    saved = trusted_plan(plan_file, site.store, site.plan_secret)
    try:
        desired = desired_from_data(saved.context.desired or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise RefusedForSafety(f"{plan_file.origin} is damaged ({exc}).") from None
    options = PlanOptions(
        saved.options.replace,
        saved.options.force or overrides.force,
        saved.options.assume_no_groups or overrides.assume_no_groups,
        saved.options.changed,
        saved.options.targets,
        saved.options.excludes,
    )
    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        desired, stricter = _under_strictest_policy(desired, job_manifest, state.records, site)
        manifest = Manifest(desired, saved.context.manifest_digest)
        if saved.checksum in state.records.applied_plans:
            refuse_applied_again(saved, state.records, job_manifest_files(job_manifest))
        seen = await observe(desired, site, state.records, options)
        plan = still_needed(
            saved,
            plan_from(manifest, site, seen, options),
            seen,
            desired,
            stricter=stricter,
            manifest_files=job_manifest.desired.files if job_manifest else None,
        )
        review.show(plan)
        plan.raise_if_unsafe(overrides.force)
        learnt = (*state.learnt, *seen.learnt)
        if not plan.actions:
            # Only the records change (or nothing): saved exactly as an apply of the
            # manifest saves them, and the plan is used up like any other.
            claim = saved.checksum if plan.changed_records else None
            _save_without_writes(state, seen, plan, desired, claim)
            return ApplyResult(plan, None, learnt, len(plan.changed_records))
        review.approve(plan)
        report = await _execute(plan, saved.checksum, desired, site, state, seen, on_progress)
    return ApplyResult(plan, report, learnt, len(plan.changed_records))


def job_manifest_files(job_manifest: Manifest | None) -> tuple[str, ...] | None:
    return job_manifest.desired.files if job_manifest else None


def _under_strictest_policy(
    desired: DesiredSite, job_manifest: Manifest | None, records: Records, site: Site
) -> tuple[DesiredSite, str]:
    """``desired`` under the strictest of its own policy and the one the pipeline vouches for:
    the manifest the apply job was given (the merged repository: a relaxation made there is
    legitimate), else the policy of the records' last apply. When that is stricter than the
    plan's own, also a line saying so."""
    if job_manifest is not None:
        vouched: Policy | None = job_manifest.desired.policy
    else:
        vouched = recorded_policy(records.policy, site.store.location)
    policy = strictest([desired.policy, *([vouched] if vouched else [])])
    if policy == desired.policy:
        return desired, ""
    where = "the manifest given to apply" if job_manifest else "the last apply"
    note = (
        f"the policy of {where} is stricter than the one the plan carries, and a plan file "
        "cannot weaken it"
        + (
            ""
            if job_manifest
            else " (to change the policy, give apply the merged manifest: "
            "reconciler apply PLAN.json MANIFEST)"
        )
    )
    return replace(desired, policy=policy), note


async def _execute(
    plan: Plan,
    checksum: str,
    desired: DesiredSite,
    site: Site,
    state: ledger.LockedRecords,
    seen: Observation,
    on_progress: Callable[[Outcome], None],
) -> ApplyReport:
    """Carry out ``plan`` and save the records, whatever happens on the way.

    The plan is claimed first (saved as applied, with what planning settled), so no runner
    can apply it again; the journal then builds on that version, and the final save folds
    this apply's results in and clears the journal. If the process dies in between, the next
    lock holder folds the journal instead.
    """
    claim = [
        PlanApplied(checksum, len(plan.actions)),
        PolicyApplied(policy_to_data(desired.policy)),
    ]
    state.save(
        reduce(seen.records, [*record_events(plan.changed_records), *claim]),
        f"apply started: {_counts(plan)}",
        plan=checksum,
    )
    executor = Executor(
        site.client,
        state.records,
        state.journal(checksum),
        RunCheck(desired, plan.options, seen.live.caller_id),
        on_progress,
        before_ids=(user.id for user in seen.live.users),
        groups_before=(group.id for group in seen.live.groups),
    )
    report: ApplyReport | None = None
    journal_failed = False
    try:
        report = await executor.run(plan.actions)
    except LockLost:
        journal_failed = True  # every save is refused now; the next holder folds the journal
        raise
    except StateError as exc:
        # No final save: it would clear the journal, whose entries for the writes under way
        # are all the next apply has to settle them by. The journal stays, the lock lapses.
        journal_failed = True
        done_writes = sum(1 for status in executor.status.values() if status == "done")
        raise StateError(
            f"The records could not be written during apply ({exc.message}), so it stopped "
            f"after {done_writes} completed write(s): no write is ever sent without its "
            "journal entry.",
            hint="Run apply again once the records can be reached: the journal keeps every "
            "write that was under way, and the next apply (on any runner) reads the site "
            "before sending any of them again.",
        ) from None
    finally:
        if not journal_failed:
            _final_save(executor, desired, seen, plan, report, state, checksum)
    return report


def _final_save(
    executor: Executor,
    desired: DesiredSite,
    seen: Observation,
    plan: Plan,
    report: ApplyReport | None,
    state: ledger.LockedRecords,
    checksum: str,
) -> None:
    """Fold this apply's results in and save, clearing the journal (folded by this save)."""
    done = executor.records
    statuses = list(executor.status.values())
    ran = PlanProgress(checksum, statuses.count("done"), statuses.count("unknown"))
    final = reduce(done, [*declared_events(desired, done, report), ran])
    if report is not None:
        final = reduce(final, [reconciled_event(seen, plan, final, desired, report)])
    summary = _report_line(report) if report is not None else "apply interrupted"
    state.save(final, summary, plan=checksum)


def _save_without_writes(
    state: ledger.LockedRecords,
    seen: Observation,
    plan: Plan,
    desired: DesiredSite,
    claim: str | None = None,
) -> None:
    """An apply with no API call to make still saves the plan's record changes and what it
    learnt: settled writes, declaring files, and what the site now matches (for scoped
    plans); only if anything changed. ``claim``: the checksum of a saved plan this uses up."""
    claimed: list[Event] = [PlanApplied(claim, 0)] if claim else []
    records = reduce(seen.records, [*record_events(plan.changed_records), *claimed])
    records = reduce(records, declared_events(desired, records))
    records = reduce(records, [reconciled_event(seen, plan, records, desired, None)])
    if records != state.records or state.journal_pending:
        summary = (
            f"records only: {len(plan.changed_records)} record change(s)"
            if plan.changed_records
            else "no changes; records brought up to date"
        )
        state.save(records, summary, plan=claim)


def _counts(plan: Plan) -> str:
    counts = plan.summary
    return (
        f"{counts['create']} to create, {counts['change']} to change, "
        f"{counts['delete']} to delete ({counts['api_calls']} calls)"
    )


def _report_line(report: ApplyReport) -> str:
    return (
        f"apply {'complete' if report.complete else 'incomplete'}: {report.count('done')} done, "
        f"{report.count('failed')} failed, {report.count('skipped')} skipped, "
        f"{report.count('unknown')} unknown"
    )


# --- records without the site's help --------------------------------------------------------


async def adopt(manifest: Manifest, site: Site) -> Adoption:
    """Record the declared objects that exist on the site as managed; the site is unchanged."""
    from reconciler.engine.adopt import adoption_events

    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        seen = await observe(manifest.desired, site, state.records, PlanOptions())
        adoption, events = adoption_events(seen.comparison, seen.records)
        records = reduce(seen.records, events)
        records = reduce(records, declared_events(manifest.desired, records))
        if records != state.records or state.journal_pending:
            state.save(records, f"adopted {len(adoption.adopted)} object(s)")
    return adoption


def forget(
    store: RecordStore,
    holder: Holder,
    kind: Literal["workspace", "group", "user"],
    name: str,
    *,
    wait_seconds: float = 0.0,
) -> None:
    """Drop the record of one object (the site is not changed)."""
    with ledger.locked(store, holder, wait_seconds=wait_seconds) as state:
        recorded = _recorded(state.records, kind, name, store)
        state.save(reduce(state.records, [Forgotten(kind, recorded)]), f'forgot {kind} "{name}"')


def _recorded(
    records: Records, kind: Literal["workspace", "group", "user"], name: str, store: RecordStore
) -> str:
    """How the records spell ``name`` (names are compared as the site compares them)."""
    found = lookup(getattr(records, f"{kind}s"), kind, name)
    if found is None:
        raise ReconcilerError(
            f'No {kind} "{name}" is recorded for {store.site} in {store.location}.',
            hint="`reconciler state show` lists what is recorded.",
        )
    return found[0]


def move(
    store: RecordStore,
    holder: Holder,
    kind: Literal["workspace", "group", "user"],
    old: str,
    new: str,
    *,
    wait_seconds: float = 0.0,
) -> None:
    """Move the record of ``old`` to ``new`` (``state mv``): the same site object under the
    manifest's new name. One saved version, under the lock; the site is not changed."""
    with ledger.locked(store, holder, wait_seconds=wait_seconds) as state:
        table = getattr(state.records, f"{kind}s")
        recorded = _recorded(state.records, kind, old, store)
        taken = lookup(table, kind, new)
        if taken is not None and (taken[0] != recorded or new == recorded):
            raise ReconcilerError(
                f'A {kind} "{taken[0]}" is recorded already (ID {taken[1].id}): a record cannot '
                "move onto another one.",
                hint="If that record is wrong, drop it first: "
                f'reconciler state forget {kind} "{taken[0]}"',
            )
        moved = reduce(state.records, [RecordMoved(kind, recorded, new)])
        state.save(moved, f'moved the record of {kind} "{old}" to "{new}"')


async def export(site: Site, *, users: bool = False) -> Export:
    """A manifest of the live site, with the records' facts where the site cannot tell."""
    from reconciler.engine.export import export_site

    records = ledger.read(site.store).records
    live = await LiveReader(site.client, site.progress).read(None)
    records, _ = settle(records, live)
    return export_site(live, records, site.store.site, users=users)


__all__ = [
    "ApplyResult",
    "AutoApprove",
    "Manifest",
    "Review",
    "Site",
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
