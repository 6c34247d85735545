"""Jobs on the records alone, the site unchanged: adopt what exists, forget a record, move a
record to a new name (``state mv``). Each takes the site's lock and saves one version."""

from __future__ import annotations

from typing import Literal

from reconciler.core.kind import Adoption
from reconciler.core.planning import PlanOptions
from reconciler.core.records import Forgotten, Records, reduce
from reconciler.engine.apply.bookkeeping import declared_events
from reconciler.engine.read.observe import LoadedManifest, OpenSite, observe
from reconciler.engine.records import ledger
from reconciler.engine.records.changes import RecordMoved
from reconciler.errors import ReconcilerError
from reconciler.identity import lookup
from reconciler.kinds import registry
from reconciler.manifest.names import name_problem
from reconciler.state.backend import Holder, RecordStore


async def adopt(manifest: LoadedManifest, site: OpenSite) -> Adoption:
    """Record the declared objects that exist on the site as managed (each kind's ``adopt``);
    the site is unchanged. Only what the site reported is recorded as fact."""
    with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
        seen = await observe(manifest.desired, site, state.records, PlanOptions())
        adoption = Adoption()
        for kind in registry.KINDS:
            adoption += kind.adopt(seen.comparison.of(kind.name), seen.records)
        records = reduce(seen.records, adoption.events)
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
    manifest's new name. One saved version, under the lock; the site is not changed.

    ``new`` must be a name a manifest can declare: a record under any other name (a comma,
    outer spaces, an invisible character, over 40 characters) names nothing the manifest
    could ever hold, so the object would silently leave management."""
    problem = name_problem(kind, new)
    if problem is not None:
        raise ReconcilerError(
            f'"{new}" cannot be the name of a {kind} in a manifest: it {problem}.',
            hint=f"Give the name exactly as the manifest declares the {kind}; "
            "`reconciler validate` checks the manifest's names.",
        )
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
