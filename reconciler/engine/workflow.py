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
from dataclasses import dataclass, field
from typing import Literal, Protocol

import structlog

from reconciler import __version__
from reconciler.api.client import SiteClient
from reconciler.engine import ledger
from reconciler.engine.adopt import Adoption, adoption_events
from reconciler.engine.diff import Comparison, compare
from reconciler.engine.drift import drift_report
from reconciler.engine.executor import ApplyReport, Executor, Outcome
from reconciler.engine.export import Export, export_site
from reconciler.engine.facts import describe_changes, fingerprints
from reconciler.engine.live import LiveReader, Progress
from reconciler.engine.pending import settle
from reconciler.engine.plan import Plan, PlanContext, PlanOptions
from reconciler.engine.plan_file import PlanFile, seal, unseal
from reconciler.engine.planner import build_plan
from reconciler.engine.records import Forgotten, PlanApplied, Records, SourceRecorded, reduce
from reconciler.engine.safety import RunCheck, guard_problems
from reconciler.engine.snapshot import desired_from_data, desired_to_data
from reconciler.engine.users import Resolution, UserDirectory, resolve_references
from reconciler.errors import ManifestError, ReconcilerError, RefusedForSafety
from reconciler.model import DesiredSite, LiveSite, LiveUser
from reconciler.state.backend import Holder, SiteRecords

log = structlog.get_logger("reconciler.engine")


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
class Site:
    """An open site: the client to reach it, its records, and who is acting."""

    client: SiteClient
    store: SiteRecords
    holder: Holder
    progress: Progress | None = None
    lock_wait: float = 0.0


@dataclass(frozen=True, slots=True)
class Manifest:
    """A loaded manifest and the digest of the files it was read from."""

    desired: DesiredSite
    digest: str = ""


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
    report: ApplyReport | None  # None: there was nothing to do
    learnt: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.report is None or self.report.complete


@dataclass(frozen=True, slots=True)
class Observation:
    """A fresh read of the site compared with the manifest and the (settled) records."""

    live: LiveSite
    records: Records
    directory: UserDirectory
    comparison: Comparison
    learnt: tuple[str, ...] = field(default=())


# --- reading --------------------------------------------------------------------------------


async def read_live(desired: DesiredSite, site: Site, records: Records) -> LiveSite:
    """The live site, with the details of the workspaces ``desired`` declares."""

    def fallback(users: tuple[LiveUser, ...]) -> set[int]:
        ids = set(resolve_references(desired, UserDirectory.of(users)).ids.values())
        return ids | {m for ws in records.workspaces.values() for m in ws.members}

    return await LiveReader(site.client, site.progress).read(
        [ws.name for ws in desired.workspaces],
        fallback,
        who_am_i=bool(desired.users or records.users),
    )


def compare_live(desired: DesiredSite, live: LiveSite, records: Records) -> Observation:
    """Compare a read of the site with ``desired``; pending writes are settled in the copy."""
    records, learnt = settle(records, live)
    directory = UserDirectory.of(live.users)
    resolution = resolve_references(desired, directory)
    if resolution.unknown or resolution.ambiguous:
        raise UnknownUsers(resolution)
    comparison = compare(desired, live, records, resolution)
    return Observation(live, records, directory, comparison, tuple(learnt))


def _context(manifest: Manifest, site: Site) -> PlanContext:
    return PlanContext(
        site=site.store.site,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        tool_version=__version__,
        manifest_files=manifest.desired.files,
        manifest_digest=manifest.digest,
        desired=desired_to_data(manifest.desired),
        state=site.store.location,
    )


def _notices(seen: Observation, site: Site) -> list[str]:
    """What the plan must say first because it changes how to read everything after it."""
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
    manifest: Manifest,
    site: Site,
    seen: Observation,
    options: PlanOptions,
    warnings: tuple[str, ...] = (),
) -> Plan:
    """The plan for an observation of the site (nothing is read or saved)."""
    desired = manifest.desired
    plan = build_plan(
        seen.comparison,
        seen.live,
        seen.records,
        seen.directory,
        desired.policy,
        options,
        _context(manifest, site),
        _notices(seen, site),
        warnings,
    )
    return plan


