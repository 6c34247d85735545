"""The tool and its peers on one sandbox, run in turn and compared run for run (issue 47).

A *peer* is a bare loop making exactly the calls the tool makes -- the plan's reads, in the
plan's order of dependence, 8 at a time -- and nothing else: ``bare_aiohttp_reads.py`` (the
fastest client there is here) and ``bare_httpx_reads.py``. Each runs as its own process,
measured like the tool (``SandboxSite.measure``: its interpreter and imports count), and
must make the tool's calls by method, or the comparison stops. The contestants run
interleaved -- each round in another order, so none always follows the same neighbour -- and
each figure is the median of the rounds; the machine's idle state is read before every run
and the CPU other processes used during it is kept (``CommandRun.other_cpu_s``).
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.measure import CommandRun, MeasurementError, SandboxSite, busy_cores
from bench.table import calls_by_method, megabytes, ratio, render_table, seconds

BENCH = Path(__file__).resolve().parent
BARE_AIOHTTP = "bare aiohttp reads"
BARE_HTTPX = "bare httpx reads"
PEER_SCRIPTS = {
    BARE_AIOHTTP: BENCH / "bare_aiohttp_reads.py",
    BARE_HTTPX: BENCH / "bare_httpx_reads.py",
}


@dataclass(frozen=True, slots=True)
class Contestant:
    """One thing run in each round: the tool with ``args``, or a peer's ``script``."""

    name: str
    args: tuple[str, ...] = ()
    script: Path | None = None
    codes: tuple[int, ...] = (0,)

    def run(self, site: SandboxSite) -> CommandRun:
        if self.script is not None:
            command = [sys.executable, str(self.script)]
            return site.measure(command, (self.name,)).expect_exit(*self.codes)
        return site.run(*self.args).expect_exit(*self.codes)


def peers() -> list[Contestant]:
    return [Contestant(name, script=script) for name, script in PEER_SCRIPTS.items()]


@dataclass(frozen=True, slots=True)
class Runs:
    """Every run of one contestant, and the idle state measured before each."""

    name: str
    runs: tuple[CommandRun, ...]
    idle_before: tuple[float, ...]

    def median(self, key: Callable[[CommandRun], float]) -> float:
        return statistics.median(key(run) for run in self.runs)

    @property
    def wall_s(self) -> float:
        return self.median(lambda run: run.wall_s)

    @property
    def cpu_s(self) -> float:
        return self.median(lambda run: run.cpu_s)

    @property
    def rss_mb(self) -> float:
        return self.median(lambda run: run.peak_rss_mb)

    @property
    def other_cpu_s(self) -> float:
        return self.median(lambda run: run.other_cpu_s or 0.0)

    @property
    def sandbox_cpu_s(self) -> float:
        return self.median(lambda run: run.sandbox_cpu_s or 0.0)

    @property
    def calls(self) -> dict[str, int]:
        return self.runs[0].calls


def interleaved(
    site: SandboxSite,
    contestants: Sequence[Contestant],
    rounds: int,
    check: Callable[[str, CommandRun], None] = lambda name, run: None,
) -> dict[str, Runs]:
    """``rounds`` rounds of every contestant, round ``r`` starting ``r`` places further on."""
    runs: dict[str, list[CommandRun]] = {c.name: [] for c in contestants}
    idle: dict[str, list[float]] = {c.name: [] for c in contestants}
    for number in range(rounds):
        shift = number % len(contestants)
        for contestant in [*contestants[shift:], *contestants[:shift]]:
            site.gate.wait()
            idle[contestant.name].append(busy_cores(0.5) or 0.0)
            run = contestant.run(site)
            check(contestant.name, run)
            runs[contestant.name].append(run)
    return {name: Runs(name, tuple(runs[name]), tuple(idle[name])) for name in runs}


def same_calls(reference: Mapping[str, int], name: str, run: CommandRun) -> None:
    """A contestant compared with the tool must make exactly the tool's calls, by method."""
    if dict(run.calls) != dict(reference):
        raise MeasurementError(
            f"{name} made {calls_by_method(run.calls)}, not the plan's {calls_by_method(reference)}"
        )


COLUMNS = (
    "run",
    "calls",
    "wall (median)",
    "wall / aiohttp",
    "CPU (median)",
    "CPU / aiohttp",
    "peak RSS",
    "sandbox CPU",
    "other CPU",
    "idle before",
    "walls",
    "CPUs",
)


def peers_table(results: Mapping[str, Runs], reference: str = BARE_AIOHTTP) -> str:
    """A row per contestant, each against the bare aiohttp loop of the same run."""
    base = results[reference]
    rows = []
    for name, result in results.items():
        idle = max(result.idle_before)
        rows.append(
            {
                "run": name,
                "calls": str(sum(result.calls.values())),
                "wall (median)": seconds(result.wall_s),
                "wall / aiohttp": ratio(result.wall_s / base.wall_s),
                "CPU (median)": seconds(result.cpu_s),
                "CPU / aiohttp": ratio(result.cpu_s / base.cpu_s),
                "peak RSS": megabytes(result.rss_mb),
                "sandbox CPU": seconds(result.sandbox_cpu_s),
                "other CPU": seconds(result.other_cpu_s),
                "idle before": f"≤ {idle:.2f} cores",
                "walls": ", ".join(f"{run.wall_s:.2f}" for run in result.runs),
                "CPUs": ", ".join(f"{run.cpu_s:.2f}" for run in result.runs),
            }
        )
    return render_table(COLUMNS, rows, right=COLUMNS[1:-2])
