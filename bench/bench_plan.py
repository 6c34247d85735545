"""Benchmark: ``plan`` and ``apply`` of a managed site, at rest and after 5% drift.

For each size: seed the sandbox (latency 20 ms), write the matching manifest, adopt it once
(untimed), then time the real command over loopback, each scenario repeated:

    (a) ``plan`` with nothing to change (must print "No changes." and exit 0),
    (d) ``apply`` with nothing to do (must send no write call),
    (b) ``plan`` after 5% of the workspaces' memberships changed through the site API
        (must exit 2),

the sequential baseline reading the same facts one call at a time, and the bare httpx loop
reading them 8 at a time (``bare_httpx_reads.py``: the CPU the whole plan process is held to).

    .venv/bin/python bench/bench_plan.py [--size small|medium|large|all] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.baseline_sequential import read_site
from bench.measure import (
    ADMIN_KEY,
    ADMIN_SECRET,
    NO_WAIT,
    MeasurementError,
    QuietGate,
    SandboxSite,
    sandbox_site,
)
from bench.report import ScenarioResult, results_table
from bench.sites import (
    CONCURRENCY,
    LATENCY_MS,
    SIZES,
    MembershipDrift,
    ReadFormula,
    Size,
    manifest_for,
    membership_drift,
    site_seed,
    write_manifest,
)
from bench.steps import MANIFEST, adopt, repeat, tool_args
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.logs import configure_logging

BARE_LOOP = [sys.executable, str(Path(__file__).with_name("bare_httpx_reads.py"))]


def make_drift(site: SandboxSite, drift: list[MembershipDrift]) -> None:
    """Change memberships through the site API, as a person or another tool would."""

    async def go() -> None:
        config = ClientConfig(site.url, ADMIN_KEY, Secret(ADMIN_SECRET), concurrency=CONCURRENCY)
        async with SiteClient(config) as client:
            ids = {entry.name: entry.id for entry in await client.workspace_list()}
            await asyncio.gather(
                *(client.remove_from_workspace(d.removed_user, [ids[d.workspace]]) for d in drift),
                *(client.add_to_workspace(d.added_user, [ids[d.workspace]]) for d in drift),
            )

    asyncio.run(go())


def bench_size(
    size: Size, repeats: int, keep: bool = False, gate: QuietGate = NO_WAIT
) -> list[ScenarioResult]:
    """(a), (d), the baseline and (b) on one site: (b) comes last, its drift stays."""
    seed = site_seed(size)
    formula = ReadFormula.for_site(size.users, size.workspaces)
    with sandbox_site(seed, f"plan-{size.name}", LATENCY_MS, keep, gate) as site:
        write_manifest(site.workdir / MANIFEST, manifest_for(seed))
        adopt(site)
        at_rest = repeat(site, tool_args("plan", "--detailed-exitcode"), repeats, 0)
        bare = [site.measure(BARE_LOOP, ("bare httpx reads",)) for _ in range(repeats)]
        if bare[0].exit_code != 0 or bare[0].reads != at_rest[0].reads:
            raise MeasurementError(f"the bare loop did not read as the plan: {bare[0].stderr}")
        noop_apply = repeat(site, tool_args("apply", "--auto-approve"), repeats, 0)
        if any(run.writes for run in noop_apply):
            raise MeasurementError(f"apply with nothing to do sent writes: {noop_apply[0].calls}")
        site.gate.wait()
        baseline = read_site(site.url, (ws["name"] for ws in seed["workspaces"]))
        drift = membership_drift(seed)
        make_drift(site, drift)
        drifted = repeat(site, tool_args("plan", "--detailed-exitcode"), repeats, 2)
        if f"{len(drift)} to change" not in drifted[0].stdout:
            raise MeasurementError(f"the drift plan is not the expected one:\n{drifted[0].stdout}")
    return [
        ScenarioResult.of(size, "(a) plan, no changes", at_rest, formula, baseline, bare),
        ScenarioResult.of(size, f"(b) plan, {len(drift)} ws drifted", drifted, formula),
        ScenarioResult.of(size, "(d) apply, nothing to do", noop_apply, formula),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=[*sorted(SIZES), "all"], default="all")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each scenario (median)")
    parser.add_argument("--keep", action="store_true", help="keep manifests/state in bench/out/")
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    sizes = list(SIZES.values()) if args.size == "all" else [SIZES[args.size]]
    results = [result for size in sizes for result in bench_size(size, args.repeats, args.keep)]
    print(results_table(results))


if __name__ == "__main__":
    main()
