"""Steps the benchmark scenarios share: the measured command line and adopting a seeded site."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from bench.measure import CommandRun, MeasurementError, QuietGate, SandboxSite
from bench.report import ScenarioResult, results_table
from bench.sites import CONCURRENCY
from reconciler.kinds.registry import ACTION_TYPES
from reconciler.logs import configure_logging

MANIFEST = "site.yaml"
NO_CHANGES = "No changes."


def tool_args(command: str, *extra: str, manifest: str = MANIFEST) -> tuple[str, ...]:
    """The measured command line; JSON logs at -v carry ``plan_timings`` and ``api_call``."""
    return (
        command,
        manifest,
        *extra,
        "--concurrency",
        str(CONCURRENCY),
        "--log-format",
        "json",
        "-v",
        "--no-color",
    )


def repeat(site: SandboxSite, args: tuple[str, ...], times: int, *codes: int) -> list[CommandRun]:
    """``times`` runs of the command, each required to exit with one of ``codes``."""
    return [site.run(*args).expect_exit(*codes) for _ in range(times)]


def expect_no_changes(site: SandboxSite, manifest: str = MANIFEST) -> CommandRun:
    """A plan that must say "No changes." and exit 0 with ``--detailed-exitcode``."""
    check = site.run(*tool_args("plan", "--detailed-exitcode", manifest=manifest)).expect_exit(0)
    if NO_CHANGES not in check.stdout:
        raise MeasurementError(f"the plan is not empty:\n{check.stdout[-2000:]}")
    return check


GROUP_MEMBER_ADD = "add_to_user_group"


def adopt(site: SandboxSite, manifest: str = MANIFEST) -> None:
    """Record the seeded site as managed (untimed), and prove a plan then has nothing to do.

    The API cannot report a group's members and adopting records none (a guess is not a
    fact), so the first apply adds every declared member -- a no-op on the site, which
    already has them -- and records them, as on any adopted site. Only those additions may
    be sent.
    """
    site.run("adopt", manifest).expect_exit(0)
    learn = site.run("apply", manifest, "--auto-approve", "--no-color").expect_exit(0)
    other_writes = {
        method: n
        for method, n in learn.calls.items()
        if method in ACTION_TYPES and method != GROUP_MEMBER_ADD
    }
    if other_writes:
        raise MeasurementError(f"the apply after adopting changed the site: {other_writes}")
    expect_no_changes(site, manifest)


def standalone(
    doc: str,
    bench: Callable[[int, bool, QuietGate], list[ScenarioResult]],
    targets: Callable[[list[ScenarioResult]], list[tuple[str, str, str, bool]]],
) -> None:
    """A benchmark run on its own: ``--repeats``, ``--keep`` and ``--quiet-wait`` (as
    ``run_all.py``'s), its table, its targets."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each scenario (median)")
    parser.add_argument("--keep", action="store_true", help="keep manifests/state in bench/out/")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=0.0,
        help="seconds in all to wait for an idle machine before the measured runs",
    )
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    results = bench(args.repeats, args.keep, QuietGate(args.quiet_wait))
    print(results_table(results))
    for what, limit, measured, met in targets(results):
        print(f"{what}: {measured} (limit {limit}): {'met' if met else 'NOT met'}")
