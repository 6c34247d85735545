"""The apply journal commits in groups: an apply's concurrent writes each wait for their own
entry to be durable, but share the disk's ``fsync`` (or the database's transaction) with
whatever else is waiting, instead of taking turns. A quick store is written on the event
loop (a worker thread's hand-off cost each write milliseconds); a slow one in a worker
thread, so that it never holds the loop up.

Measured by the store's own work: how many appends it was asked for, against the entries it
holds afterwards, in both backends.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.apply import journal as journal_module
from reconciler.engine.apply.journal import Journal
from reconciler.errors import StateError
from reconciler.kinds.group.actions import GroupCreate
from reconciler.state.backend import Holder, Lease, RecordStore
from reconciler.state.locate import open_records, parse_location

SITE = "https://files.example.com"


@pytest.fixture(params=["directory", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> RecordStore:
    location = (
        str(tmp_path / "records")
        if request.param == "directory"
        else request.getfixturevalue("postgres_url")
    )
    return open_records(parse_location(location, base_dir=tmp_path), SITE)


def _counting(store: RecordStore) -> list[int]:
    """How many entries each of the store's appends carried (the store does the work)."""
    sizes: list[int] = []
    append_many = store.journal_append_many

    def counted(lease: Lease, entries: list[dict[str, Any]]) -> None:
        sizes.append(len(entries))
        append_many(lease, entries)

    store.journal_append_many = counted  # type: ignore[method-assign]
    return sizes


def test_concurrent_entries_share_a_write_and_keep_their_order(store: RecordStore) -> None:
    sizes = _counting(store)
    with store, store.lock(Holder.current("apply (test)")) as lease:
        journal = Journal(store, lease, base=0, plan="p")
        names = [f"Team {n:02}" for n in range(40)]

        async def apply() -> None:
            await asyncio.gather(
                *(journal.append("intent", GroupCreate(name=name, members=())) for name in names)
            )

        asyncio.run(apply())
        entries = store.journal_entries()
    assert [e["action"]["params"]["name"] for e in entries] == names
    assert {e["event"] for e in entries} == {"intent"} and sum(sizes) == 40
    assert len(sizes) < 40 and max(sizes) > 1  # grouped, not one write each


class _StoreClock:
    """The journal's clock, moved only by the store's appends: each takes what the test says,
    whatever the disk under the test did (a CI runner's ``fsync`` can take several ms)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def _recording_threads(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch, slow_first: int = 0
) -> list[int]:
    """The thread each of the store's appends ran in; the first ``slow_first`` take 3 ms (a
    store across a network), the rest 0.1 ms (a local disk), as the journal's clock sees it."""
    threads: list[int] = []
    append_many = store.journal_append_many
    clock = _StoreClock()
    monkeypatch.setattr(journal_module, "time", clock)

    def recorded(lease: Lease, entries: list[dict[str, Any]]) -> None:
        threads.append(threading.get_ident())
        clock.now += 0.003 if len(threads) <= slow_first else 0.0001
        append_many(lease, entries)

    store.journal_append_many = recorded  # type: ignore[method-assign]
    return threads


def _one_by_one(journal: Journal, count: int) -> None:
    """``count`` entries, each waited for before the next is asked for."""

    async def apply() -> None:
        for n in range(count):
            await journal.append("intent", GroupCreate(name=f"Team {n:02}", members=()))

    asyncio.run(apply())


def test_a_quick_store_is_written_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_records(parse_location(str(tmp_path / "records"), base_dir=tmp_path), SITE)
    threads = _recording_threads(store, monkeypatch)
    with store, store.lock(Holder.current("apply (test)")) as lease:
        _one_by_one(Journal(store, lease, base=0, plan="p"), 6)
        assert len(store.journal_entries()) == 6
    assert set(threads) == {threading.get_ident()}  # asyncio.run's loop runs in this thread


