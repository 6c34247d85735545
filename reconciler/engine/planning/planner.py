"""Turn a ``Comparison`` into a ``Plan``: the ordered, batched API calls and what they change.

The order is fixed (``actions.Phase``): groups are created and joined first, then workspaces
are replaced (only those named with ``--replace``) and created, members of existing
workspaces are added and removed, members leave groups, and deletions come last, so an
apply that stops half-way never destroyed anything it was about to re-create.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from reconciler.core.access import plan_access
from reconciler.core.actions import PHASES, AfterApply, WriteAction
from reconciler.core.expiry import Dated, Expiries, left_in_manifest, new_grants_expired
from reconciler.core.kind import Diff
from reconciler.core.planning import PlanInputs, Planned, PlanOptions, RecordChange, joined
from reconciler.core.records import Records
from reconciler.core.users import UserDirectory
from reconciler.engine.planning.diff import Comparison
from reconciler.engine.planning.facts import fingerprints
from reconciler.engine.planning.plan import Plan, PlanContext
from reconciler.engine.planning.renames import lookalike_warnings, rename_problems
from reconciler.engine.planning.safety import guard_problems, manifest_objects, vanished_files
from reconciler.kinds import registry
from reconciler.model import LiveSite, Policy
from reconciler.ownership.owners import creation_refusals, with_owners


def _unobservable_facts(diffs: Iterable[Diff], shown: int = 10) -> list[str]:
    """One sentence per fact that could not be observed, naming the objects it affects."""
    names_by_fact: dict[str, list[str]] = defaultdict(list)
    for diff in diffs:
        for fact in diff.unobservable:
            names_by_fact[fact].append(diff.name)
    sentences = []
    for fact, names in names_by_fact.items():
        listed = ", ".join(f'"{n}"' for n in names[:shown])
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        sentences.append(f"{fact}, and the tool has no record of it: {listed}{more}")
    return sentences


def _notices(
    actions: list[WriteAction],
    records: Records,
    context: PlanContext,
    declared: frozenset[tuple[str, str]] | None,
) -> list[str]:
    """Paragraphs the plan opens with: what it could not judge, and what may be a mistake."""
    notices = []
    for file, objects in vanished_files(actions, records, context.manifest_files, declared).items():
        notices.append(
            f"The manifest file {file} declared {', '.join(objects)}, and it is no longer part "
            "of the manifest (deleted, renamed, a broken link?). This plan deletes them. If "
            "that is what you want, apply with --force; if not, restore the file."
        )
    return notices


def plan_kinds(comparison: Comparison, inputs: PlanInputs) -> Planned:
    """Every kind's plan (``kinds/<kind>/plan.py``) in the registry's order, then every
    kind's retirements in the reverse order: deletions come last, workspaces before groups
    before users, as an apply runs them. Each write that names a user this apply creates
    waits for that user's creation."""
    kinds = registry.KINDS
    planned = joined(
        [
            *(kind.plan(comparison.of(kind.name), inputs) for kind in kinds),
            *(kind.retire(comparison.of(kind.name), inputs) for kind in reversed(kinds)),
        ]
    )
    return replace(planned, actions=_after_created_users(planned.actions))


def _after_created_users(actions: Iterable[WriteAction]) -> tuple[WriteAction, ...]:
    """Each action, waiting for the creation of every user it names that this apply
    creates (``AfterApply``): the action that ``creates`` that user."""
    chosen = tuple(actions)
    creators = {made: action.id for action in chosen for made in action.creates()}
    return tuple(
        action.after(*needed) if (needed := _creators_of(action, creators)) else action
        for action in chosen
    )


def _creators_of(action: WriteAction, creators: dict[tuple[str, str], str]) -> list[str]:
    return [
        creators[("user", user.username)]
        for user in action.named_users()
        if isinstance(user, AfterApply) and ("user", user.username) in creators
    ]


def build_plan(
    comparison: Comparison,
    live: LiveSite,
    records: Records,
    directory: UserDirectory,
    policy: Policy,
    options: PlanOptions,
    context: PlanContext,
    notices: Iterable[str] = (),
    warnings: Iterable[str] = (),
    record_changes: Iterable[RecordChange] = (),
    dated: Dated | None = None,
) -> Plan:
    """The plan that makes the site match the manifest, with what apply would refuse.
    ``record_changes``: what reading the site already changed in the records (moves, dead
    members); the records of objects gone from the site and the manifest join them.
    ``dated``: the manifest's expiries on the plan's day (``core/expiry.py``)."""
    expired = dated.expired if dated is not None else ()
    new_grants_expired(expired, _created(comparison))
    expiries = Expiries.of(expired, directory)
    planned = plan_kinds(comparison, PlanInputs(directory, options, policy, live, expiries))
    actions = sorted(planned.actions, key=lambda action: PHASES.index(action.phase))
    renaming = rename_problems(comparison, planned.changes)
    # What the whole manifest declares matters only to a plan that prunes (a vanished file's
    # objects), and reading it back from the plan's copy costs a large manifest 65 ms.
    prunes = any((d := a.deletion()) and d.reason == "prune" for a in actions)
    declared = manifest_objects(context) if prunes else None
    return Plan(
        context=context,
        options=options,
        actions=tuple(actions),
        changes=with_owners(planned.changes, context.desired_site, records),
        kept=tuple(planned.kept),
        unmanaged=comparison.unmanaged,
        unobservable=tuple(comparison.notes) + tuple(_unobservable_facts(comparison.all())),
        warnings=(
            *warnings,
            *comparison.conflicts,
            *planned.warnings,
            *lookalike_warnings(comparison, planned.changes),
        ),
        notices=(
            *_dated_notices(dated, options),
            *notices,
            *_notices(actions, records, context, declared),
        ),
        guards=tuple(
            guard_problems(
                actions,
                records,
                policy,
                context.manifest_files,
                groups_listed=live.groups_listed,
                assume_no_groups=options.assume_no_groups,
                users=live.users,
                caller_id=live.caller_id,
                declared=declared,
            )
        )
        + tuple(renaming)
        + tuple(creation_refusals(planned.changes, context.desired_site)),
        expects=fingerprints(live, records, actions),
        access=plan_access(actions, planned.changes, live, directory, records, expiries),
        record_changes=(*record_changes, *planned.forgotten),
        expiring=dated.expiring() if dated is not None and dated.upcoming else None,
        at=dated.day if dated is not None and dated.preview else None,
    )


def _created(comparison: Comparison) -> dict[str, list[str]]:
    """The workspaces and groups this plan creates, by kind."""
    return {
        kind: [diff.name for diff in comparison.of(kind) if diff.status == "missing"]
        for kind in ("workspace", "group")
    }


def _dated_notices(dated: Dated | None, options: PlanOptions) -> list[str]:
    """A preview's day (``--at``), a plan of expired access only (``--expired-only``), and
    the expired entries the manifest still lists."""
    if dated is None:
        return []
    notices = []
    if options.expired_only:
        notices.append(
            "Only the removal of access whose expires: date has come is planned "
            "(--expired-only): anything else that differs from the manifest is left to the next "
            "plan of the whole manifest (drift reports it)."
        )
    if dated.preview:
        notices.append(
            f"This plan shows the site as the manifest wants it on {dated.day.isoformat()} "
            "(--at), not today: a preview, which cannot be saved nor applied."
        )
    left = left_in_manifest(dated.expired)
    return [*notices, *([left] if left else [])]
