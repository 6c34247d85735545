"""Benchmark (c): onboarding -- ``apply`` of 200 new teams (a workspace and a group each).

On the medium site (adopted, untimed), the manifest gains 200 ``teams:`` entries of 3-6
existing users each, and ``reconciler apply MANIFEST --auto-approve`` is timed: the read, the
plan and 400 writes in dependency order (groups, then workspaces), each phase's writes sent
concurrently. Every repeat starts from a fresh site, and each is checked: the apply completes,
and a plan after it has nothing left to do.

With ``--peers`` (issue 47) the apply, as a user runs it, is compared run for run with its
peer, ``bare_aiohttp_onboard.py``: the same calls with bare aiohttp in the same order of
dependence (the plan's reads, the groups' phase, the workspaces' phase), each on a fresh
site, the two interleaved; the peer must make the apply's calls by method and leave the site
as the apply leaves it. Target: the apply's wall at most 1.15 x the peer's.

    .venv/bin/python bench/bench_onboard.py [--repeats 3] [--teams 200] [--peers]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import (
    NO_WAIT,
    CommandRun,
    MeasurementError,
    QuietGate,
    SandboxSite,
    busy_cores,
    sandbox_site,
)
from bench.peers import Runs, peers_table, same_calls
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
from reconciler.logs import configure_logging

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


APPLY, PEER = "reconciler apply", "bare aiohttp onboarding"
PEER_SCRIPT = Path(__file__).with_name("bare_aiohttp_onboard.py")
PEER_LIMIT = 1.15


def _written(site: SandboxSite) -> dict[str, object]:
    """What onboarding made: the site's workspaces and groups (IDs left out: a site's own)."""
    state = site.control("state")
    return {
        "workspaces": sorted(
            (ws["name"], sorted(ws["members"]), ws["root_access"], ws["override_permissions"])
            for ws in state["workspaces"]
        ),
        "groups": sorted((g["name"], sorted(g["members"])) for g in state["groups"]),
    }


def _onboarded_by(name: str, teams: int, keep: bool, gate: QuietGate) -> tuple[CommandRun, object]:
    """One onboarding on a fresh medium site, by the tool or by its peer."""
    seed = site_seed(SIZE)
    with sandbox_site(
        seed, f"onboard-{'peer' if name == PEER else 'tool'}", LATENCY_MS, keep, gate
    ) as site:
        manifest = manifest_for(seed)
        onboarded = with_teams(manifest, seed, teams)
        if name == PEER:
            teams_file = site.workdir / "teams.json"
            teams_file.write_text(json.dumps(onboarded["teams"]), encoding="utf-8")
            command = [sys.executable, str(PEER_SCRIPT), str(teams_file)]
            run = site.measure(command, (PEER,)).expect_exit(0)
        else:
            write_manifest(site.workdir / MANIFEST, manifest)
            site.control("settings", {"latency_ms": 0})
            adopt(site)
            site.control("settings", {"latency_ms": LATENCY_MS})
            write_manifest(site.workdir / MANIFEST, onboarded)
            run = site.run("apply", MANIFEST, "--auto-approve", "--no-color").expect_exit(0)
            if "Apply complete" not in run.stdout:
                raise MeasurementError(f"the apply did not complete:\n{run.stdout[-2000:]}")
        return run, _written(site)


def bench_onboard_peers(
    repeats: int, teams: int = ONBOARDED_TEAMS, keep: bool = False, gate: QuietGate = NO_WAIT
) -> dict[str, Runs]:
    """``repeats`` rounds of the apply and its peer, each on a fresh site, in turn (the
    first of a round alternating); checked: the same calls, the same site afterwards."""
    runs: dict[str, list[CommandRun]] = {APPLY: [], PEER: []}
    idle: dict[str, list[float]] = {APPLY: [], PEER: []}
    made: dict[str, object] = {}
    for number in range(repeats):
        for name in (APPLY, PEER) if number % 2 == 0 else (PEER, APPLY):
            gate.wait()
            idle[name].append(busy_cores(0.5) or 0.0)
            run, written = _onboarded_by(name, teams, keep, gate)
            runs[name].append(run)
            made.setdefault(name, written)
    same_calls(runs[APPLY][0].calls, PEER, runs[PEER][0])
    if made[APPLY] != made[PEER]:
        raise MeasurementError("the peer did not leave the site as the apply left it")
    return {name: Runs(name, tuple(runs[name]), tuple(idle[name])) for name in runs}


def onboard_peers_report(results: dict[str, Runs]) -> str:
    apply, peer = results[APPLY], results[PEER]
    met = apply.wall_s <= PEER_LIMIT * peer.wall_s
    return "\n".join(
        [
            peers_table(results, reference=PEER),
            "",
            f"- onboarding ({SIZE}, {apply.runs[0].writes} writes): the apply's wall "
            f"{apply.wall_s / peer.wall_s:.2f}x its peer's ({apply.wall_s:.2f} s / "
            f"{peer.wall_s:.2f} s; limit {PEER_LIMIT:.2f}x): {'met' if met else '**not met**'}",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs, each on a fresh site")
    parser.add_argument("--teams", type=int, default=ONBOARDED_TEAMS)
    parser.add_argument("--keep", action="store_true", help="keep manifests/state in bench/out/")
    parser.add_argument("--peers", action="store_true", help="the apply beside its bare peer")
    args = parser.parse_args()
    if args.peers:
        configure_logging("console", verbosity=0)
        print(onboard_peers_report(bench_onboard_peers(args.repeats, args.teams, args.keep)))
        return
    print(results_table([bench_onboarding(args.repeats, args.teams, args.keep)]))


if __name__ == "__main__":
    main()
