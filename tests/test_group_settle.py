"""Group creations are settled by ID, not by name (issue 32, item 7).

A ``user_group_add`` whose answer was lost is sent and journaled with the IDs of every group
known before it (``GroupCreate.groups_before``: listed by the site, or recorded). Only a group
of its name outside that set can be the one it made, so a late group is never taken for an
older one of the same name, nor an older one for it. The real engine and client against the
in-process sandbox (``tests/support/engine_site.py``); the table cases are
``tests/cases/executor/settle-05-*`` and ``settle-06-*``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from reconciler.core.memberships import Place
from reconciler.core.planning import PlanOptions
from reconciler.engine.apply.journal import Journal
from reconciler.engine.apply.pending import settle, wait_for_landing
from reconciler.engine.read.live import LiveReader
from reconciler.engine.records import ledger
from reconciler.kinds.group.actions import GroupCreate, GroupJoin, GroupLeave, listed_groups
from reconciler.state.backend import Holder
from tests.support.engine_site import EngineSite, engine_site
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import load_desired


def _leave_intent(site: EngineSite, action: GroupCreate, lands_in: float) -> None:
    """What an apply killed right after sending ``action`` leaves in the journal."""
    with site.store.lock(Holder.current("killed apply (test)")) as lease:
        Journal(site.store, lease, site.store.load().version).write(
            "intent", action, until=time.time() + lands_in
        )


def test_a_late_group_is_never_taken_for_an_older_one_of_the_same_name(tmp_path: Path) -> None:
    """A group "crew" was on the site when the killed apply sent its own "crew" (an older one
    whose deletion is still on its way, say). The next read waits for the new one to show --
    the older one does not end the wait -- and records the new one's ID."""
    said: list[str] = []

    async def run() -> tuple[int, int, int | None, str | None]:
        async with engine_site(example_seed(), tmp_path) as site:
            older = (await site.client.user_group_add("crew", [1001])).id
            listed = [group_id for group_id, _ in await listed_groups(site.client)]
            sent = GroupCreate(name="crew", members=(1002,), groups_before=frozenset(listed))
            _leave_intent(site, sent, lands_in=20)
            landed: list[int] = []

            async def lands_while_waiting(seconds: float) -> None:
                if not landed:  # the killed apply's creation reaches the site now
                    landed.append((await site.client.user_group_add("crew", [1002])).id)

            records = site.records()
            waited = await wait_for_landing(
                site.client, records, sleep=lands_while_waiting, notify=said.append
            )
            live = await LiveReader(site.client).read(None)
            settled, _ = settle(records, live)
            return older, landed[0], settled.groups["crew"].id, waited

    older, ours, recorded, waited = asyncio.run(run())
    assert len(said) == 1 and 'user_group_add (create user group "crew"' in said[0], said
    assert waited is not None and "all showed" in waited
    assert recorded == ours != older


def test_the_intent_of_a_group_creation_names_the_groups_known_before(tmp_path: Path) -> None:
    """The executor sends and journals each creation with the group IDs the site listed and
    the records held when the apply read the site; a creation whose answer never came stays
    pending with them, and the next apply settles it by ID."""
    document = {"version": 1, "groups": [{"name": "night-shift", "members": ["alice"]}]}
    desired = load_desired(document, tmp_path / "site.yaml")

    async def run() -> tuple[set[int], list[int], int, int]:
        async with engine_site(example_seed(), tmp_path / "state", timeout=0.5) as site:
            before = {group_id for group_id, _ in await listed_groups(site.client)}
            site.tap.slow = lambda method: 1.0 if method == "user_group_add" else 0.0
            first = await site.apply(desired, PlanOptions(assume_no_groups=True))
            assert first.report is not None and first.report.count("unknown") == 1
            (pending,) = site.records().pending
            await asyncio.gather(*site.tap.late)  # the site carries it out, late
            site.tap.slow = lambda method: 0.0
            second = await site.apply(desired, PlanOptions(assume_no_groups=True))
            assert second.plan.actions == (), [a.summary() for a in second.plan.actions]
            made = [g["id"] for g in site.dump()["groups"] if g["name"] == "night-shift"]
            assert len(made) == 1
            recorded = ledger.read(site.store).records.groups["night-shift"].id
            assert recorded is not None
            assert isinstance(pending, GroupCreate)  # the action itself, as sent
            return before, sorted(pending.groups_before), made[0], recorded

    before, journaled, made, recorded = asyncio.run(run())
    assert set(journaled) >= before and made not in journaled
    assert recorded == made


def test_an_interrupted_membership_change_is_sent_again_whichever_way_is_wanted(
    tmp_path: Path,
) -> None:
    """The site cannot say who is in a group. An apply killed as its ``remove_from_user_group``
    (or ``add_to_user_group``) left: the change landed, the records never learnt it. The next
    apply, of a manifest that wants the opposite, must send it -- the records may not assume
    the change happened, nor that it did not."""
    both = {"version": 1, "groups": [{"name": "crew", "members": ["alice", "bob"]}]}
    alice = {"version": 1, "groups": [{"name": "crew", "members": ["alice"]}]}

    def members(site: EngineSite) -> set[int]:
        (crew,) = [g for g in site.dump()["groups"] if g["name"] == "crew"]
        return set(crew["members"])

    async def run() -> tuple[set[int], set[int]]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            assert (await site.apply(load_desired(both, tmp_path / "a.yaml"))).complete
            crew = site.records().groups["crew"].id
            assert crew is not None
            bob = Place(crew, "crew")
            _leave_intent(site, GroupLeave(user=1002, user_label="bob", targets=(bob,)), 20)
            await site.client.remove_from_user_group(1002, [crew])  # it landed
            assert (await site.apply(load_desired(both, tmp_path / "a.yaml"))).complete
            after_remove = members(site)

            _leave_intent(site, GroupJoin(user=1003, user_label="carol", targets=(bob,)), 20)
            await site.client.add_to_user_group(1003, [crew])  # it landed
            assert (await site.apply(load_desired(both, tmp_path / "a.yaml"))).complete
            assert site.records().groups["crew"].unsure == frozenset()
            assert (await site.apply(load_desired(alice, tmp_path / "a.yaml"))).complete
            return after_remove, members(site)

    after_remove, after_add = asyncio.run(run())
    assert after_remove == {1001, 1002}  # bob added again, as the manifest wants
    assert after_add == {1001}  # carol removed again; bob left as asked
