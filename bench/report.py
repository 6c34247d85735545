"""A measured scenario, its physical floor, and its row in a results table.

``floor = max((calls x latency + sandbox CPU) / concurrency, sandbox CPU, calls / rate)``:
the time the API calls need even if the tool cost nothing. Each call takes the added latency
and the sandbox's own CPU for it (measured in the same run), ``concurrency`` of them at once;
and the sandbox's one thread spends its CPU one call after another, so never less than that
(there is no rate limit in these runs). The tool's wall time includes the interpreter's
start-up and the manifest load; the *API span* -- from the first call sent to the last
answer, taken from the tool's own ``api_call`` log events -- is the part the floor describes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bench.baseline_sequential import BaselineRun
from bench.measure import CommandRun
from bench.sites import CONCURRENCY, LATENCY_MS, ReadFormula, Size
from bench.table import calls_by_method, megabytes, ratio, render_table, seconds


def floor_s(
    calls: int,
    latency_ms: float = LATENCY_MS,
    concurrency: int = CONCURRENCY,
    rate_limit: float | None = None,
    sandbox_cpu_s: float = 0.0,
) -> float:
    """The floor: each call's round trip (latency and the server's CPU for it) spread over
    the concurrency, never less than the server's CPU in all (issue 34), or the rate."""
    by_latency = (calls * latency_ms / 1000 + sandbox_cpu_s) / concurrency
    floor = max(by_latency, sandbox_cpu_s)
    return max(floor, calls / rate_limit) if rate_limit else floor


def api_window(stderr: str) -> tuple[float, float] | None:
    """Epoch seconds of the first API call sent and of the last answer, from the tool's
    ``api_call`` events (each logged at its answer, with its duration)."""
    starts, ends = [], []
    for line in stderr.splitlines():
        if not line.startswith("{") or '"api_call"' not in line:
            continue
        event: dict[str, Any] = json.loads(line)
        end = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
        ends.append(end)
        starts.append(end - event["duration_ms"] / 1000)
    return (min(starts), max(ends)) if ends else None


def api_span_s(stderr: str) -> float | None:
    """Seconds from the first API call sent to the last answer."""
    window = api_window(stderr)
    return None if window is None else window[1] - window[0]


@dataclass(frozen=True, slots=True)
class Target:
    """One target of an issue, as a row of a results table."""

    what: str
    limit: str
    measured: str
    met: bool

    def row(self) -> dict[str, str]:
        return {
            "target": self.what,
            "limit": self.limit,
            "measured": self.measured,
            "met": "yes" if self.met else "**no**",
        }


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """The median of repeated runs of one scenario on one site (and all their wall times)."""

    size: Size
    scenario: str
    run: CommandRun  # the run with the median wall time
    walls: tuple[float, ...]
    formula: ReadFormula | None = None
    baseline: BaselineRun | None = None
    bare: CommandRun | None = None  # the bare httpx loop of the same reads (bare_httpx_reads)

    @classmethod
    def of(
        cls,
        size: Size,
        scenario: str,
        runs: Sequence[CommandRun],
        formula: ReadFormula | None = None,
        baseline: BaselineRun | None = None,
        bare: Sequence[CommandRun] = (),
    ) -> ScenarioResult:
        median = _median(runs, lambda run: run.wall_s)
        walls = tuple(run.wall_s for run in runs)
        bare_run = _median(bare, lambda run: run.cpu_s) if bare else None
        return cls(size, scenario, median, walls, formula, baseline, bare_run)

    @property
    def calls(self) -> int:
        return self.run.reads + self.run.writes

    @property
    def floor_s(self) -> float:
        return floor_s(self.calls, sandbox_cpu_s=self.run.sandbox_cpu_s or 0.0)

    @property
    def span_s(self) -> float:
        span = api_span_s(self.run.stderr)
        return self.run.wall_s if span is None else span

    @property
    def before_first_call_s(self) -> float | None:
        """Wall seconds from the exec to the first API call: start-up."""
        window = api_window(self.run.stderr)
        return None if window is None else window[0] - self.run.started_at

    @property
    def after_last_answer_s(self) -> float | None:
        """Wall seconds from the last answer to the exit: compare, plan, render, exit."""
        window = api_window(self.run.stderr)
        return None if window is None else self.run.started_at + self.run.wall_s - window[1]

    @property
    def timings(self) -> dict[str, Any]:
        """The ``plan_timings`` of a plan; a scenario that logs none has an empty dict."""
        return self.run.plan_timings or {}

    @property
    def speedup(self) -> float | None:
        return None if self.baseline is None else self.baseline.wall_s / self.run.wall_s

    def row(self) -> dict[str, str]:
        run, timings = self.run, self.timings
        sandbox = run.sandbox_cpu_s
        return {
            "size": self.size.name,
            "scenario": self.scenario,
            "exit": str(run.exit_code),
            "API calls by method": calls_by_method(run.calls),
            "reads (formula)": f"{run.reads} ({self.formula})" if self.formula else str(run.reads),
            "writes": str(run.writes),
            "wall": seconds(run.wall_s),
            "API span": seconds(self.span_s),
            "floor": seconds(self.floor_s),
            "wall / floor": ratio(run.wall_s / self.floor_s),
            "span / floor": ratio(self.span_s / self.floor_s),
            "tool CPU": seconds(run.cpu_s),
            "CPU diff+plan": _timing(timings, "compare_plan_cpu_s"),
            "CPU read": _timing(timings, "read_cpu_s"),
            "peak RSS": megabytes(run.peak_rss_mb),
            "sandbox CPU": "n/a" if sandbox is None else seconds(sandbox),
            "latency waited": "n/a"
            if run.latency_waited_ms is None
            else f"{run.latency_waited_ms:.1f} ms",
            "other CPU": "n/a" if run.other_cpu_s is None else seconds(run.other_cpu_s),
            "bare loop CPU": seconds(self.bare.cpu_s) if self.bare else "",
            "baseline": seconds(self.baseline.wall_s) if self.baseline else "",
            "speedup": ratio(self.speedup) if self.speedup else "",
            "walls": ", ".join(f"{wall:.2f}" for wall in self.walls),
        }


def _median(runs: Sequence[CommandRun], key: Callable[[CommandRun], float]) -> CommandRun:
    ordered = sorted(runs, key=key)
    return ordered[(len(ordered) - 1) // 2]


def _timing(timings: dict[str, Any], name: str) -> str:
    return seconds(timings[name]) if name in timings else "n/a"


COLUMNS = (
    "size",
    "scenario",
    "exit",
    "API calls by method",
    "reads (formula)",
    "writes",
    "wall",
    "floor",
    "wall / floor",
    "API span",
    "span / floor",
    "tool CPU",
    "bare loop CPU",
    "CPU read",
    "CPU diff+plan",
    "peak RSS",
    "sandbox CPU",
    "latency waited",
    "other CPU",
    "baseline",
    "speedup",
)
NUMERIC = tuple(c for c in COLUMNS if c not in ("size", "scenario", "API calls by method"))


def results_table(results: Sequence[ScenarioResult]) -> str:
    return render_table(COLUMNS, [result.row() for result in results], right=NUMERIC)
