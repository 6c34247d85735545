"""Carry out a plan's actions through the client, journaled and crash-safe.

Phases run in the plan's order; the actions of one phase are independent and run
concurrently (the client's limit bounds them). Each write is journaled before it is sent and
after it answers. A failed action does not stop the actions that do not depend on it; those
that do are skipped, and the destructive phases run only if everything before them completed,
so a half-done apply never destroys what it was about to re-create. Every destructive action
is checked once more at the moment it runs (``safety.RunCheck``), whatever the plan says.

A write that gets no answer (``OutcomeUnknown``) is never simply sent again: the action reads
the site first (``WriteAction.settle``), and only a part that certainly did not happen is sent
again.

Fencing the site: the records refuse a writer whose lease is gone, but the site cannot. So the
moment a write may leave -- after its wait for a concurrency slot and a rate token, which can
be long, and which a frozen process can outlast -- the executor checks that its lease still
holds by its own clock (``Lease.check_in_time``) and only then journals the intent, with the
time the write may land by counted from that moment. Once the lease is lost, no write leaves:
the queued ones are dropped and reported as not sent, and the apply ends with ``LockLost``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler.api.client import SiteClient
from reconciler.api.errors import NotFound, OutcomeUnknown, SiteError
from reconciler.core.actions import PHASES, Done, KnownIds, Pending, Result, Unbound, WriteAction
from reconciler.core.records import Event, Records, reduce
from reconciler.engine.apply.journal import Entry, Journal
from reconciler.engine.planning.safety import RunCheck
from reconciler.errors import StateError
from reconciler.model import live_user
from reconciler.state.backend import LockLost

Status = Literal["done", "failed", "skipped", "unknown"]


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    action: WriteAction
    status: Status
    detail: str = ""
    refused: bool = False  # skipped because the check at the moment it ran said no


@dataclass
class ApplyReport:
    outcomes: list[ActionOutcome] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)  # write calls sent, by method
    seconds: float = 0.0  # the time the work took (not the time spent asking)

    def count(self, status: Status) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def complete(self) -> bool:
        return all(outcome.status == "done" for outcome in self.outcomes)

    @property
    def refused(self) -> bool:
        """Nothing failed and nothing is of unknown outcome, but the check made as an action
        was to run refused one (a guard ``--force`` cannot override): a safety refusal."""
        return any(o.refused for o in self.outcomes) and not (
            self.count("failed") or self.count("unknown")
        )


class Executor:
    """Runs the actions of one plan against one site; ``events`` are what the records learn."""

    def __init__(
        self,
        client: SiteClient,
        records: Records,
        journal: Journal,
        check: RunCheck,
        on_progress: Callable[[ActionOutcome], None] = lambda outcome: None,
        before_ids: Iterable[int] = (),
        groups_before: Iterable[int] = (),
    ) -> None:
        self.client = client
        self.base = records
        self.journal = journal
        self.check = check
        self.on_progress = on_progress
        self.events: list[Event] = []
        self.status: dict[str, Status] = {}
        self.new_ids: dict[str, int] = {}  # users created by this apply, by username
        self.halted = False  # the journal could not be written: no further write starts
        self.lost: LockLost | None = None  # the lease was lost: no further write leaves
        self.before_ids = frozenset(before_ids)  # user IDs on the site before any write
        self.recorded_ids = {user.id: name for name, user in records.users.items()}
        recorded_groups = (group.id for group in records.groups.values() if group.id is not None)
        self.groups_before = frozenset((*groups_before, *recorded_groups))  # listed or recorded
        self._left: dict[str, float] = {}  # writes that left, by action ID: lands by (Unix)
        self._queued: dict[str, asyncio.Task[ActionOutcome]] = {}  # this phase's actions
        self._dropped: set[str] = set()  # queued writes cancelled when the lease was lost

    @property
    def records(self) -> Records:
        """The records as they stand now: the base with this apply's events folded in."""
        return reduce(self.base, self.events)

    async def run(self, actions: Sequence[WriteAction]) -> ApplyReport:
        started = time.monotonic()
        before = dict(self.client.stats.calls)
        report = ApplyReport()
        for phase in PHASES:
            batch = [action for action in actions if action.phase == phase]
            if not batch:
                continue
            hold = phase.destructive and not all(o.status == "done" for o in report.outcomes)
            if not hold and any(_deletes_user(action) for action in batch):
                await self._read_users_again()
            now = self.records if phase.destructive else self.base
            self._queued = {a.id: asyncio.ensure_future(self._run(a, hold, now)) for a in batch}
            done = await asyncio.gather(*self._queued.values(), return_exceptions=True)
            # Every write under way has finished (or failed) before anything is raised: a
            # journal that cannot be written stops the apply, never with writes orphaned.
            done = [
                self._not_sent(a) if a.id in self._dropped else r
                for a, r in zip(batch, done, strict=True)
            ]
            report.outcomes += [r for r in done if isinstance(r, ActionOutcome)]
            if self.lost is not None:
                raise self._stopped(report, actions)
            failures = [r for r in done if isinstance(r, BaseException)]
            if failures:
                raise failures[0]
        after = self.client.stats.calls
        report.calls = {m: n - before.get(m, 0) for m, n in after.items() if n - before.get(m, 0)}
        report.seconds = time.monotonic() - started
        return report

    async def _read_users_again(self) -> None:
        """Who each ID is *now*: a user renamed on the site since the plan was made is
        never deleted under its old name (``RunCheck`` refuses what this read contradicts)."""
        try:
            users = await self.client.user_list()
        except SiteError:
            return  # RunCheck refuses every user deletion it cannot judge
        self.check = self.check.with_users(live_user(user) for user in users)

    async def _run(self, action: WriteAction, hold: bool, records: Records) -> ActionOutcome:
        """Run ``action`` unless held (destruction after a failure), blocked or refused."""
        blocked = [dep for dep in action.depends_on if self.status.get(dep) != "done"]
        refusal = self.check.refusal(action, records)
        if hold:
            outcome = ActionOutcome(
                action, "skipped", "deletions wait until every other change is done"
            )
        elif blocked:
            outcome = ActionOutcome(action, "skipped", f"{blocked[0]} did not complete")
        elif refusal is not None:
            detail = f"refused at the moment it was to run: {refusal}"
            outcome = ActionOutcome(action, "skipped", detail, refused=True)
        else:
            try:
                bound = action.bind(self.new_ids)
            except Unbound as exc:
                outcome = ActionOutcome(action, "skipped", f"{exc}, so this cannot be done")
            else:
                outcome = await self._perform(bound)
        self.status[action.id] = outcome.status
        self.on_progress(outcome)
        return outcome

    async def _perform(self, action: WriteAction, attempt: int = 1) -> ActionOutcome:
        if self.halted or self.lost is not None:
            return ActionOutcome(action, "skipped", self._why_not_sent())
        try:
            action = action.as_sent(self._known())
            result = await action.call(self.client.guarded(lambda: self._leaving(action)))
        except _NotSent:
            return ActionOutcome(action, "skipped", self._why_not_sent())
        except asyncio.CancelledError:
            # Interrupted (Ctrl-C): a write that had left may have happened. Kept as pending,
            # the next apply reads the site before sending it again.
            if action.id in self._left:
                self.events.append(Pending(action, self._left[action.id]))
            raise
        except OutcomeUnknown as exc:
            return await self._after_unknown(action, attempt, late=exc.late)
        except NotFound as exc:
            if action.deletion() is not None and not _unknown_method(exc):
                return await self._done(action, Result(), "already gone from the site")
            return await self._failed(action, exc)
        except SiteError as exc:
            return await self._failed(action, exc)
        doubt = action.doubt(result, self._known())
        if doubt is None:
            doubt = await action.confirm(self.client, result)
        if doubt is not None:
            await self._journal("unknown", action, reason=doubt)
            return await self._after_unknown(action, attempt, doubt)
        return await self._done(action, result, result.note)

    async def _leaving(self, action: WriteAction) -> None:
        """The guard of every write, run just before it leaves (``caller.SendGuard``): the
        lease must still hold by this process's own clock, and the intent is journaled --
        no write is ever sent unjournaled -- with the time it may land by, counted from now.
        Raises (``_NotSent``, or the journal's ``StateError``) to keep the write from leaving.
        """
        self._still_holding()
        until = self._lands_by()
        try:
            await self._journal("intent", action, until=until)
        except LockLost:
            raise _NotSent from None
        self._still_holding()  # the journal's write took time too: nothing may stand after
        self._left[action.id] = until

    def _still_holding(self) -> None:
        """``_NotSent`` unless writes may still leave: the journal was written and the lease
        holds by this process's own clock."""
        if self.halted or self.lost is not None:
            raise _NotSent
        try:
            self.journal.lease.check_in_time()
        except LockLost as exc:
            self._lose(exc)
            raise _NotSent from None

    async def _journal(self, event: Entry, action: WriteAction, **details: Any) -> None:
        """Append to the journal; when that fails, no further write leaves (``_leaving``)."""
        try:
            await self.journal.append(event, action, **details)
        except LockLost as exc:
            self._lose(exc)
            raise
        except StateError:
            self.halted = True
            self._drop_queued()
            raise

    def _lose(self, exc: LockLost) -> None:
        self.lost = self.lost or exc
        self._drop_queued()

    def _drop_queued(self) -> None:
        """Cancel this phase's writes that have not left: they wait for a slot or a rate token,
        and would only be refused when their turn came (``_leaving``)."""
        current = asyncio.current_task()
        for action_id, task in self._queued.items():
            if action_id not in self._left and task is not current and not task.done():
                self._dropped.add(action_id)
                task.cancel()

    def _why_not_sent(self) -> str:
        if self.lost is not None:
            return "not sent: the lock of the records was lost before this write could leave"
        return "the records could not be written, so no more writes are sent"

    def _not_sent(self, action: WriteAction) -> ActionOutcome:
        outcome = ActionOutcome(action, "skipped", self._why_not_sent())
        self.status[action.id] = outcome.status
        self.on_progress(outcome)
        return outcome

    def _stopped(self, report: ApplyReport, actions: Sequence[WriteAction]) -> LockLost:
        """The lock was lost: what was done, and what never left."""
        assert self.lost is not None
        unsent = len(actions) - len(self._left)
        return LockLost(
            f"{self.lost.message} No write was sent after that: {report.count('done')} "
            f"done before, {unsent} of {len(actions)} never sent.",
            hint=self.lost.hint,
        )

    def _lands_by(self) -> float:
        """Until when a write sent now may still land on the site: the call's whole deadline
        (``--timeout``) from now. A read before then cannot prove it did not happen."""
        return time.time() + self.client.config.timeout

    def _known(self) -> KnownIds:
        return KnownIds(self.before_ids, self.recorded_ids, dict(self.new_ids), self.groups_before)

    async def _after_unknown(
        self, action: WriteAction, attempt: int, why: str = "", *, late: bool = False
    ) -> ActionOutcome:
        """Look at the site before trying again: never create anything twice.

        A write whose answer did not come within the deadline (``late``) is never sent again
        in this apply: the site may still be carrying it out, and a read that does not show
        it yet proves nothing. It stays of unknown outcome; the next apply reads first."""
        try:
            settlement = await action.settle(self.client)
        except SiteError as exc:
            return await self._unknown(
                action, f"no answer, and the check that followed failed: {exc}"
            )
        if settlement.applied is not None:
            await self._done(settlement.applied, settlement.result)
        if settlement.cannot_tell:
            return await self._unknown(action, settlement.reason)
        if settlement.remaining is None:
            first = f"{why}; " if why else "no answer came, but "
            return ActionOutcome(action, "done", f"{first}the site shows it was applied")
        if late:
            return await self._unknown(
                settlement.remaining,
                "no answer within --timeout, and the site does not show the change yet: it may "
                "still be under way, so it was not sent again (the next apply reads the site "
                "first)",
            )
        if attempt >= 2:
            return await self._unknown(settlement.remaining, why or "no answer, twice")
        return await self._perform(settlement.remaining, attempt + 1)

    async def _done(self, action: WriteAction, result: Result, detail: str = "") -> ActionOutcome:
        await self._journal("done", action, result=result.to_data())
        self.events.append(Done(action, result))
        self.new_ids.update(action.new_user_ids(result))
        return ActionOutcome(action, "done", detail)

    async def _failed(self, action: WriteAction, exc: SiteError) -> ActionOutcome:
        await self._journal("failed", action, error=exc.message)
        return ActionOutcome(action, "failed", str(exc))

    async def _unknown(self, action: WriteAction, reason: str) -> ActionOutcome:
        lands_by = self._lands_by()
        await self._journal("unknown", action, reason=reason, until=lands_by)
        self.events.append(Pending(action, lands_by))
        return ActionOutcome(action, "unknown", reason)


class _NotSent(Exception):
    """A write kept from leaving by its guard (``Executor._leaving``)."""


def _deletes_user(action: WriteAction) -> bool:
    deletion = action.deletion()
    return deletion is not None and deletion.kind == "user"


def _unknown_method(error: NotFound) -> bool:
    """A 404 whose title names a *method* ("Unknown Method") says nothing about the object."""
    return "method" in (error.title or "").lower()