def test_a_slow_store_is_written_in_a_worker_thread_after_three_slow_writes(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _recording_threads(store, monkeypatch, slow_first=3)
    with store, store.lock(Holder.current("apply (test)")) as lease:
        _one_by_one(Journal(store, lease, base=0, plan="p"), 6)
        names = [e["action"]["params"]["name"] for e in store.journal_entries()]
    assert names == [f"Team {n:02}" for n in range(6)]
    here = threading.get_ident()
    assert threads[:3] == [here] * 3  # written on the loop until they proved slow
    assert here not in threads[3:]


def test_one_slow_write_now_and_then_keeps_the_journal_on_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local disk's ``fsync`` can take a few ms now and then: that alone does not count."""
    store = open_records(parse_location(str(tmp_path / "records"), base_dir=tmp_path), SITE)
    threads = _recording_threads(store, monkeypatch, slow_first=2)
    with store, store.lock(Holder.current("apply (test)")) as lease:
        _one_by_one(Journal(store, lease, base=0, plan="p"), 6)
    assert set(threads) == {threading.get_ident()}


def test_a_failed_group_fails_every_entry_in_it(store: RecordStore) -> None:
    with store, store.lock(Holder.current("apply (test)")) as lease:
        journal = Journal(store, lease, base=0)

        def refuse(lease: Lease, entries: list[dict[str, Any]]) -> None:
            raise StateError("the disk is full")

        store.journal_append_many = refuse  # type: ignore[method-assign]

        async def apply() -> list[BaseException | None]:
            groups = [GroupCreate(name=f"G{n}", members=()) for n in range(5)]
            appends = (journal.append("intent", group) for group in groups)
            return await asyncio.gather(*appends, return_exceptions=True)

        failures = asyncio.run(apply())
    assert all(isinstance(f, StateError) for f in failures)


def test_a_write_is_described_once_for_its_intent_and_its_result(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An apply journals each write twice (intent, then result): the action's description,
    the codec's walk of its parameters, is made once for both, and both entries carry it."""
    described: list[str] = []
    to_data = GroupCreate.to_data

    def counted(action: GroupCreate) -> dict[str, Any]:
        described.append(action.name)
        return to_data(action)

    monkeypatch.setattr(GroupCreate, "to_data", counted)
    groups = [GroupCreate(name=f"Team {n:02}", members=(n,)) for n in range(10)]
    with store, store.lock(Holder.current("apply (test)")) as lease:
        journal = Journal(store, lease, base=0, plan="p")

        async def apply() -> None:
            await asyncio.gather(*(journal.append("intent", group) for group in groups))
            await asyncio.gather(*(journal.append("done", group, result={}) for group in groups))

        asyncio.run(apply())
        entries = store.journal_entries()
    assert sorted(described) == [group.name for group in groups]  # once each, not twice
    assert [e["event"] for e in entries] == ["intent"] * 10 + ["done"] * 10
    assert [e["action"] for e in entries[10:]] == [e["action"] for e in entries[:10]]
    assert entries[0]["action"] == to_data(groups[0])


class _HeldExecutor(ThreadPoolExecutor):
    """The loop's executor, whose jobs start only once ``start`` is set: the moment between
    asking a worker thread for a write and the thread running, made as long as a test needs."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.start = threading.Event()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def held() -> Any:
            self.start.wait(timeout=10)
            return fn(*args, **kwargs)

        return super().submit(held)


def test_an_entry_that_comes_while_the_writer_thread_starts_goes_with_its_write(
    store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a slow store, the worker takes its group when it runs: an intent that arrives while
    the thread is being woken shares that write instead of waiting for a whole write more."""
    _recording_threads(store, monkeypatch, slow_first=3)
    sizes = _counting(store)
    with store, store.lock(Holder.current("apply (test)")) as lease:
        journal = Journal(store, lease, base=0, plan="p")
        executor = _HeldExecutor()

        async def apply() -> None:
            for n in range(3):  # three slow writes: the rest go through the worker thread
                await journal.append("intent", GroupCreate(name=f"Slow {n}", members=()))
            asyncio.get_running_loop().set_default_executor(executor)
            first = asyncio.ensure_future(
                journal.append("intent", GroupCreate(name="A", members=()))
            )
            for _ in range(3):
                await asyncio.sleep(0)  # the write of the journal is asked for
            second = asyncio.ensure_future(
                journal.append("intent", GroupCreate(name="B", members=()))
            )
            await asyncio.sleep(0)
            executor.start.set()
            await asyncio.gather(first, second)

        asyncio.run(apply())
        names = [e["action"]["params"]["name"] for e in store.journal_entries()]
    assert names == ["Slow 0", "Slow 1", "Slow 2", "A", "B"]
    assert sizes == [1, 1, 1, 2]  # one write for A and B, not one for A and then one for B
