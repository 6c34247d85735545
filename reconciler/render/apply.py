"""The summary after an apply: what was done, what was not and why, what it cost.

``APPLY_FORMATS`` renders it for people (one summary line) or programs (a JSON report of
every action: ``docs/plan-format.md``, "The apply report").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.api.client import ClientStats
from reconciler.engine.apply.executor import ActionOutcome, ApplyReport
from reconciler.engine.planning.plan import Plan
from reconciler.findings import plural
from reconciler.render.escape import visible
from reconciler.render.formats import Format, Formats

APPLY_REPORT_FORMAT = 1  # the JSON report's "format": raised when a field changes meaning

LISTED = 10  # actions named one by one in an interruption report; the rest are counted


def problem_lines(report: ApplyReport) -> list[str]:
    """One line per action that did not complete, with the reason."""
    return [
        visible(f"  {outcome.status}: {outcome.action.summary()}: {outcome.detail}")
        for outcome in report.outcomes
        if outcome.status != "done"
    ]


def notice_lines(report: ApplyReport) -> list[str]:
    """One line per action that completed otherwise than its answer said (a doubted answer
    settled by reading the site, a deletion found already done): said, never silent."""
    return [
        visible(f"  note: {outcome.action.summary()}: {outcome.detail}")
        for outcome in report.outcomes
        if outcome.status == "done" and outcome.detail
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

REFUSED_HINT = (
    "Refused for safety: the check made as each deletion was to run said no (see above), and "
    "--force never overrides it. Everything else was applied; the refused objects were left "
    "as they are."
)


def interruption(plan: Plan | None, outcomes: Sequence[ActionOutcome]) -> tuple[str, bool]:
    """What an interrupted apply had done and had not: the message, and whether the site may
    have changed at all (``plan`` is None when it was stopped before any change began)."""
    if plan is None:
        return "Interrupted before any change was made: the site was not changed.", False
    made = [o.action.summary() for o in outcomes if o.status == "done"]
    finished = {o.action.id for o in outcomes if o.status == "done"}
    not_made = [a.summary() for a in plan.actions if a.id not in finished]
    lines = [
        f"Interrupted during apply: {len(made)} of {plural(len(plan.actions), 'change')} "
        f"made, {len(not_made)} not made."
    ]
    for heading, items in (("Made:", made), ("Not made:", not_made)):
        if items:
            lines += [heading, *(f"  {item}" for item in items[:LISTED])]
            if len(items) > LISTED:
                lines.append(f"  … and {len(items) - LISTED} more")
    return "\n".join(lines), True


@dataclass(frozen=True, slots=True)
class Applied:
    """What one apply did, for its report: the plan it carried out, the outcome of each action
    (``report`` is None when no API call was to be made), the API calls made, notes learnt,
    and how many of the plan's record changes it saved."""

    plan: Plan
    report: ApplyReport | None
    stats: ClientStats
    learnt: tuple[str, ...] = ()
    records_changed: int = 0

    @property
    def changed(self) -> bool:
        """Whether any action was carried out or any record change saved: what
        ``--detailed-exitcode`` tells apart (the plan counted both as changes)."""
        done = self.report is not None and self.report.count("done") > 0
        return done or self.records_changed > 0


def apply_data(applied: Applied) -> dict[str, Any]:
    """The JSON report: every action with its status and why, the counts, the calls."""
    report = applied.report or ApplyReport()
    writes = dict(sorted(report.calls.items()))
    return {
        "format": APPLY_REPORT_FORMAT,
        "site": applied.plan.site,
        "changed": applied.changed,
        "complete": report.complete,
        "refused": report.refused,
        "counts": {s: report.count(s) for s in ("done", "failed", "skipped", "unknown")},
        "record_changes": applied.records_changed,
        "actions": [
            {
                "id": outcome.action.id,
                "method": outcome.action.method,
                "summary": outcome.action.summary(),
                "status": outcome.status,
                "detail": outcome.detail,
                "refused": outcome.refused,
            }
            for outcome in report.outcomes
        ],
        "notes": list(applied.learnt),
        "api_calls": {
            "total": applied.stats.total,
            "reads": applied.stats.total - sum(writes.values()),
            "writes": writes,
        },
        "seconds": round(report.seconds, 3),
    }


def render_apply_text(applied: Applied) -> str:
    """The summary line (the plan, notes and problems went to the terminal as they came)."""
    saved = (
        f"Records saved: {plural(applied.records_changed, 'record change')}; the site was not "
        "changed by them.\n"
        if applied.records_changed
        else ""
    )
    if applied.report is None:
        return "\n" + saved if saved else ""
    return "\n" + summary_line(applied.report, applied.stats) + "\n" + saved


def render_apply_json(applied: Applied) -> str:
    return json.dumps(apply_data(applied), indent=1, ensure_ascii=False) + "\n"


APPLY_FORMATS: Formats[Applied] = Formats(
    Format("text", "people", lambda applied, view: render_apply_text(applied)),
    Format(
        "json",
        "programs (every action: done, failed or skipped, and why)",
        lambda applied, view: render_apply_json(applied),
    ),
)
