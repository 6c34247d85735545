"""The engine's handle on one site's records: read them, lock them, journal, save.

Everything the engine records goes through here to the state backend (``reconciler.state``).
Reading (``read``) never changes anything and needs no lock: a journal left by an interrupted
apply is folded in memory only. Changing records takes the site's lock (``locked``), folds
and clears any such journal first, and saves each change explicitly, as a new version with a
one-line summary, by compare-and-swap: a concurrent writer gets a clear refusal, never a lost
update.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from reconciler.core.records import Records, reduce
from reconciler.engine.apply.journal import Journal, recover
from reconciler.engine.records import document as records_document
from reconciler.state.backend import Holder, Lease, RecordStore, SaveInfo
from reconciler.state.leases import say


def moved_notice(store: RecordStore, moved_to: Mapping[str, str]) -> str:
    """What a runner still using records that ``state migrate`` copied elsewhere is told."""
    where = moved_to.get("location", "another location")
    return (
        f"Note: the records at {store.location} were migrated to {where} "
        f"({moved_to.get('at', 'at an unknown time')}) and are no longer the site's records: "
        f"use --state (or RECONCILER_STATE) {where}."
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """Records as read, with what folding an interrupted apply's journal taught."""

    records: Records
    version: int
    learnt: tuple[str, ...] = ()
    journal_found: bool = False  # a journal to clear with the next save
    problems: tuple[str, ...] = ()  # journal entries that could not be read


async def read_meanwhile(store: RecordStore) -> Reading:
    """``read`` in a worker thread, so that calls already on their way to the site are sent,
    answered and read meanwhile (``LiveReader.head_start``): decoding a large site's records
    is some 50 ms of CPU that the event loop would otherwise sit through idle (issue 47).
    Reading changes nothing and no other thread touches the store while it runs."""
    return await asyncio.to_thread(read, store)


def read(store: RecordStore) -> Reading:
    """The newest records, with any journal of an interrupted apply folded in (memory only)."""
    snapshot = store.load()
    records = records_document.from_data(snapshot.data, site=store.site, where=store.location)
    entries = store.journal_entries()
    recovered = recover(entries, snapshot.version)
    learnt = list(recovered.problems)
    if records.moved_to:
        say(moved_notice(store, records.moved_to))
    if recovered.events:
        learnt.insert(0, f"folded {recovered.writes} write(s) of an interrupted apply")
    if recovered.events or recovered.progress:
        records = reduce(records, [*recovered.events, *recovered.progress])
    return Reading(
        records, snapshot.version, tuple(learnt), bool(entries), tuple(recovered.problems)
    )


@dataclass
class LockedRecords:
    """Records under the site's lock: the only way to change them."""

    store: RecordStore
    lease: Lease
    holder: Holder
    records: Records
    version: int
    learnt: list[str] = field(default_factory=list)
    journal_pending: bool = False  # a journal to clear with the next save

    def save(self, records: Records, summary: str, *, plan: str | None = None) -> None:
        """Store ``records`` as the next version (clearing a journal already folded in)."""
        self.version = self.store.save(
            records_document.to_data(records),
            expected_version=self.version,
            info=SaveInfo(self.holder.describe(), summary, plan),
            lease=self.lease,
            clear_journal=self.journal_pending,
        )
        self.records = records
        self.journal_pending = False

    def journal(self, plan: str | None = None) -> Journal:
        """A journal for writes that build on the records as last saved, carrying out the
        plan whose checksum is ``plan``."""
        self.journal_pending = True
        return Journal(self.store, self.lease, self.version, plan)


@contextmanager
def locked(
    store: RecordStore, holder: Holder, *, wait_seconds: float = 0.0
) -> Iterator[LockedRecords]:
    """Hold the site's lock; an interrupted apply's journal is folded in and saved first."""
    with store.lock(holder, wait_seconds=wait_seconds) as lease:
        yield _opened(store, lease, holder, read(store))


@asynccontextmanager
async def locked_meanwhile(
    store: RecordStore,
    holder: Holder,
    *,
    wait_seconds: float = 0.0,
    meanwhile: Callable[[], None] = lambda: None,
) -> AsyncIterator[LockedRecords]:
    """``locked``, for an apply: once the lock is held, ``meanwhile()`` (which sends the
    site's lists ahead, ``LiveReader.head_start``), then the records read in a worker thread
    while those calls travel (``read_meanwhile``). Only under the lock: a read sent before it
    could miss another apply's writes."""
    with store.lock(holder, wait_seconds=wait_seconds) as lease:
        meanwhile()
        yield _opened(store, lease, holder, await read_meanwhile(store))


def _opened(store: RecordStore, lease: Lease, holder: Holder, reading: Reading) -> LockedRecords:
    """The records under ``lease``, an interrupted apply's journal folded in and saved."""
    state = LockedRecords(
        store, lease, holder, reading.records, reading.version, list(reading.learnt)
    )
    if lease.took_over_from is not None:
        state.learnt.insert(
            0, f"took the lock over from {lease.took_over_from.describe()}, which has gone"
        )
    if reading.journal_found:
        state.journal_pending = True
        state.save(reading.records, "folded the journal of an interrupted apply")
    return state
