"""Every wait for an interrupted apply's writes is bounded and said (issue 32, items 3 and 6).

An apply killed mid-write leaves intents in the journal, each with the time its write may
still land by. The next read waits for them to show -- but at most ``MAX_LANDING_WAIT``
seconds, whatever the killed runner's ``--timeout`` or clock said, and it says first, in one
line, what it waits for and until when. The landing deadline itself is counted from the
moment the write left, after its waits for a slot and a rate token.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reconciler.engine.apply.journal import Journal
from reconciler.engine.apply.pending import MAX_LANDING_WAIT, wait_for_landing
from reconciler.engine.records import ledger
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.kinds.workspace.actions import WorkspaceAdd
from reconciler.sandbox.settings import SandboxSettings
from reconciler.state.backend import Holder
from reconciler.state.directory import DirectoryRecords
from tests.support.engine_site import SITE_URL, engine_site
from tests.support.figures import tally
from tests.support.loopback import LoopbackSite, loopback_site
from tests.support.sandbox_site import example_seed
from tests.support.tcp_proxy import TcpProxy

LOST = WorkspaceAdd(
    names=("Lost In Transit",), root_access=True, users=(), permissions=None, notifications=None
)
WAITING_LINE = re.compile(
    r"^Waiting up to (\d+) s \(until \d\d:\d\d:\d\d UTC\) for workspace_add \(create workspace "
    r'"Lost In Transit" with 0 user\(s\)\), sent by an interrupted apply, to show on the site'
)


def _interrupted(records_dir: Path, site_url: str, lands_in: float) -> None:
    """What an apply killed as its ``workspace_add`` left leaves: the intent, and the time the
    killed runner believed it could land by (its ``--timeout``, or its clock, far ahead)."""
    store = DirectoryRecords(records_dir, site_url)
    with store, store.lock(Holder.current("killed apply (test)")) as lease:
        Journal(store, lease, store.load().version).write(
            "intent", LOST, until=time.time() + lands_in
        )


class FakeClock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = time.time()
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds
        if self.slept > 3600:
            raise AssertionError("waited an hour for a write that never lands")


def test_the_wait_is_bounded_whatever_the_killed_runner_recorded(tmp_path: Path) -> None:
    """The killed runner said its write could land for ten more hours (``--timeout 36000``,
    or a clock ten hours ahead): the reader waits ``MAX_LANDING_WAIT`` at most, and says
    first what it waits for and until when."""
    said: list[str] = []

    async def run() -> tuple[str | None, FakeClock]:
        clock = FakeClock()
        async with engine_site(example_seed(), tmp_path) as site:
            _interrupted(tmp_path, SITE_URL, lands_in=36_000)
            records = site.records()
            assert records.pending_until is not None
            waited = await wait_for_landing(
                site.client, records, clock=clock, sleep=clock.sleep, notify=said.append
            )
            return waited, clock

    waited, clock = asyncio.run(run())
    assert clock.slept <= MAX_LANDING_WAIT
    assert clock.slept >= MAX_LANDING_WAIT - 1  # it did wait: the write may still land
    assert len(said) == 1 and WAITING_LINE.match(said[0]), said
    assert waited is not None and "taken as never done" in waited


def test_nothing_is_awaited_or_said_when_the_write_shows_at_once(tmp_path: Path) -> None:
    said: list[str] = []

    async def run() -> tuple[str | None, FakeClock]:
        clock = FakeClock()
        async with engine_site(example_seed(), tmp_path) as site:
            _interrupted(tmp_path, SITE_URL, lands_in=60)
            await LOST.call(site.client)  # it landed before the next command began
            records = site.records()
            waited = await wait_for_landing(
                site.client, records, clock=clock, sleep=clock.sleep, notify=said.append
            )
            return waited, clock

    waited, clock = asyncio.run(run())
    assert (waited, clock.slept, said) == (None, 0.0, [])


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path) as running:
        running.write_manifest("site.yaml", {"version": 1, "workspaces": []})
        yield running


@pytest.mark.slow
def test_a_read_only_plan_never_waits_silently_nor_without_bound(site: LoopbackSite) -> None:
    """The issue's repro: after an apply killed with its ``workspace_add`` lost and
    ``--timeout 36000``, ``plan`` sat silent for the killed run's whole deadline. Now its first
    line says what it waits for and until when, and it ends within the bound."""
    _interrupted(site.workdir / ".reconciler", site.url, lands_in=36_000)
    started = time.monotonic()
    planned = site.run("plan", "site.yaml")
    seconds = time.monotonic() - started
    assert planned.returncode == EXIT_OK, planned.stderr
    first = planned.stderr.splitlines()[0]
    match = WAITING_LINE.match(first)
    assert match and float(match.group(1)) <= MAX_LANDING_WAIT, planned.stderr
    assert seconds < MAX_LANDING_WAIT + 60  # bounded: the cap, plus a loaded machine's start
    assert "taken as never done" in planned.stdout + planned.stderr


@pytest.mark.slow
def test_recovery_at_default_settings_waits_at_most_the_cap(site: LoopbackSite) -> None:
    """An apply killed at default settings (``--timeout`` 60) had journaled a write that never
    reached the site: the next apply waits at most ``MAX_LANDING_WAIT`` for it (it waited the
    killed run's 60 s before), then converges."""
    site.write_manifest("lost.yaml", {"version": 1, "workspaces": [{"name": "Lost In Transit"}]})
    _interrupted(site.workdir / ".reconciler", site.url, lands_in=60)
    started = time.monotonic()
    applied = site.run("apply", "lost.yaml", "--auto-approve")
    seconds = time.monotonic() - started
    assert applied.returncode == EXIT_OK, applied.stderr
    waited = re.search(r"Waited (\d+\.\d) s", applied.stdout + applied.stderr)
    assert waited and float(waited.group(1)) <= MAX_LANDING_WAIT + 0.5, applied.stderr
    assert set(site.workspaces()) >= {"Lost In Transit"}
    assert site.run("plan", "lost.yaml", "--detailed-exitcode").returncode == EXIT_OK
    tally("recovery after a kill (default settings)", applies=1, seconds=round(seconds))


@pytest.mark.parametrize(
    ("flag", "environment", "settings_file"),
    [
        (("--timeout", "36000"), {}, None),
        ((), {"RECONCILER_TIMEOUT": "36000"}, None),
        ((), {}, "timeout = 36000\n"),
    ],
    ids=["flag", "variable", "reconciler.toml"],
)
def test_a_timeout_beyond_the_documented_maximum_is_refused(
    site: LoopbackSite,
    flag: tuple[str, ...],
    environment: dict[str, str],
    settings_file: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    if settings_file is not None:
        (site.workdir / "reconciler.toml").write_text(settings_file, encoding="utf-8")
    refused = site.run("plan", "site.yaml", *flag)
    assert refused.returncode == EXIT_ERROR
    assert "36000" in refused.stderr and "300" in refused.stderr, refused.stderr
    assert site.control("calls")["total"] == 0  # refused before anything was read


# --- the landing deadline counts from the moment the write left ---------------------------

STAGGERED = {
    "version": 1,
    "workspaces": [  # different users: one workspace_add call each, 4 s apart
        {"name": "Early", "users": ["alice"]},
        {"name": "Middle", "users": ["bob"]},
        {"name": "Late", "users": ["carol"]},
    ],
}


def _received(site: LoopbackSite, method: str) -> int:
    return int(site.control("calls")["methods"].get(method, 0))


def _wait_for(condition: object, what: str, deadline_s: float = 120) -> None:
    assert callable(condition)
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen in {deadline_s} s"
        time.sleep(0.01)


@contextmanager
def _a_write_on_its_way(tmp_path: Path) -> Iterator[tuple[LoopbackSite, LoopbackSite, Path]]:
    """``--rate-limit 0.25 --timeout 10``: the third ``workspace_add`` ("Late") leaves 12 s
    after the phase began, past a deadline counted from then. The apply is killed right after
    sending it, and the site carries it out 5 s later (behind a proxy that, like a load
    balancer, keeps what reached it). Yields the site, the site through the proxy and the
    records' directory, the site's call counts reset, "Late" still on its way."""
    settings = SandboxSettings(allow_duplicate_workspace_names=True)
    with loopback_site(tmp_path, settings=settings) as site:
        port = int(site.url.rsplit(":", 1)[1])
        with TcpProxy("127.0.0.1", port, finish_abandoned=True) as proxy:
            through = LoopbackSite(f"http://127.0.0.1:{proxy.port}", tmp_path)
            through.write_manifest("site.yaml", STAGGERED)
            store = DirectoryRecords(tmp_path / ".reconciler", through.url)
            process = through.start(
                "apply", "site.yaml", "--auto-approve", "--rate-limit", "0.25", "--timeout", "10"
            )
            try:
                _wait_for(
                    lambda: any(v.summary.startswith("apply started") for v in store.history()),
                    "the apply's claim of its plan",
                )
                site.faults(latency_ms=5000)  # from now on the site takes 5 s to act
                _wait_for(lambda: _received(site, "workspace_add") >= 3, "the third write")
                os.kill(process.pid, signal.SIGKILL)
            finally:
                site.faults(latency_ms=0)  # the writes already received keep their 5 s
                through.collect(process)
            assert "Late" not in site.workspaces()  # still on its way
            site.control("calls/reset", {})
            yield site, through, tmp_path / ".reconciler"


@pytest.mark.e2e
@pytest.mark.slow
def test_a_write_that_waited_for_its_rate_token_is_waited_for_after_a_kill(
    tmp_path: Path,
) -> None:
    """Killed after sending a write that lands after the next apply has read the site
    (``_a_write_on_its_way``): its landing deadline counts from when it left, so the next
    apply waits for it, sends nothing again and records it as the tool's (on a site that
    allows duplicate names it would otherwise make a second "Late", and the first would stay
    unmanaged for good)."""
    with _a_write_on_its_way(tmp_path) as (site, through, records):
        store = DirectoryRecords(records, through.url)
        finished = through.run("apply", "site.yaml", "--auto-approve")
        assert finished.returncode == EXIT_OK, finished.stderr
        assert _received(site, "workspace_add") == 0  # it waited: nothing sent again
        names = [ws["name"] for ws in site.state()["workspaces"]]
        assert names.count("Late") == 1 and names.count("Middle") == 1, names
        late = ledger.read(store).records.workspaces["Late"]
        assert late.managed and late.id == site.workspaces()["Late"]["id"]
        again = through.run("plan", "site.yaml", "--detailed-exitcode")
        assert again.returncode == EXIT_OK, again.stdout


@pytest.mark.e2e
@pytest.mark.slow
def test_a_plan_reads_the_site_after_the_write_landed_not_before(tmp_path: Path) -> None:
    """A whole-site plan sends the site's lists before it reads the records (issue 47's head
    start); when the records then say a write is on its way, the plan waits for it and reads
    the lists again: planning from the lists sent before it landed would create "Late" a
    second time."""
    with _a_write_on_its_way(tmp_path) as (site, through, _):
        planned = through.run("plan", "site.yaml", "--format", "json")
        assert planned.returncode == EXIT_OK, planned.stderr
        assert "Late" in site.workspaces()  # it landed while the plan waited
        adds = [a for a in json.loads(planned.stdout)["actions"] if a["method"] == "workspace_add"]
        assert adds == [], adds
