"""The apply jobs: of a manifest, and of a saved plan.

Each plans under the site's lock, shows the plan and asks (``Approval``), then carries it out
journaled (``executor``) and saves the records whatever happens on the way. A saved plan is
a proposal: made again against the site now, and only the saved actions it still contains
run, under the strictest policy vouched for (``_under_strictest_policy``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Protocol

from reconciler import aio
from reconciler.core.actions import Done
from reconciler.core.planning import PlanOptions
from reconciler.core.records import (
    Event,
    PlanApplied,
    PlanProgress,
    PolicyApplied,
    Records,
    reduce,
)
from reconciler.engine.apply.bookkeeping import declared_events, reconciled_event
from reconciler.engine.apply.executor import ActionOutcome, ApplyReport, Executor
from reconciler.engine.planning.manifest_snapshot import (
    desired_from_data,
    desired_to_data_meanwhile,
)
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_file import PlanFile
from reconciler.engine.planning.policy import strictest
from reconciler.engine.planning.safety import RunCheck
from reconciler.engine.planning.saved import refuse_applied_again, still_needed, trusted_plan
from reconciler.engine.read.live import LiveReader
from reconciler.engine.read.observe import LoadedManifest, Observation, OpenSite, observe, plan_from
from reconciler.engine.read.scope import Key, digests_meanwhile
from reconciler.engine.records import ledger
from reconciler.engine.records.changes import record_events
from reconciler.errors import RefusedForSafety, StateError
from reconciler.model import DesiredSite, Policy
from reconciler.state.backend import LockLost


class Approval(Protocol):
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


async def apply_manifest(
    manifest: LoadedManifest,
    site: OpenSite,
    options: PlanOptions,
    review: Approval,
    on_progress: Callable[[ActionOutcome], None] = lambda outcome: None,
) -> ApplyResult:
    """Plan under the lock, show the plan, ask, and carry it out."""
    reader = LiveReader(site.client, site.progress)
    async with (
        _locked(site, reader, options) as state,
        aio.meanwhile(desired_to_data_meanwhile(manifest.desired)) as snapshot,
    ):
        seen = await observe(manifest.desired, site, state.records, options, reader)
        plan = plan_from(manifest, site, seen, options, snapshot=await snapshot)
        review.show(plan)
        learnt = (*state.learnt, *seen.learnt)
        wanted = wanted_now(seen, manifest.desired)
        if not plan.actions:
            _save_without_writes(state, seen, plan, wanted)
            return ApplyResult(plan, None, learnt, len(plan.changed_records))
        plan.raise_if_unsafe(options.force)
        review.approve(plan)
        report = await _execute(plan, plan.checksum, wanted, site, state, seen, on_progress)
    return ApplyResult(plan, report, learnt, len(plan.changed_records))


async def apply_saved(
    plan_file: PlanFile,
    site: OpenSite,
    overrides: PlanOptions,
    review: Approval,
    on_progress: Callable[[ActionOutcome], None] = lambda outcome: None,
    *,
    job_manifest: LoadedManifest | None = None,
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
        expired_only=saved.options.expired_only,
    )
    reader = LiveReader(site.client, site.progress)
    async with _locked(site, reader, options) as state:
        desired, stricter = _under_strictest_policy(desired, job_manifest, state.records, site)
        manifest = LoadedManifest(desired, saved.context.manifest_digest)
        if saved.checksum in state.records.applied_plans:
            refuse_applied_again(saved, state.records, job_manifest_files(job_manifest))
        seen = await observe(desired, site, state.records, options, reader)
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
            _save_without_writes(state, seen, plan, wanted_now(seen, desired), claim)
            return ApplyResult(plan, None, learnt, len(plan.changed_records))
        review.approve(plan)
        wanted = wanted_now(seen, desired)
        report = await _execute(plan, saved.checksum, wanted, site, state, seen, on_progress)
    return ApplyResult(plan, report, learnt, len(plan.changed_records))


@asynccontextmanager
async def _locked(
    site: OpenSite, reader: LiveReader, options: PlanOptions
) -> AsyncIterator[ledger.LockedRecords]:
    """The site's lock and records; a whole-site apply's lists sent once the lock is held,
    to travel while the records are read (as a plan's do), and dropped if not read."""
    head_start = reader.head_start if options.reads_whole_site else lambda: None
    try:
        async with ledger.locked_meanwhile(
            site.store, site.holder, wait_seconds=site.lock_wait, meanwhile=head_start
        ) as state:
            yield state
    finally:
        await reader.drop_head_start()


def wanted_now(seen: Observation, desired: DesiredSite) -> DesiredSite:
    """The manifest as it wants the site on the plan's day, its expired entries left out
    (``core/expiry.py``): what the checks at the moment each write runs, and the records'
    digests, go by -- an expired account is no longer declared, so it may be deleted."""
    return seen.dated.site if seen.dated is not None else desired


def job_manifest_files(job_manifest: LoadedManifest | None) -> tuple[str, ...] | None:
    return job_manifest.desired.files if job_manifest else None


def _under_strictest_policy(
    desired: DesiredSite, job_manifest: LoadedManifest | None, records: Records, site: OpenSite
) -> tuple[DesiredSite, str]:
    """``desired`` under the strictest of its own policy and the one the pipeline vouches for:
    the manifest the apply job was given (the merged repository: a relaxation made there is
    legitimate), else the policy of the records' last apply. When that is stricter than the
    plan's own, also a line saying so."""
    if job_manifest is not None:
        vouched: Policy | None = job_manifest.desired.policy
    else:
        vouched = records.policy
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
    site: OpenSite,
    state: ledger.LockedRecords,
    seen: Observation,
    on_progress: Callable[[ActionOutcome], None],
) -> ApplyReport:
    """Carry out ``plan`` and save the records, whatever happens on the way.

    The plan is claimed first (saved as applied, with what planning settled), so no runner
    can apply it again; the journal then builds on that version, and the final save folds
    this apply's results in and clears the journal. If the process dies in between, the next
    lock holder folds the journal instead.
    """
    claim = [
        PlanApplied(checksum, len(plan.actions)),
        PolicyApplied(desired.policy),
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
    made: Mapping[Key, str] = {}
    journal_failed = False
    try:
        async with aio.meanwhile(digests_meanwhile(seen.desired)) as digesting:
            report = await executor.run(plan.actions)
            made = await digesting
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
            _final_save(executor, desired, seen, plan, report, state, checksum, made)
    return report


def _final_save(
    executor: Executor,
    desired: DesiredSite,
    seen: Observation,
    plan: Plan,
    report: ApplyReport | None,
    state: ledger.LockedRecords,
    checksum: str,
    made: Mapping[Key, str],
) -> None:
    """Fold this apply's results in and save, clearing the journal (folded by this save).
    ``made``: the digests made while the writes travelled."""
    done = executor.records
    statuses = list(executor.status.values())
    ended = (end for e in executor.events if isinstance(e, Done) for end in e.action.ended_access())
    ran = PlanProgress(
        checksum, statuses.count("done"), statuses.count("unknown"), tuple(dict.fromkeys(ended))
    )
    final = reduce(done, [*declared_events(desired, done, report), ran])
    if report is not None:
        final = reduce(final, [reconciled_event(seen, plan, final, desired, report, made)])
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
