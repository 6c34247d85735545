"""Run every benchmark, print the tables, and write ``bench/RESULTS.md`` (5 to 9 minutes).

    .venv/bin/python bench/run_all.py [--repeats 3] [--quiet-wait 240]

Plans and no-op applies on the small, medium and large sites with the sequential baseline
(``bench_plan.py``), scoped plans (``plan --changed``) for k = 3, 30 and 300 changed objects on
the large site (``bench_scoped.py``), the onboarding apply on the medium site
(``bench_onboard.py``) and the cost of one call (``bench_http_stack.py``); then the issue's
targets are checked. Timing on a shared machine is only as good as the machine is idle, so
every measured run first waits for other work to calm down (4 minutes at most in all) and
every row reports the CPU other processes used meanwhile.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_http_stack import bench_http_stack
from bench.bench_onboard import bench_onboard_peers, bench_onboarding, onboard_peers_report
from bench.bench_peers import PeersResult, bench_peers
from bench.bench_peers import report as peers_report
from bench.bench_plan import bench_size
from bench.bench_scoped import bench_scoped, scoped_targets
from bench.machine import describe_load, machine_description
from bench.measure import REPO, QuietGate
from bench.peers import Runs
from bench.report import ScenarioResult, Target, floor_s, results_table
from bench.results_file import kept_sections, marked
from bench.sites import GROWTH_SIZES, LATENCY_MS, ONBOARDED_TEAMS, SIZES
from bench.table import render_table
from reconciler.logs import configure_logging

RESULTS = REPO / "bench" / "RESULTS.md"
PEERS_SECTION = "peers-large"
PEER_ROUNDS = 5  # issue 47: the median of 5 interleaved rounds
QUIET_BUDGET_S = 240  # the most the whole run waits for other work to calm down
SHARED_CPU_S = 0.5  # other processes' CPU during a run above which the row counts as shared


def check_targets(results: Sequence[ScenarioResult]) -> list[Target]:
    """Issue 34's targets (and the standing ones of issues 7 and 14), judged on the large
    site; each floor counts the sandbox's CPU of its own run (``report.floor_s``)."""

    def find(size: str, prefix: str) -> ScenarioResult:
        return next(r for r in results if r.size.name == size and r.scenario.startswith(prefix))

    plan = find("large", "(a)")
    onboarding = find("medium", "(c)")
    plan_limit = 1.15 * plan.floor_s + 0.5
    bare_cpu = plan.bare.cpu_s if plan.bare else 0.0
    diff_cpu = max(
        r.timings["compare_plan_cpu_s"]
        for r in results
        if r.size.name == "large" and "compare_plan_cpu_s" in r.timings
    )
    rss = max(r.run.peak_rss_mb for r in results if r.size.name == "large")
    writes = {r.size.name: r.run.writes for r in results if r.scenario.startswith("(d)")}
    over_formula = [
        f"{r.size.name} {r.scenario[:3]}"
        for r in results
        if r.formula is not None and r.run.reads > r.formula.total
    ]
    return [
        Target(
            "(a) large plan, wall time",
            f"≤ 1.15 x floor + 0.5 s = {plan_limit:.2f} s",
            f"{plan.run.wall_s:.2f} s (API span {plan.span_s:.2f} s, floor {plan.floor_s:.2f} s "
            f"with the sandbox's {plan.run.sandbox_cpu_s or 0:.2f} s of CPU)",
            plan.run.wall_s <= plan_limit,
        ),
        Target(
            "(a) large plan, the whole process's CPU",
            f"≤ a bare httpx loop's of the same reads = {bare_cpu:.2f} s",
            f"{plan.run.cpu_s:.2f} s",
            plan.bare is not None and plan.run.cpu_s <= bare_cpu,
        ),
        Target(
            "tool's own CPU for diff and plan (large)",
            "< 2 s",
            f"{diff_cpu:.2f} s",
            diff_cpu < 2,
        ),
        Target("peak RSS (large)", "≤ 100 MB", f"{rss:.0f} MB", rss <= 100),
        Target(
            "(d) apply with nothing to do",
            "0 write calls",
            ", ".join(f"{size}: {n}" for size, n in writes.items()),
            not any(writes.values()),
        ),
        Target(
            "(c) onboarding apply (medium), API span",
            f"≤ 1.3 x floor = {1.3 * onboarding.floor_s:.2f} s",
            f"{onboarding.span_s:.2f} s (wall {onboarding.run.wall_s:.2f} s with start-up)",
            onboarding.span_s <= 1.3 * onboarding.floor_s,
        ),
        Target(
            "read calls",
            "≤ formula, every run",
            "all within" if not over_formula else "over in " + ", ".join(over_formula),
            not over_formula,
        ),
    ]


