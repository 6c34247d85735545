"""A runner that lost its lock changes nothing on the site (issue 32, item 5).

The records fence themselves (every write under a lost lease is refused), but the site knows
nothing of leases. So each write checks, just before it leaves, that its runner's lease still
holds by the runner's own monotonic clock; a runner frozen past its lease knows it the moment
it runs again, drops what it had queued and ends with the lost-lock message.

Two real ``reconciler apply`` processes against one sandbox on loopback, the records in a
directory or in PostgreSQL; the first is frozen with SIGSTOP while it waits for rate tokens.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.state.backend import RecordStore
from reconciler.state.directory import DirectoryRecords
from reconciler.state.leases import Heartbeat
from reconciler.state.locate import open_records, parse_location
from tests.support.loopback import LoopbackSite, loopback_site

WORKSPACES = ("Alpha", "Bravo", "Charlie")
NEWER = {"version": 1, "workspaces": [{"name": name, "users": []} for name in WORKSPACES]}
OLDER = {
    "version": 1,
    "workspaces": [{"name": "Alpha", "users": []}],
    "policy": {"prune": True, "max_delete_fraction": 1.0},
}


@pytest.fixture(params=["directory", "postgresql"])
def records(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where every runner keeps the records: a shared directory, or a PostgreSQL schema."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "shared-records")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path) as running:
        running.write_manifest("newer.yaml", NEWER)
        running.write_manifest("older.yaml", OLDER)
        yield running


def _store(site: LoopbackSite, location: str) -> RecordStore:
    return open_records(parse_location(location, base_dir=site.workdir), site.url)


def _wait_for_save(store: RecordStore, summary: str, after: int, deadline_s: float = 120) -> None:
    """Until the records hold a version above ``after`` whose summary begins with ``summary``."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        versions = store.history()[after:]
        if any(info.summary.startswith(summary) for info in versions):
            return
        time.sleep(0.02)
    raise AssertionError(f"no save {summary!r} within {deadline_s} s")


def _freeze(pid: int, store: RecordStore) -> None:
    """SIGSTOP ``pid``, but never while it holds the directory backend's gate: a process frozen
    in those few microseconds would keep every runner from the lock until it is resumed (the
    gate says so after 10 s), which is not what this test is about."""
    if not isinstance(store, DirectoryRecords):
        os.kill(pid, signal.SIGSTOP)
        return
    fd = os.open(store.directory / "gate", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # its holder lets go within microseconds
        os.kill(pid, signal.SIGSTOP)
        # the signal stops each thread when it next runs: on a busy machine, a while later;
        # until all have, one could still take the gate let go here, and freeze holding it
        deadline = time.monotonic() + 10
        while not _stopped(pid):
            assert time.monotonic() < deadline, f"process {pid} did not stop"
            time.sleep(0.001)
    finally:
        os.close(fd)


def _stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped (state ``T`` in ``/proc``)."""
    states = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # a thread that ended
            continue
        states.append(stat.rsplit(")", 1)[1].split()[0])
    return all(state in ("T", "t") for state in states)


def _deletions(site: LoopbackSite) -> int:
    return int(site.control("calls")["methods"].get("workspace_delete", 0))


@pytest.mark.e2e
@pytest.mark.slow
def test_a_runner_frozen_past_its_lease_deletes_nothing_when_it_wakes(
    site: LoopbackSite, records: str
) -> None:
    """Runner 1 applies an older manifest that prunes Bravo and Charlie, and is frozen while it
    waits for its rate tokens, past its 3 s lease. Runner 2 takes the lock over and applies
    the newer manifest, which declares both (nothing to do). Runner 1, resumed, must not
    delete them: the newer manifest is what the site should look like."""
    state = ("--state", records)
    assert site.run("apply", "newer.yaml", "--auto-approve", *state).returncode == EXIT_OK
    with _store(site, records) as store:
        saved = len(store.history())
        site.control("calls/reset", {})
        first = site.start(
            "apply", "older.yaml", "--auto-approve", *state, "--rate-limit", "0.25",
            "--lock-lease", "3",
        )  # fmt: skip
        try:
            # planned and claimed: its two deletions now wait for rate tokens (4 s apart)
            _wait_for_save(store, "apply started", after=saved)
            _freeze(first.pid, store)
            assert _deletions(site) == 0, "runner 1 sent a deletion before it was frozen"

            second = site.run(
                "apply", "newer.yaml", "--auto-approve", *state, "--lock-timeout", "60"
            )
            assert second.returncode == EXIT_OK, second.stderr
            assert "took the lock over" in second.stderr
        except BaseException:
            first.kill()  # stopped or not: no runner outlives a failed check
            site.collect(first, timeout=60)
            raise
        os.kill(first.pid, signal.SIGCONT)
    _, stderr = site.collect(first, timeout=60)

    assert first.returncode == EXIT_ERROR, stderr
    assert _deletions(site) == 0  # nothing left runner 1 once it woke
    assert set(WORKSPACES) <= set(site.workspaces())  # Bravo and Charlie are still there
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "lost the lock" in errors[0], stderr
    assert "0 done before, 2 of 2 never sent" in errors[0], errors
    again = site.run("plan", "newer.yaml", "--detailed-exitcode", *state)
    assert again.returncode == EXIT_OK, again.stdout


def test_a_holder_whose_renewals_fail_knows_before_its_lease_lapses() -> None:
    """The check made before each write needs no I/O and no heartbeat to have run: it
    counts on the monotonic clock from the last renewal that worked."""
    failing = Heartbeat(_unreachable, 0.3, name="test-failing", taken_at=time.monotonic())
    assert failing.in_time()  # just taken
    failing.start()
    try:
        deadline = time.monotonic() + 10
        while failing.in_time() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not failing.in_time()  # within the lease: its renewals kept failing
        assert not failing.lost.is_set()  # nobody said it was lost; the clock did
    finally:
        failing.stop()

    lost = Heartbeat(lambda: False, 0.3, name="test-lost", taken_at=time.monotonic())
    lost.start()
    try:
        assert lost.lost.wait(10)
        assert not lost.in_time()
    finally:
        lost.stop()


def _unreachable() -> bool:
    raise OSError("the records' database is unreachable")
