"""Both state backends keep the same promises: one set of tests, run against each.

The directory backend works in a temporary directory; the PostgreSQL one in a fresh schema of
a real server (``tests/support/postgres.py``). Other runners are real processes
(``tests/support/state_holder.py``): frozen with SIGSTOP to stop renewing their lease, killed
with SIGKILL, or started at one instant to race for the lock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import EXIT_LOCKED, StateError
from reconciler.state.backend import (
    ConflictingUpdate,
    Holder,
    LockHeld,
    LockLost,
    RecordStore,
    SaveInfo,
    Snapshot,
)
from reconciler.state.leases import Refusal, wait_for_lock
from reconciler.state.locate import open_records, parse_location
from tests.support.loopback import REPO

SITE = "https://acme.example.net"
OTHER_SITE = "https://acme.example.net/other"
GITHUB = {"GITHUB_REPOSITORY": "org/site", "GITHUB_RUN_ID": "99", "GITHUB_JOB": "apply"}


@dataclass
class Backend:
    kind: str
    location: str  # as a user writes it: a path or a PostgreSQL URL
    opened: list[RecordStore] = field(default_factory=list)

    def open(self, site: str = SITE, lease_seconds: float = 30.0) -> RecordStore:
        location = parse_location(self.location, base_dir=Path("/"))
        records = open_records(location, site, lease_seconds=lease_seconds)
        self.opened.append(records)
        return records


@pytest.fixture(params=["directory", "postgresql", "postgresql-pooled"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each backend; PostgreSQL also through PgBouncer in transaction mode."""
    if request.param == "directory":
        chosen = Backend("directory", str(tmp_path / "state"))
    elif request.param == "postgresql":
        chosen = Backend("postgresql", request.getfixturevalue("postgres_url"))
    else:
        chosen = Backend("postgresql", request.getfixturevalue("pooled_postgres_url"))
    yield chosen
    for records in chosen.opened:
        records.close()


def records_of(site: str = SITE, **more: Any) -> dict[str, Any]:
    return {"format": 1, "site": site, **more}


def info(summary: str = "applied plan", plan: str | None = None) -> SaveInfo:
    return SaveInfo("alice@runner-1", summary, plan)