def time_budget(plan: ScenarioResult) -> list[str]:
    """Where the large plan's wall time went, from the engine's own ``plan_timings``."""
    t, run = plan.timings, plan.run
    reads = max(1, run.reads)
    sandbox = run.sandbox_cpu_s or 0.0
    other = run.other_cpu_s or 0.0
    return [
        f"- the whole command: {run.wall_s:.2f} s, {run.cpu_s:.2f} s of the tool's CPU "
        f"(a bare httpx loop of the same reads, as its own process: "
        f"{_s(plan.bare.cpu_s if plan.bare else None)} of CPU)",
        f"- start-up before the first call (interpreter, imports, manifest of "
        f"{plan.size.workspaces:,} workspaces, records, client): {_s(plan.before_first_call_s)} "
        f"wall, {t['startup_cpu_s']:.2f} s of CPU",
        f"- the read: {t['read_s']:.2f} s for {run.reads} calls, "
        f"{t['read_s'] / plan.floor_s:.2f}x the floor of {plan.floor_s:.2f} s",
        f"- the tool's CPU during the read: {t['read_cpu_s']:.2f} s, "
        f"{1000 * t['read_cpu_s'] / reads:.2f} ms a call (HTTP, signing, decoding)",
        f"- the sandbox server's CPU: {sandbox:.2f} s, {1000 * sandbox / reads:.2f} ms a call, "
        f"{sandbox / max(plan.span_s, 1e-9):.0%} of one core over the API span",
        *_waited_line(plan),
        f"- after the last answer (compare, plan, render, exit): "
        f"{_s(plan.after_last_answer_s)} wall, of which compare and plan "
        f"{t['compare_plan_cpu_s']:.2f} s of CPU",
        f"- other processes on the machine meanwhile: {other:.2f} s of CPU",
    ]


def _waited_line(plan: ScenarioResult) -> list[str]:
    """What the sandbox's 20 ms really held a call, and the floor with that instead."""
    waited = plan.run.latency_waited_ms
    if waited is None:
        return []
    floor = floor_s(plan.calls, latency_ms=waited, sandbox_cpu_s=plan.run.sandbox_cpu_s or 0.0)
    return [
        f"- the sandbox's added latency of {LATENCY_MS} ms held a call {waited:.1f} ms on "
        f"average (its sleep ends when its one event loop, busy with the other calls in flight, "
        f"gets to it): with that instead of the setting the floor is {floor:.2f} s, and the "
        f"read {plan.span_s / floor:.2f}x it"
    ]


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


def shared_machine_warning(results: Sequence[ScenarioResult]) -> list[str]:
    """A warning when other work used a noticeable share of the CPU during the runs."""
    shared = [r for r in results if (r.run.other_cpu_s or 0.0) > SHARED_CPU_S]
    if not shared:
        return []
    worst = max(shared, key=lambda r: r.run.other_cpu_s or 0.0)
    return [
        f"**The machine was shared**: in {len(shared)} of {len(results)} rows other processes "
        f"used more than {SHARED_CPU_S} s of CPU (up to {worst.run.other_cpu_s or 0:.1f} s "
        f"during {worst.size.name} {worst.scenario[:3]}, see *other CPU*); with 2 cores, the "
        "tool and the sandbox then share one, and wall times and ratios grow.",
        "",
    ]


def _label(result: ScenarioResult) -> str:
    """A scenario's short name: its letter, and for scoped plans how many objects changed."""
    return result.scenario if result.scenario.startswith("(e)") else result.scenario[:3]


