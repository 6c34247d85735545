"""Settle writes of unknown outcome against a fresh read of the site: a pure function.

A write is *pending* when the tool sent it and never learnt whether it happened (the
connection dropped, or the process was killed). Most pending writes settle themselves: the
next read observes workspaces and their members directly, and a membership change is simply
planned again. Creations need care, because only the answer carried the new ID and the
records matter for pruning; each write kind says what a read proves
(``WriteAction.settle_from_live``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Literal

from reconciler.api.client import SiteClient
from reconciler.core.actions import WriteAction
from reconciler.core.records import (
    Event,
    MembersGone,
    PendingCleared,
    PendingWrite,
    Records,
    UnreadableWrite,
    reduce,
)
from reconciler.model import LiveSite
from reconciler.state.leases import say


def settle(records: Records, live: LiveSite) -> tuple[Records, list[str]]:
    """``records`` with every pending write settled against ``live``, recorded members who no
    longer exist dropped, and what was learnt."""
    records, gone = drop_dead_members(records, live)
    settled, learnt = _settle_pending(records, live)
    return settled, gone + learnt


def settled_read(records: Records, live: LiveSite) -> tuple[Records, Records, list[str]]:
    """For a plan: ``records`` without the members gone from the site (said as record
    changes, so not in what was learnt), the same with every pending write settled too, and
    what settling learnt."""
    alive, _ = drop_dead_members(records, live)
    settled, learnt = _settle_pending(alive, live)
    return alive, settled, learnt


POLL_SECONDS = 0.5
MAX_LANDING_WAIT = 5.0
"""The longest a read waits for an interrupted apply's writes to show, whatever that apply's
``--timeout`` and clock said: a request already at the site is carried out in moments, and
the recorded deadline is only the killed runner's word (its settings, its wall clock). Short
enough that the apply after a kill finishes within 15 s at default settings; a write that
lands later still is not lost: it shows as an unmanaged object, to adopt."""


def may_still_land(records: Records, now: float) -> list[WriteAction]:
    """The creations and deletions an interrupted apply sent that may still land on the site
    after ``now`` (``records.pending_until``): a read answered before they land would miss
    them. Memberships are not among them: one that lands late is simply planned again."""
    until = records.pending_until
    if until is None or now >= until:
        return []
    return [
        action
        for action in pending_writes(records)
        if isinstance(action, WriteAction) and action.late_landing_matters
    ]


async def wait_for_landing(
    client: SiteClient,
    records: Records,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    notify: Callable[[str], None] = say,
    limit: float = MAX_LANDING_WAIT,
) -> str | None:
    """Before a read that settles pending writes: wait until every creation or deletion an
    interrupted apply sent shows on the site, or can no longer land
    (``records.pending_until``), or ``limit`` seconds have passed.

    Why: a process killed mid-apply leaves its last request on its way, or still being carried
    out by the site. A read that comes before it lands would settle the creation as "never
    happened", and the object would then appear with no record naming it -- never managed,
    never pruned (or, declared, created a second time); a deletion that lands after the read
    leaves a record of a workspace that is gone. Waiting costs nothing when the writes show at
    once. Otherwise it is said first, in one line (``notify``) naming what is awaited and until
    when: a plan in a CI job never sits silent. Returns a sentence for the user when it
    waited, else None.
    """
    until, started = records.pending_until, clock()
    waiting = may_still_land(records, started)
    if until is None or not waiting:
        return None
    deadline = min(until, started + limit)
    said = False
    # One read per poll: only the first write not yet seen is checked again, since waiting
    # ends early only once every one of them has shown.
    while waiting and clock() < deadline:
        settlement = await waiting[0].settle(client)
        if settlement.remaining is None or settlement.cannot_tell:
            waiting.pop(0)
            continue
        waiting[0] = settlement.remaining
        if not said:
            notify(_awaiting(waiting, deadline - clock(), deadline))
            said = True
        await sleep(max(0.0, min(POLL_SECONDS, deadline - clock())))
    if not said:
        return None
    outcome = (
        "they did not show by then, so they are taken as never done"
        if waiting
        else "they all showed before then"
    )
    return f"Waited {clock() - started:.1f} s for writes an interrupted apply had sent; {outcome}."


def _awaiting(waiting: list[WriteAction], seconds: float, deadline: float) -> str:
    """``Waiting up to 8 s (until 10:04:08 UTC) for ... to show on the site...``."""
    first = f"{waiting[0].method} ({waiting[0].summary()})"
    more = f" and {len(waiting) - 1} more write(s)" if len(waiting) > 1 else ""
    at = datetime.fromtimestamp(deadline, UTC).strftime("%H:%M:%S UTC")
    return (
        f"Waiting up to {max(seconds, 0.0):.0f} s (until {at}) for {first}{more}, sent by an "
        "interrupted apply, to show on the site..."
    )


def pending_writes(records: Records) -> list[WriteAction | UnreadableWrite]:
    """The records' writes of unknown outcome, in order: each the action sent, or a stored one
    this version cannot read back (settling reports and drops it; a scoped plan cannot rely
    on the records then)."""
    return [_pending_write(entry) for entry in records.pending]


def _pending_write(entry: PendingWrite) -> WriteAction | UnreadableWrite:
    """What the records keep as a pending write: only these two (``Pending`` and the records'
    document put them there), told apart for the type checker."""
    if not isinstance(entry, WriteAction | UnreadableWrite):
        raise TypeError(f"not a pending write: {entry!r:.80}")
    return entry


def drop_dead_members(records: Records, live: LiveSite) -> tuple[Records, list[str]]:
    """Recorded members whose user the site no longer has, dropped from the records.

    Removing them would be a call that fails for ever (the site knows no such user) and
    would jam every later apply and prune. Only a *complete* user list proves a user gone.
    """
    if not live.users_complete:
        return records, []
    exists = {user.id for user in live.users}
    events: list[Event] = []
    said: list[str] = []
    recorded: list[tuple[Literal["workspace", "group"], str, frozenset[int]]] = [
        ("workspace", name, ws.members) for name, ws in sorted(records.workspaces.items())
    ] + [("group", name, group.members) for name, group in sorted(records.groups.items())]
    for kind, name, members in recorded:
        dead = sorted(members - exists)
        if dead:
            events.append(MembersGone(kind, name, frozenset(dead)))
            what = "user group" if kind == "group" else "workspace"
            said += [
                f'user #{user_id} no longer exists; dropped from the records of {what} "{name}"'
                for user_id in dead
            ]
    return (reduce(records, events), said) if events else (records, [])


def _settle_pending(records: Records, live: LiveSite) -> tuple[Records, list[str]]:
    if not records.pending:
        return records, []
    learnt: list[str] = []
    events: list[Event] = [PendingCleared()]
    for action in pending_writes(records):
        if isinstance(action, UnreadableWrite):
            learnt.append(
                f"a write of unknown outcome could not be read back ({action.reason}) and was "
                "dropped; the plan below shows what the site needs now"
            )
            continue
        sentences, found = action.settle_from_live(live, records)
        learnt += sentences
        events += found
    return reduce(records, events), learnt