async def make_plan(manifest: Manifest, site: Site, options: PlanOptions) -> Plan:
    """Read the site and plan the changes that make it match the manifest; nothing is saved.

    Logs ``plan_timings`` (info): where a plan's time goes -- waiting for the site versus the
    tool's own CPU -- is what a benchmark or a slow pipeline needs to know.
    """
    startup_cpu = time.process_time()
    started, calls_before = time.perf_counter(), site.client.stats.total
    reading = ledger.read(site.store)
    live = await read_live(manifest.desired, site, reading.records)
    read_s, read_cpu = time.perf_counter() - started, time.process_time() - startup_cpu
    seen = compare_live(manifest.desired, live, reading.records)
    plan = plan_from(manifest, site, seen, options, reading.problems)
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


async def drift(manifest: Manifest, site: Site) -> dict[str, object]:
    """What differs between the site and the manifest, by category (nothing is saved)."""
    return drift_report(await make_plan(manifest, site, PlanOptions()))


def save_plan(plan: Plan, site: Site) -> str:
    """The sealed plan file's text: only these records' holders can make one apply accepts."""
    return seal(plan, site.store.plan_key())


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
        live = await read_live(manifest.desired, site, state.records)
        seen = compare_live(manifest.desired, live, state.records)
        plan = plan_from(manifest, site, seen, options)
        review.show(plan)
        learnt = (*state.learnt, *seen.learnt)
        if not plan.has_changes:
            _save_if_changed(state, _declared(manifest.desired, seen.records), "settled records")
            return ApplyResult(plan, None, learnt)
        plan.raise_if_unsafe(options.force)
        review.approve(plan)
        report = await _execute(
            plan, plan.checksum, manifest.desired, site, state, seen, on_progress
        )
    return ApplyResult(plan, report, learnt)