def write_results(
    machine: list[str],
    results: Sequence[ScenarioResult],
    targets: Sequence[Target],
    http_stack: str,
    peers: str,
    took: float,
) -> None:
    """The whole file: the runs above, the side-by-side run of the large plan (its own
    section, which ``bench_peers.py --write`` also replaces), and the sections of the
    benchmarks run on their own (the growth sizes), kept as they were."""
    table = render_table(("target", "limit", "measured", "met"), [t.row() for t in targets])
    kept = [marked(PEERS_SECTION, peers), *kept_sections((PEERS_SECTION,))]
    large_plan = next(r for r in results if r.size.name == "large" and r.scenario[:3] == "(a)")
    text = "\n".join(
        [
            "# Benchmark results",
            "",
            f"Written by `.venv/bin/python bench/run_all.py` in {took / 60:.1f} minutes. What each "
            "scenario and column means, and why the numbers are what they are: "
            "[bench/README.md](README.md).",
            "",
            "## Machine",
            "",
            *machine,
            "",
            "## Targets (issue 34, and the standing ones of issues 7 and 14)",
            "",
            table,
            "",
            *shared_machine_warning(results),
            "## Where the large plan's time goes",
            "",
            *time_budget(large_plan),
            "",
            "## One call's CPU: the client against a bare httpx GET",
            "",
            "`bench_http_stack.py`: 1,000 `workspace_info` reads, 8 at a time, in one process.",
            "",
            http_stack,
            "",
            "## Plans and applies, by size",
            "",
            "Median of the repeated runs; API calls as counted by the sandbox.",
            "",
            results_table(results),
            "",
            "Wall time of every run (s): "
            + "; ".join(f"{r.size.name} {_label(r)} {r.row()['walls']}" for r in results)
            + ".",
            "",
            *(section + "\n" for section in kept),
        ]
    )
    RESULTS.write_text(text, encoding="utf-8")


def peers_section(
    plan: PeersResult, onboarding: dict[str, Runs], machine: list[str], took_s: float
) -> str:
    """The large plan and the onboarding beside their bare peers (issue 47), as one section."""
    return "\n".join(
        [
            peers_report(plan, machine, took_s),
            "",
            f"### Onboarding beside its peer ({ONBOARDED_TEAMS} teams on the medium site)",
            "",
            "`.venv/bin/python bench/bench_onboard.py --peers --repeats 5` (each run on a fresh "
            "site; the apply as a user runs it, without `-v`):",
            "",
            onboard_peers_report(onboarding),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each scenario (median)")
    parser.add_argument(
        "--quiet-wait", type=float, default=QUIET_BUDGET_S, help="max seconds of waiting for idle"
    )
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    started = time.monotonic()
    gate = QuietGate(args.quiet_wait)
    machine = machine_description(describe_load(gate, gate.wait()))
    print("\n".join(machine), flush=True)
    results: list[ScenarioResult] = []
    for size in SIZES.values():
        results += bench_size(size, args.repeats, gate=gate)
        print(f"\n{size}:\n{results_table(results[-3:])}", flush=True)
    scoped = bench_scoped(args.repeats, gate=gate)
    results += scoped
    print(f"\nscoped plans:\n{results_table(scoped)}", flush=True)
    results.append(bench_onboarding(args.repeats, gate=gate))
    print(f"\nonboarding:\n{results_table(results[-1:])}", flush=True)
    http_stack = bench_http_stack(gate=gate)
    print(f"\nhttp stack:\n{http_stack}", flush=True)
    peers_started = time.monotonic()
    side_by_side = bench_peers(GROWTH_SIZES["large"], PEER_ROUNDS, gate=gate)
    onboarding = bench_onboard_peers(PEER_ROUNDS, gate=gate)
    peers = peers_section(side_by_side, onboarding, machine, time.monotonic() - peers_started)
    print(f"\n{peers}", flush=True)
    targets = check_targets(results) + [Target(*row) for row in scoped_targets(scoped)]
    print("\n" + render_table(("target", "limit", "measured", "met"), [t.row() for t in targets]))
    machine.append(f"- waited {gate.waited_s:.0f} s in all for other work to end before runs")
    write_results(machine, results, targets, http_stack, peers, time.monotonic() - started)
    print(f"\nwrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
