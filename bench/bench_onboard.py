"""Benchmark (c): onboarding -- ``apply`` of 200 new teams (a workspace and a group each).

On the medium site (adopted, untimed), the manifest gains 200 ``teams:`` entries of 3-6
existing users each, and ``reconciler apply MANIFEST --auto-approve`` is timed: the read, the
plan and 400 writes in dependency order (groups, then workspaces), each phase's writes sent
concurrently. Every repeat starts from a fresh site, and each is checked: the apply completes,
and a plan after it has nothing left to do.

    .venv/bin/python bench/bench_onboard.py [--repeats 3] [--teams 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import NO_WAIT, CommandRun, MeasurementError, QuietGate, sandbox_site
from bench.report import ScenarioResult, results_table
from bench.sites import (
    LATENCY_MS,
    ONBOARDED_TEAMS,
    SIZES,
    ReadFormula,
    manifest_for,
    site_seed,
    with_teams,
    write_manifest,
)
from bench.steps import MANIFEST, adopt, expect_no_changes, tool_args

SIZE = SIZES["medium"]


def onboard_once(teams: int, keep: bool, gate: QuietGate) -> CommandRun:
    seed = site_seed(SIZE)
    with sandbox_site(seed, "onboard-medium", LATENCY_MS, keep, gate) as site:
        manifest = manifest_for(seed)
        write_manifest(site.workdir / MANIFEST, manifest)
        adopt(site)
        write_manifest(site.workdir / MANIFEST, with_teams(manifest, seed, teams))
        run = site.run(*tool_args("apply", "--auto-approve")).expect_exit(0)
        if "Apply complete" not in run.stdout:
            raise MeasurementError(f"the onboarding apply did not complete:\n{run.stdout[-2000:]}")
        if run.writes != 2 * teams:
            raise MeasurementError(f"expected {2 * teams} writes, the site saw {run.calls}")
        expect_no_changes(site)
    return run


def bench_onboarding(
    repeats: int, teams: int = ONBOARDED_TEAMS, keep: bool = False, gate: QuietGate = NO_WAIT
) -> ScenarioResult:
    runs = [onboard_once(teams, keep, gate) for _ in range(repeats)]
    formula = ReadFormula.for_site(SIZE.users, SIZE.workspaces)  # the teams do not exist yet
    return ScenarioResult.of(SIZE, f"(c) apply, {teams} new teams", runs, formula)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs, each on a fresh site")
    parser.add_argument("--teams", type=int, default=ONBOARDED_TEAMS)
    parser.add_argument("--keep", action="store_true", help="keep manifests/state in bench/out/")
    args = parser.parse_args()
    print(results_table([bench_onboarding(args.repeats, args.teams, args.keep)]))


if __name__ == "__main__":
    main()
