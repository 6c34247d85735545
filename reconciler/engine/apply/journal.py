"""The apply journal: intent written before each write, the result after it.

If apply is killed half-way, the journal says which writes certainly happened (their result
is there) and which may have (an intent without a result). The next lock holder -- on any
runner, since the journal lives in the state backend -- folds the first into the records and
keeps the second as *pending*, to be settled against a fresh read of the site before anything
is planned again (``pending.settle``).

Each entry names the records version it builds on (``base``). An entry older than the newest
saved version was folded in by that save already (a crash between the save and the journal's
removal) and is skipped, so a journal is never folded twice. Each also names the plan it
carries out (``plan``: its checksum), so a plan cut short can say how many actions ran.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler import aio
from reconciler.core.actions import Done, MalformedAction, Pending, Result, WriteAction
from reconciler.core.records import AccessEnd, Event, PlanProgress
from reconciler.kinds.registry import action_from_data
from reconciler.state.backend import Lease, RecordStore

Entry = Literal["intent", "done", "failed", "unknown"]

SLOW_APPEND_SECONDS = 0.002
SLOW_APPENDS_IN_A_ROW = 3
"""Writes of the journal slower than ``SLOW_APPEND_SECONDS``, this many in a row, and the rest
are not made on the event loop: a local disk's append with its ``fsync`` takes some
0.1-0.5 ms (now and then a few ms), a remote database's or network file system's round trip
more, every time."""


@dataclass(slots=True)
class Journal:
    """Appends to one site's journal under a held lease; one per apply.

    ``append`` commits in groups: the entries asked for while the event loop runs one round of
    callbacks go together (one ``fsync``, one transaction), written once that round is over.
    An apply's concurrent writes each wait for their own intent to be durable before they
    leave.

    Where a group is written: on the event loop while the store answers quickly. A local
    file's append takes some 0.25 ms there, while handing it to a worker thread and back
    made each write wait 2-3 ms in its concurrency slot (the thread must win the interpreter
    lock from the busy loop, then wake it): 200 teams onboarded took 0.13 s longer. Once the
    journal's writes prove slow (``SLOW_APPENDS_IN_A_ROW`` over ``SLOW_APPEND_SECONDS``: a
    remote database, a network file system), the rest go through a worker thread, so that
    the loop is never held up for long; entries that arrive while the thread writes go
    together in its next group.
    """

    store: RecordStore
    lease: Lease
    base: int  # the records version this apply's writes build on
    plan: str | None = None  # the checksum of the plan this apply carries out
    _waiting: list[tuple[dict[str, Any], asyncio.Future[None]]] = field(default_factory=list)
    _writing: asyncio.Task[None] | None = None
    _in_turn: asyncio.Handle | None = None  # the end-of-turn write, when one is due
    _slow: int = 0  # writes of the journal in a row slower than ``SLOW_APPEND_SECONDS``
    _threaded: bool = False  # the store is slow: the rest go through a worker thread
    _described: dict[str, tuple[WriteAction, dict[str, Any]]] = field(default_factory=dict)
    _taking: threading.Lock = field(default_factory=threading.Lock)  # ``_waiting``, both threads

    def entry(self, event: Entry, action: WriteAction, **details: Any) -> dict[str, Any]:
        entry = {"event": event, "base": self.base, "action": self._data(action), **details}
        if self.plan is not None:
            entry["plan"] = self.plan
        return entry

    def _data(self, action: WriteAction) -> dict[str, Any]:
        """``action.to_data()``, made once for the intent and the result of one write (the
        same action object): the codec's walk of its parameters is most of an entry's cost.
        Entries only read it: the stores serialise each entry as it is."""
        known = self._described.get(action.id)
        if known is not None and known[0] is action:
            return known[1]
        data = action.to_data()
        self._described[action.id] = (action, data)
        return data

    def write(self, event: Entry, action: WriteAction, **details: Any) -> None:
        """One entry, durable when this returns."""
        self.store.journal_append(self.lease, self.entry(event, action, **details))

    async def append(self, event: Entry, action: WriteAction, **details: Any) -> None:
        """One entry, durable when this returns (the store's error, e.g. ``LockLost`` or
        ``StateError``, raised here otherwise), committed with whatever else is waiting."""
        done = asyncio.get_running_loop().create_future()
        done.add_done_callback(aio.retrieved)  # a cancelled waiter's error is not "unretrieved"
        entry = self.entry(event, action, **details)
        with self._taking:
            self._waiting.append((entry, done))
        if self._threaded:
            if self._writing is None or self._writing.done():
                self._writing = asyncio.create_task(self._write_waiting())
        elif self._in_turn is None:
            self._in_turn = asyncio.get_running_loop().call_soon(self._write_in_turn)
        await asyncio.shield(done)  # a cancelled caller's entry is still written, or not

    def _write_in_turn(self) -> None:
        """On the event loop, after the turn's other callbacks: the group they asked for."""
        self._in_turn = None
        if self._threaded:  # a slow write since this was due: the thread takes these too
            if self._waiting and (self._writing is None or self._writing.done()):
                self._writing = asyncio.create_task(self._write_waiting())
            return
        started = time.perf_counter()
        _answer(*self._write_group())
        slow = time.perf_counter() - started > SLOW_APPEND_SECONDS
        self._slow = self._slow + 1 if slow else 0
        self._threaded = self._slow >= SLOW_APPENDS_IN_A_ROW

    async def _write_waiting(self) -> None:
        while self._waiting:  # only this task's thread takes entries away meanwhile
            _answer(*await asyncio.to_thread(self._write_group))

    def _write_group(
        self,
    ) -> tuple[list[tuple[dict[str, Any], asyncio.Future[None]]], Exception | None]:
        """Every entry waiting now, written (on the loop or in the worker thread); and the
        store's error."""
        with self._taking:
            group, self._waiting = self._waiting, []
        try:
            self.store.journal_append_many(self.lease, [entry for entry, _ in group])
        except Exception as exc:
            return group, exc
        return group, None