async def apply_saved(
    plan_file: PlanFile,
    site: Site,
    overrides: PlanOptions,
    review: Review,
    on_progress: Callable[[Outcome], None] = lambda outcome: None,
) -> ApplyResult:
    """Apply a saved plan, once, and only the actions the site still needs exactly as saved.

    ``overrides``: ``force`` and ``assume_no_groups`` given to apply add to the plan's own.
    """
    saved = unseal(plan_file, site.store.plan_key(), site.store.location)
    # Guards are computed afresh from what will run: the file's own words are not trusted.
    if saved.site != site.store.site:
        raise RefusedForSafety(
            f"This plan was made for {saved.site}, not for {site.store.site}.",
            hint="Apply it to the site it was made for, or make a new plan for this site.",
        )
    try:
        desired = desired_from_data(saved.context.desired or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise RefusedForSafety(f"{plan_file.origin} is damaged ({exc}).") from None
    manifest = Manifest(desired, saved.context.manifest_digest)
    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        if saved.checksum in state.records.applied_plans:
            raise RefusedForSafety(
                "This plan has already been applied; a saved plan can be applied once.",
                hint="Make a new plan to see what, if anything, is left to change.",
            )
        live = await read_live(desired, site, state.records)
        seen = compare_live(desired, live, state.records)
        options = PlanOptions(
            saved.options.replace,
            saved.options.force or overrides.force,
            saved.options.assume_no_groups or overrides.assume_no_groups,
        )
        plan = _still_needed(saved, plan_from(manifest, site, seen, options), seen, desired)
        review.show(plan)
        plan.raise_if_unsafe(overrides.force)
        if not plan.has_changes:
            return ApplyResult(plan, None, (*state.learnt, *seen.learnt))
        review.approve(plan)
        report = await _execute(plan, saved.checksum, desired, site, state, seen, on_progress)
    return ApplyResult(plan, report, (*state.learnt, *seen.learnt))


def _still_needed(saved: Plan, fresh: Plan, seen: Observation, desired: DesiredSite) -> Plan:
    """The saved plan's actions as the site needs them now, or a refusal naming the others.

    The plan is made again from the saved manifest. Each saved action runs only if the fresh
    plan contains it with the same parameters, and the fresh plan must want nothing more for
    the objects the saved plan touches (what was reviewed is all that happens to them).
    Actions the fresh plan adds for objects the saved plan did not touch are left for the
    next plan: an unrelated change does not make a plan stale.
    """
    fresh_by_id = {action.id: action for action in fresh.actions}
    saved_ids = {action.id for action in saved.actions}
    touched_before = {obj for action in saved.actions for obj in action.touches()}
    lines = [
        f"not needed as saved: {action.summary()}"
        for action in saved.actions
        if (match := fresh_by_id.get(action.id)) is None or match.params() != action.params()
    ]
    lines += [
        f"now also needed: {action.summary()}"
        for action in fresh.actions
        if action.id not in saved_ids and touched_before & set(action.touches())
    ]
    if lines:
        expects = saved.expects
        now = fingerprints(
            seen.live,
            seen.records,
            expects.get("workspaces", {}),
            expects.get("groups", {}),
            [int(uid) for uid in expects.get("users", {})],
        )
        lines += describe_changes(expects, now)
        raise RefusedForSafety(
            "The plan is stale: the site or the records changed since it was made.\n  - "
            + "\n  - ".join(lines),
            hint="Make a new plan and review it.",
        )
    keep = {action.id for action in saved.actions}
    actions = tuple(a for a in fresh.actions if a.id in keep)
    touched = {obj for action in actions for obj in action.touches()}
    informational = ("needs-replacement", "renamed")
    return Plan(
        saved.context,
        saved.options,
        actions,
        tuple(c for c in fresh.changes if c.action in informational or (c.kind, c.name) in touched),
        fresh.kept,
        fresh.unmanaged,
        fresh.unobservable,
        fresh.warnings,
        fresh.notices,
        tuple(
            guard_problems(
                actions,
                seen.records,
                desired.policy,
                saved.context.manifest_files,
                groups_listed=seen.live.groups_listed,
                assume_no_groups=fresh.options.assume_no_groups,
                users=seen.live.users,
                caller_id=seen.live.caller_id,
            )
        ),
        saved.expects,
    )


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
    state.save(
        reduce(seen.records, [PlanApplied(checksum)]),
        f"apply started: {_counts(plan)}",
        plan=checksum,
    )
    executor = Executor(
        site.client,
        state.records,
        state.journal(),
        RunCheck(desired, plan.options, seen.live.caller_id),
        on_progress,
    )
    report: ApplyReport | None = None
    try:
        report = await executor.run(plan.actions)
    finally:
        done = executor.records
        final = reduce(done, _declared(desired, done, report))
        summary = _report_line(report) if report is not None else "apply interrupted"
        state.save(final, summary, plan=checksum)
    return report


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


def _declared(
    desired: DesiredSite, records: Records, report: ApplyReport | None = None
) -> list[SourceRecorded]:
    """Events recording which manifest file declares each recorded object.

    Only for objects whose writes all completed: an object left half-done keeps what it had.
    """
    unfinished: set[tuple[str, str]] = set()
    if report is not None:
        for outcome in report.outcomes:
            if outcome.status != "done":
                unfinished.update(outcome.action.touches())
    events = []
    for kind, objects, table in (
        ("workspace", desired.workspaces, records.workspaces),
        ("group", desired.groups, records.groups),
    ):
        for obj in objects:
            record = table.get(obj.name)
            if record is None or (kind, obj.name) in unfinished:
                continue
            if record.source != obj.source.file:
                events.append(SourceRecorded(kind, obj.name, obj.source.file))  # type: ignore[arg-type]
    return events


def _save_if_changed(
    state: ledger.LockedRecords, events: list[SourceRecorded], summary: str
) -> None:
    """Save what a no-change apply learnt (settled writes, declaring files), if anything."""
    records = reduce(state.records, events)
    if records != state.records or state.journal_pending:
        state.save(records, summary)


# --- records without the site's help --------------------------------------------------------


async def adopt(manifest: Manifest, site: Site) -> Adoption:
    """Record the declared objects that exist on the site as managed; the site is unchanged."""
    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        live = await read_live(manifest.desired, site, state.records)
        seen = compare_live(manifest.desired, live, state.records)
        adoption, events = adoption_events(seen.comparison, seen.records)
        records = reduce(seen.records, events)
        records = reduce(records, _declared(manifest.desired, records))
        if records != state.records or state.journal_pending:
            state.save(records, f"adopted {len(adoption.adopted)} object(s)")
    return adoption


def forget(
    store: SiteRecords,
    holder: Holder,
    kind: Literal["workspace", "group", "user"],
    name: str,
    *,
    wait_seconds: float = 0.0,
) -> None:
    """Drop the record of one object (the site is not changed)."""
    with ledger.locked(store, holder, wait_seconds=wait_seconds) as state:
        records = state.records
        table = {"workspace": records.workspaces, "group": records.groups, "user": records.users}
        if name not in table[kind]:
            raise ReconcilerError(
                f'No {kind} "{name}" is recorded for {store.site} in {store.location}.',
                hint="`reconciler state show` lists what is recorded.",
            )
        state.save(reduce(state.records, [Forgotten(kind, name)]), f'forgot {kind} "{name}"')


async def export(site: Site, *, users: bool = False) -> Export:
    """A manifest of the live site, with the records' facts where the site cannot tell."""
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
    "save_plan",
]