class HolderProcess:
    """Another runner: ``state_holder`` in a subprocess, driven line by line."""

    def __init__(self, backend: Backend, lease_seconds: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.state_holder", backend.location, SITE,
             str(lease_seconds)],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def ask(self, command: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def other_runner(backend: Backend) -> Iterator[list[HolderProcess]]:
    started: list[HolderProcess] = []
    yield started
    for runner in started:
        runner.end()


def test_a_site_never_saved_has_nothing(backend: Backend) -> None:
    records = backend.open()
    assert records.load() == Snapshot(0, None)
    assert records.history() == []
    assert records.journal_entries() == []
    with pytest.raises(StateError, match="no version 1"):
        records.load_version(1)


def test_saves_make_versions_and_history(backend: Backend) -> None:
    records = backend.open()
    with records.lock(Holder.current("apply")) as lease:
        first = records.save(records_of(n=1), expected_version=0, info=info("one"), lease=lease)
        second = records.save(
            records_of(n=2), expected_version=1, info=info("two", "abc123"), lease=lease
        )
    assert (first, second) == (1, 2)
    assert backend.open().load() == Snapshot(2, records_of(n=2))
    assert records.load_version(1) == Snapshot(1, records_of(n=1))
    history = records.history()
    assert [(h.version, h.summary, h.plan, h.saved_by) for h in history] == [
        (1, "one", None, "alice@runner-1"),
        (2, "two", "abc123", "alice@runner-1"),
    ]
    assert history[0].saved_at <= history[1].saved_at
    assert history[0].saved_at.endswith("Z")


def test_two_writers_of_one_version_one_is_refused_and_nothing_is_lost(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    seen_by_first, seen_by_second = first.load(), second.load()  # both plan from version 0
    with first.lock(Holder.current("apply A")) as lease:
        first.save(records_of(by="A"), expected_version=seen_by_first.version, info=info(),
                   lease=lease)  # fmt: skip
    with second.lock(Holder.current("apply B")) as lease:
        with pytest.raises(ConflictingUpdate, match="version 0 then, 1 now"):
            second.save(records_of(by="B"), expected_version=seen_by_second.version,
                        info=info(), lease=lease)  # fmt: skip
        assert second.load() == Snapshot(1, records_of(by="A"))  # A's update is still there
        assert second.save(records_of(by="B"), expected_version=1, info=info(), lease=lease) == 2


def test_concurrent_saves_of_the_same_version_publish_exactly_one(backend: Backend) -> None:
    writers = [backend.open() for _ in range(4)]
    lease = writers[0].lock(Holder.current("apply"))
    outcomes: list[str] = []

    def save(records: RecordStore, n: int) -> None:
        try:
            records.save(records_of(n=n), expected_version=0, info=info(), lease=lease)
            outcomes.append("saved")
        except ConflictingUpdate:
            outcomes.append("conflict")

    threads = [threading.Thread(target=save, args=(w, n)) for n, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lease.release()
    assert sorted(outcomes) == ["conflict", "conflict", "conflict", "saved"]
    assert [h.version for h in writers[0].history()] == [1]


def test_records_of_another_site_are_never_saved_there(backend: Backend) -> None:
    records = backend.open()
    elsewhere = records_of("https://elsewhere.example")
    with (
        records.lock(Holder.current("apply")) as lease,
        pytest.raises(StateError, match=r"belong to 'https://elsewhere\.example'"),
    ):
        records.save(elsewhere, expected_version=0, info=info(), lease=lease)
    assert records.load() == Snapshot(0, None)


def test_each_site_has_its_own_records_and_lock(backend: Backend) -> None:
    here, there = backend.open(SITE), backend.open(OTHER_SITE)
    with here.lock(Holder.current("apply here")) as lease, there.lock(Holder.current("apply")):
        here.save(records_of(), expected_version=0, info=info(), lease=lease)
        with pytest.raises(LockLost):  # a lease of one site is no lease of another
            there.save(records_of(OTHER_SITE), expected_version=0, info=info(), lease=lease)
    assert there.load() == Snapshot(0, None)
    assert here.load().version == 1


def test_a_held_lock_is_refused_naming_the_holder(backend: Backend) -> None:
    holder = Holder.current("apply site/", env=GITHUB)
    with backend.open().lock(holder) as lease, pytest.raises(LockHeld) as refused:
        backend.open().lock(Holder.current("apply other/"))
    assert lease.holder.since is not None
    assert refused.value.holder == lease.holder
    message = str(refused.value)
    assert f"apply site/ by {holder.user} on {holder.host} (process {os.getpid()}" in message
    assert "CI job org/site/99/apply" in message and f"since {lease.holder.since}" in message
    assert "30 seconds after its last renewal" in message
    backend.open().lock(Holder.current("apply after")).release()  # released on leaving


def test_waiting_for_a_holder_that_lets_go(backend: Backend) -> None:
    lease = backend.open().lock(Holder.current("apply first"))
    threading.Timer(0.5, lease.release).start()
    started = time.monotonic()
    with backend.open().lock(Holder.current("apply second"), wait_seconds=10) as second:
        waited = time.monotonic() - started
        assert second.took_over_from is None
        assert second.token > lease.token
    assert 0.4 < waited < 5


def test_fencing_tokens_only_grow(backend: Backend) -> None:
    records = backend.open()
    tokens = []
    for _ in range(3):
        with records.lock(Holder.current("apply")) as lease:
            tokens.append(lease.token)
    assert tokens == sorted(set(tokens))


@pytest.mark.e2e
def test_a_frozen_holder_loses_its_lease_and_its_late_writes_are_refused(
    backend: Backend, other_runner: list[HolderProcess]
) -> None:
    holder = HolderProcess(backend, lease_seconds=1.0)
    other_runner.append(holder)
    answer = holder.ask("lock")
    assert answer.startswith("locked"), answer
    holder.signal(signal.SIGSTOP)  # it stops renewing, as a hung runner would
    started = time.monotonic()
    records = backend.open()
    with records.lock(Holder.current("apply"), wait_seconds=10, lease_seconds=5) as lease:
        assert time.monotonic() - started < 3
        assert lease.took_over_from is not None
        assert lease.took_over_from.pid == holder.process.pid
        assert lease.token > int(answer.split()[1])
        holder.signal(signal.SIGCONT)
        assert holder.ask("save 0").startswith("error LockLost")
        assert holder.ask("append").startswith("error LockLost")
        assert records.load() == Snapshot(0, None)
        assert records.journal_entries() == []
        assert records.save(records_of(), expected_version=0, info=info(), lease=lease) == 1
    assert holder.ask("release") == "released"  # a lost lease is released without error


@pytest.mark.slow
def test_a_lease_checks_itself(backend: Backend) -> None:
    records = backend.open()
    lease = records.lock(Holder.current("apply"), lease_seconds=1)
    outlived = time.monotonic() + 1.2  # the lease is a wall-clock promise (the database's)
    while time.monotonic() < outlived:  # held at every check, past its first second: renewed
        lease.check()
        time.sleep(0.05)
    lease.release()
    with pytest.raises(LockLost):
        lease.check()
    with pytest.raises(LockLost):
        records.journal_append(lease, {"event": "late"})


def test_the_journal_is_kept_in_order_until_a_save_clears_it(backend: Backend) -> None:
    records = backend.open()
    with records.lock(Holder.current("apply")) as lease:
        for n in range(3):
            records.journal_append(lease, {"event": "intent", "n": n, "text": "ünïcode"})
        assert [e["n"] for e in backend.open().journal_entries()] == [0, 1, 2]
        records.save(records_of(), expected_version=0, info=info(), lease=lease)
        assert len(records.journal_entries()) == 3  # a save that did not fold it in
        records.journal_append(lease, {"event": "done", "n": 3})
        records.save(records_of(), expected_version=1, info=info(), lease=lease,
                     clear_journal=True)  # fmt: skip
        assert records.journal_entries() == []
        assert backend.open().journal_entries() == []


def test_the_plan_key_is_stable_per_site_and_secret(backend: Backend) -> None:
    records = backend.open()
    key = records.plan_key()
    assert len(key) == 32
    assert backend.open().plan_key() == key
    assert backend.open(OTHER_SITE).plan_key() != key
    with records.lock(Holder.current("apply")) as lease:
        records.save(records_of(), expected_version=0, info=info(), lease=lease)
        records.journal_append(lease, {"event": "intent"})
    shown = " ".join(
        [repr(records), records.location, str(records.history()), str(records.load())]
        + [str(e) for e in records.journal_entries()]
    )
    assert key.hex() not in shown and repr(key) not in shown


@pytest.mark.e2e
def test_two_processes_racing_for_the_lock_one_gets_it(backend: Backend, tmp_path: Path) -> None:
    go = tmp_path / "go"
    command = [sys.executable, "-m", "tests.support.state_holder", "--race", str(go),
               backend.location, SITE, "1.0"]  # fmt: skip
    racers = [
        subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True) for _ in range(4)
    ]
    try:
        for racer in racers:  # each has connected (and made the schema) and waits for the go
            assert racer.stdout is not None and racer.stdout.readline().strip() == "ready"
        go.touch()
        answers = sorted(racer.communicate(timeout=30)[0].strip() for racer in racers)
    finally:
        for racer in racers:  # a racer that failed must not leave the others waiting forever
            if racer.poll() is None:
                racer.kill()
                racer.wait()
    assert answers == ["locked", "refused", "refused", "refused"]


@pytest.mark.e2e
def test_a_killed_holder_loses_the_lock(
    backend: Backend, other_runner: list[HolderProcess]
) -> None:
    lease_seconds = 1.5
    holder = HolderProcess(backend, lease_seconds=lease_seconds)
    other_runner.append(holder)
    assert holder.ask("lock").startswith("locked")
    holder.signal(signal.SIGKILL)
    holder.process.wait()
    started = time.monotonic()
    with backend.open().lock(Holder.current("apply"), wait_seconds=10) as lease:
        waited = time.monotonic() - started
    assert lease.took_over_from is not None and lease.took_over_from.pid == holder.process.pid
    if backend.kind == "directory":
        assert waited < 0.5  # the kernel let go of its lock when it died
    else:
        assert waited < lease_seconds + 1.0  # the database lets it lapse


def test_a_runner_waiting_for_the_lock_says_whom_it_waits_for_once_then_progress() -> None:
    holder = Holder("runner-2", 4242, "ci", "apply site/")
    lines: list[str] = []
    with pytest.raises(LockHeld) as refused:
        wait_for_lock(
            lambda: Refusal(holder, 30.0),
            site="https://acme.example.net",
            wait_seconds=0.5,
            poll_seconds=0.02,
            notify=lines.append,
            progress_seconds=0.1,
        )
    assert refused.value.exit_code == EXIT_LOCKED
    assert len([line for line in lines if "Waiting for the lock" in line]) == 1
    assert "held by" in lines[0] and "4242" in lines[0]
    assert 2 <= len([line for line in lines if line.startswith("Still waiting")]) <= 5


ODD_NAMES = ["da\x00ve", "lone\ud800surrogate", "\ufdd0starts-with-the-mark", "plain"]


def test_any_text_a_site_answers_is_stored_and_read_back_exactly(backend: Backend) -> None:
    """A username with U+0000 or a lone surrogate (the site said so) used to fail every
    PostgreSQL save (jsonb refuses both); every backend keeps it exactly."""
    records = backend.open()
    data = records_of(references={name: [1000 + i, name] for i, name in enumerate(ODD_NAMES)})
    entry = {"event": "intent", "names": ODD_NAMES}
    with records.lock(Holder.current("apply")) as lease:
        records.journal_append(lease, entry)
        records.save(data, expected_version=0, info=info("forgot da\x00ve"), lease=lease)
    assert records.load().data == data
    assert records.journal_entries() == [entry]
    assert "\x00" not in records.history()[-1].summary


def test_a_huge_holder_name_is_cut_in_refusals_and_history(backend: Backend) -> None:
    records = backend.open()
    huge = Holder("h" * 10_000_000, 1, "u" * 1_000_000, "apply " + "x" * 5_000_000)
    with records.lock(huge) as lease:
        records.save(
            records_of(), expected_version=0, info=SaveInfo(huge.describe(), "s"), lease=lease
        )
        with pytest.raises(LockHeld) as refused:
            backend.open().lock(Holder.current("apply"))
    assert len(str(refused.value)) < 2_000
    assert len(records.history()[-1].saved_by) < 1_000