def _answer(
    group: list[tuple[dict[str, Any], asyncio.Future[None]]], failure: Exception | None
) -> None:
    """Each waiter of a group written: done, or the store's error as its own."""
    for _, done in group:
        if done.done():
            continue
        if failure is None:
            done.set_result(None)
        else:
            done.set_exception(failure)


@dataclass(frozen=True, slots=True)
class Recovered:
    """What a journal left by an interrupted apply says, as events for the records."""

    events: list[Event]
    writes: int  # entries folded in
    problems: list[str]  # entries that could not be read, in plain words
    progress: list[Event] = field(default_factory=list)  # how far each plan named got


def recover(entries: Iterable[dict[str, Any]], version: int) -> Recovered:
    """Events for the entries that build on ``version`` (or carry no version: older files).

    Every "done" entry is folded in, in order (one write can be done in parts: a part the
    site showed as applied, then the rest sent again under the same ID); a write whose last
    entry is an intent or "unknown" becomes pending; each plan named is told how many of its
    actions were done.
    """
    events: list[Event] = []
    plans: dict[str, str] = {}  # action ID -> the plan its entries name
    last: dict[str, tuple[str, WriteAction]] = {}
    until: dict[str, float] = {}
    problems: list[str] = []
    writes = 0
    for number, entry in enumerate(entries, 1):
        base = entry.get("base")
        if isinstance(base, int) and base < version:
            continue  # folded in by the save that made ``version``
        try:
            action = action_from_data(entry.get("action"))
            event = str(entry.get("event"))
            if event == "done":
                events.append(Done(action, Result.from_data(entry.get("result"))))
                writes += 1
        except (MalformedAction, TypeError, ValueError) as exc:
            problems.append(
                f"journal entry {number} of an interrupted apply could not be read ({exc}); "
                "it is left out, and the plan shows what the site still needs"
            )
            continue
        last[action.id] = (event, action)
        if isinstance(plan := entry.get("plan"), str):
            plans[action.id] = plan
        lands_by = entry.get("until")
        if isinstance(lands_by, int | float) and not isinstance(lands_by, bool):
            until[action.id] = max(float(lands_by), until.get(action.id, 0.0))
    events += [
        Pending(action, until.get(action.id))
        for event, action in last.values()
        if event in ("intent", "unknown")
    ]
    return Recovered(events, writes, problems, _progress(plans, last))


def _progress(plans: dict[str, str], last: dict[str, tuple[str, WriteAction]]) -> list[Event]:
    """For each plan the entries name: how many of its actions were done, and how many were
    sent with no answer (pending), so a plan cut short can say how far it got."""
    done: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    ended: dict[str, dict[AccessEnd, None]] = {}
    for action_id, plan in plans.items():
        event, action = last[action_id]
        done[plan] += event == "done"
        unknown[plan] += event in ("intent", "unknown")
        if event == "done":
            ended.setdefault(plan, {}).update(dict.fromkeys(action.ended_access()))
    return [
        PlanProgress(plan, done[plan], unknown[plan], tuple(ended.get(plan, {})))
        for plan in sorted(set(plans.values()))
    ]
