"""Settle writes of unknown outcome against a fresh read of the site: a pure function.

A write is *pending* when the tool sent it and never learnt whether it happened (the
connection dropped, or the process was killed). Most pending writes settle themselves: the
next read observes workspaces and their members directly, and a membership change is simply
planned again. Creations need care, because only the answer carried the new ID and the
records matter for pruning; each write kind says what a read proves
(``WriteAction.settle_from_live``).
"""

from __future__ import annotations

from reconciler.engine.actions import MalformedAction, action_from_data
from reconciler.engine.records import Event, PendingCleared, Records, reduce
from reconciler.model import LiveSite


def settle(records: Records, live: LiveSite) -> tuple[Records, list[str]]:
    """``records`` with every pending write settled against ``live``, and what was learnt."""
    if not records.pending:
        return records, []
    learnt: list[str] = []
    events: list[Event] = [PendingCleared()]
    for data in records.pending:
        try:
            action = action_from_data(data)
        except MalformedAction as exc:
            learnt.append(
                f"a write of unknown outcome could not be read back ({exc}) and was dropped; "
                "the plan below shows what the site needs now"
            )
            continue
        sentences, found = action.settle_from_live(live, records)
        learnt += sentences
        events += found
    return reduce(records, events), learnt
