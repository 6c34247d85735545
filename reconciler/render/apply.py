"""The summary after an apply: what was done, what was not and why, what it cost."""

from __future__ import annotations

from reconciler.api.client import ClientStats
from reconciler.engine.executor import ApplyReport


def problem_lines(report: ApplyReport) -> list[str]:
    """One line per action that did not complete, with the reason."""
    return [
        f"  {outcome.status}: {outcome.action.summary()}: {outcome.detail}"
        for outcome in report.outcomes
        if outcome.status != "done"
    ]


def summary_line(report: ApplyReport, stats: ClientStats) -> str:
    writes = ", ".join(f"{m} {n}" for m, n in sorted(report.calls.items())) or "none"
    reads = stats.total - sum(report.calls.values())
    return (
        f"Apply {'complete' if report.complete else 'INCOMPLETE'}: {report.count('done')} done, "
        f"{report.count('failed')} failed, {report.count('skipped')} skipped, "
        f"{report.count('unknown')} of unknown outcome. API calls: {stats.total} "
        f"({reads} reads; writes: {writes}). Time: {report.seconds:.1f} s."
    )


INCOMPLETE_HINT = (
    "Nothing is lost: the tool recorded what happened. Fix what failed (see above) and run "
    "apply again; it picks up where this one stopped."
)
