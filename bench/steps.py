"""Steps the benchmark scenarios share: the measured command line and adopting a seeded site."""

from __future__ import annotations

from bench.measure import CommandRun, MeasurementError, SandboxSite
from bench.sites import CONCURRENCY

MANIFEST = "site.yaml"
NO_CHANGES = "No changes."


def tool_args(command: str, *extra: str) -> tuple[str, ...]:
    """The measured command line; JSON logs at -v carry ``plan_timings`` and ``api_call``."""
    return (
        command,
        MANIFEST,
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


def expect_no_changes(site: SandboxSite) -> CommandRun:
    """A plan that must say "No changes." and exit 0 with ``--detailed-exitcode``."""
    check = site.run(*tool_args("plan", "--detailed-exitcode")).expect_exit(0)
    if NO_CHANGES not in check.stdout:
        raise MeasurementError(f"the plan is not empty:\n{check.stdout[-2000:]}")
    return check


def adopt(site: SandboxSite) -> None:
    """Record the seeded site as managed (untimed), and prove a plan then has nothing to do."""
    site.run("adopt", MANIFEST).expect_exit(0)
    expect_no_changes(site)
