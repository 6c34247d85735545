"""A saved plan is a proposal: apply runs only what the site still needs, exactly as saved.

At apply time the plan is made again from the manifest the file carries, against the live
site and the records. Each saved action runs only if the fresh plan contains it with the same
parameters, and the fresh plan must want nothing more for the objects the saved plan touches
(what was reviewed is all that happens to them). Actions the fresh plan adds for objects the
saved plan did not touch are left for the next plan: an unrelated change does not make a plan
stale. The guards are computed again from the actions that will run, never read from the file.
"""

from __future__ import annotations

import shlex

from reconciler.core.access import plan_access
from reconciler.core.expiry import Expiries
from reconciler.core.records import Records
from reconciler.engine.planning.facts import describe_changes, refreshed
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_file import PlanFile, unseal
from reconciler.engine.planning.plan_key import PlanSecret, sealing_key
from reconciler.engine.planning.safety import declared_objects, guard_problems
from reconciler.engine.read.observe import Observation
from reconciler.errors import RefusedForSafety
from reconciler.model import DesiredSite
from reconciler.state.backend import RecordStore


def trusted_plan(plan_file: PlanFile, store: RecordStore, secret: PlanSecret | None) -> Plan:
    """The saved plan, once its seal proves these records' holders made it for this site
    (exit 3 otherwise). Both ``apply`` and ``show`` ask this first: a plan shown again is
    the plan apply would run, or nothing."""
    key = sealing_key(store, secret, create=False)
    if key is None:  # never create a key (or a directory) for a plan that cannot be trusted
        raise RefusedForSafety(
            f"{plan_file.origin} was made against other records: there are none at "
            f"{store.location}.",
            hint="Point the tool at the records the plan was made with (--state, "
            "RECONCILER_STATE, or the manifest's site.state), or make the plan again.",
        )
    saved = unseal(plan_file, key, store.location)
    if saved.site != store.site:
        raise RefusedForSafety(
            f"This plan was made for {saved.site}, not for {store.site}.",
            hint="Apply it to the site it was made for, or make a new plan for this site.",
        )
    return saved


def refuse_applied_again(
    saved: Plan, records: Records, manifest_files: tuple[str, ...] | None = None
) -> None:
    """A saved plan runs once: refuse it (exit 3), saying how far its apply got, as the
    records counted it. An apply cut short (a crash, a records outage) left some actions
    undone, and what finishes the work is a new plan, never this one again."""
    run = records.plan_runs.get(saved.checksum)
    if run is not None and run.actions == 0:
        raise RefusedForSafety(
            "This plan has already been applied (it changed only the tool's records); a saved "
            "plan can be applied once.",
            hint="Make a new plan to see what, if anything, is left to change.",
        )
    if run is None or run.done >= run.actions:
        ran = f" ({run.done} of {run.actions} actions ran)" if run is not None else ""
        raise RefusedForSafety(
            f"This plan has already been applied{ran}; a saved plan can be applied once.",
            hint="Make a new plan to see what, if anything, is left to change.",
        )
    files = manifest_files or saved.context.manifest_files
    command = " ".join(["reconciler plan", *(shlex.quote(f) for f in files), "-o plan.json"])
    unknown = (
        f" ({run.unknown} more sent with no answer: the next plan checks the site for them)"
        if run.unknown
        else ""
    )
    raise RefusedForSafety(
        f"This plan was started before and did not finish: {run.done} of {run.actions} "
        f"actions ran; make a new plan to finish the rest{unknown}. A saved plan is applied "
        "once.",
        hint=f"To finish, make a new plan for what is left and review it:\n  {command}",
    )


def still_needed(
    saved: Plan,
    fresh: Plan,
    seen: Observation,
    desired: DesiredSite,
    *,
    stricter: str = "",
    manifest_files: tuple[str, ...] | None = None,
) -> Plan:
    """The saved plan's actions as the site needs them now, or a refusal naming the others;
    with the record changes the site and the manifest call for now (the records alone, which
    any apply saves).

    ``stricter`` says why the policy ``desired`` carries is stricter than the plan's own (the
    apply job's manifest or the records ask for more), so a refusal names the real reason;
    ``manifest_files`` are the files the apply job was given (else the plan's own list)."""
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
        now = refreshed(seen.live, seen.records, expects)
        lines += describe_changes(expects, now)
        if stricter:
            lines.append(stricter)
        raise RefusedForSafety(
            "The plan is stale: the site or the records changed since it was made.\n  - "
            + "\n  - ".join(lines),
            hint="Make a new plan and review it.",
        )
    keep = {action.id for action in saved.actions}
    actions = tuple(a for a in fresh.actions if a.id in keep)
    touched = {obj for action in actions for obj in action.touches()}
    informational = ("needs-replacement", "renamed")
    changes = tuple(
        c for c in fresh.changes if c.action in informational or (c.kind, c.name) in touched
    )
    return Plan(
        saved.context,
        saved.options,
        actions,
        changes,
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
                saved.context.manifest_files if manifest_files is None else manifest_files,
                groups_listed=seen.live.groups_listed,
                assume_no_groups=fresh.options.assume_no_groups,
                users=seen.live.users,
                caller_id=seen.live.caller_id,
                declared=declared_objects(desired),
            )
        ),
        saved.expects,
        access=plan_access(
            actions, changes, seen.live, seen.directory, seen.records, _expiries(seen)
        ),
        record_changes=fresh.changed_records,
        expiring=fresh.expiring,
    )


def _expiries(seen: Observation) -> Expiries:
    """Why the saved plan's removals happen, as the fresh plan says (``core/expiry.py``)."""
    return Expiries.of(seen.dated.expired if seen.dated else (), seen.directory)
