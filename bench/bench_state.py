"""Benchmark: what the records of a large site cost to load, save and lock, in each backend.

Builds the records a large site leaves (5,000 users, 1,000 workspaces of ~20 members, 200
groups of ~25 members: about 600 KiB of JSON), then times, through the backends' public
interface, a ``load``, a ``save`` (a new version, fenced, compare-and-swap), a ``lock``
acquire and release, and a ``journal_append`` (durable before it returns), and prints the
median of ``--repeats`` runs of each. The directory backend works in a temporary directory
of this machine's disk; the PostgreSQL backend against a server started for the run on
loopback, with its durability settings left on (fsync, synchronous commit), as in production.

    .venv/bin/python bench/bench_state.py [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reconciler.core.records import Known, RecordedGroup, RecordedWorkspace, Records
from reconciler.engine.records import document as records_document
from reconciler.engine.records import ledger
from reconciler.kinds.workspace import RecordedSettings
from reconciler.logs import configure_logging
from reconciler.state.backend import Holder, RecordStore, SaveInfo, StateLocation
from reconciler.state.documents import dump_document
from reconciler.state.locate import open_records, parse_location
from tests.support.postgres import running_postgres

SITE = "https://large.example.net"
PLAN_OVERHEAD_TARGET_S = 0.2
USERS, WORKSPACES, GROUPS = 5_000, 1_000, 200
FIRST_USER_ID = 10_000


def large_records(seed: int = 7) -> dict[str, Any]:
    """The records of a large site, built with the engine's own ``Records`` and saved as its
    ``to_data()`` shapes them (digests and resolved references included)."""
    rng = random.Random(seed)
    user_ids = list(range(FIRST_USER_ID, FIRST_USER_ID + USERS))

    def members(mean: int) -> frozenset[int]:
        return frozenset(rng.sample(user_ids, rng.randint(mean - 5, mean + 5)))

    workspaces = {
        f"Workspace {n:04d}": RecordedWorkspace(
            id=100 + n,
            managed=True,
            origin="created" if n % 3 else "adopted",
            settings=RecordedSettings(
                root_access=Known(n % 10 != 0) if n % 3 else None,
                permissions=Known(frozenset({"download_files", "upload_files"}) if n % 4 else None),
                notifications=Known(None),
            ),
            members=members(20),
            source=f"site/team-{n % 40:02d}.yaml",
        )
        for n in range(WORKSPACES)
    }
    groups = {
        f"group-{n:03d}": RecordedGroup(
            id=5_000 + n, managed=True, origin="created", members=members(25), members_known=True
        )
        for n in range(GROUPS)
    }
    records = Records(
        SITE,
        workspaces,
        groups,
        applied_plans=tuple(f"{n:064x}" for n in range(100)),
        digests={f"workspace:{name}": f"{n:032x}" for n, name in enumerate(workspaces)},
        references={f"user{n:05d}": (uid, f"user{n:05d}") for n, uid in enumerate(user_ids)},
        last_full_read="2026-11-23T00:00:00Z",
    )
    return records_document.to_data(records)


def plan_read_seconds(location: StateLocation, repeats: int) -> float:
    """What a plan spends on the records, as a new process does: open the backend (connect,
    check the schema), load the newest version, read the journal, parse the records."""
    return median_seconds(lambda: _read_once(location), repeats)


def _read_once(location: StateLocation) -> None:
    with open_records(location, SITE) as fresh:
        ledger.read(fresh)


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(records: RecordStore, data: dict[str, Any], repeats: int) -> dict[str, float]:
    """Median seconds of each operation on ``records``."""
    holder = Holder.current("bench")
    figures: dict[str, float] = {}
    lease = records.lock(holder)
    records.save(data, expected_version=0, info=SaveInfo("bench", "warm-up"), lease=lease)
    version = iter(range(1, 10_000))
    figures["save"] = median_seconds(
        lambda: records.save(
            data, expected_version=next(version), info=SaveInfo("bench", "x"), lease=lease
        ),
        repeats,
    )
    figures["load"] = median_seconds(records.load, repeats)
    entry = {"event": "intent", "action": {"method": "add_to_workspace", "users": [1, 2, 3]}}
    figures["journal append"] = median_seconds(
        lambda: records.journal_append(lease, entry), repeats
    )
    lease.release()
    acquire, release = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        lease = records.lock(holder)
        acquire.append(time.perf_counter() - started)
        started = time.perf_counter()
        lease.release()
        release.append(time.perf_counter() - started)
    figures["lock acquire"] = statistics.median(acquire)
    figures["lock release"] = statistics.median(release)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    data = large_records()
    size_kb = len(dump_document(data).encode()) / 1024
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-state-") as work:
        directory = parse_location(str(Path(work) / "state"), base_dir=Path(work))
        with open_records(directory, SITE) as records:
            results["directory"] = measure(records, data, args.repeats)
        results["directory"]["plan's read"] = plan_read_seconds(directory, args.repeats)
    with running_postgres(durable=True) as server:
        os.environ["PGPASSWORD"] = server.app_password  # as a CI job gives it
        location = parse_location(server.url(schema="bench"), base_dir=Path())
        with open_records(location, SITE) as records:
            results["postgresql"] = measure(records, data, args.repeats)
        results["postgresql"]["plan's read"] = plan_read_seconds(location, args.repeats)
    columns = ["load", "save", "journal append", "lock acquire", "lock release", "plan's read"]
    print(
        f"records of {USERS:,} users, {WORKSPACES:,} workspaces, {GROUPS} groups: "
        f"{size_kb:,.0f} KiB of JSON; median of {args.repeats} runs, milliseconds"
    )
    print(f"{'backend':<12}" + "".join(f"{name:>16}" for name in columns))
    for backend, figures in results.items():
        print(f"{backend:<12}" + "".join(f"{figures[name] * 1000:>16.2f}" for name in columns))
    added = results["postgresql"]["plan's read"] - results["directory"]["plan's read"]
    met = "met" if added < PLAN_OVERHEAD_TARGET_S else "NOT met"
    print(
        f"PostgreSQL adds {added * 1000:.0f} ms to a no-change plan (a new process reading the "
        f"records; target under {PLAN_OVERHEAD_TARGET_S * 1000:.0f} ms): {met}"
    )


if __name__ == "__main__":
    main()
