"""What the ``review`` commands print, and the evidence page a closed review leaves.

Text for a terminal or a CI log, one problem or outcome a line, every name written as the
text report writes names (``render.escape.visible``: a control or bidi character shown as an
escape, never acted on by the terminal). The evidence page is the template
``templates/review_evidence.html.j2`` (every value escaped by ``render/templating.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reconciler.access.words import counted
from reconciler.findings import plural
from reconciler.render.escape import visible
from reconciler.render.templating import render_html
from reconciler.review.check import Verdict
from reconciler.review.close import Closing
from reconciler.review.model import Review
from reconciler.review.revoke import Kind, Revocations

OUTCOME_ORDER: tuple[Kind, ...] = ("edited", "no change", "cannot", "kept, undeclared")


def population_line(review: Review) -> str:
    header = review.header
    return (
        f"{visible(review.origin)}: {counted(header.row_count, 'access', 'accesses')} of "
        f"{visible(header.site)}, read {visible(header.read_at)} (population digest "
        f"{visible(header.digest)})"
    )


def check_text(review: Review, verdict: Verdict) -> str:
    """Every problem, then the verdict and the decisions counted."""
    lines = [population_line(review)]
    lines += [f"  {p.severity}: {visible(p.message)}" for p in verdict.problems]
    decided = verdict.keep + verdict.revoke
    counts = f"{decided} of {verdict.rows} decided ({verdict.keep} keep, {verdict.revoke} revoke)"
    warnings = len(verdict.problems) - len(verdict.errors)
    if verdict.passed:
        also = f"; {plural(warnings, 'warning')}" if warnings else ""
        lines.append(f"Check passed: {counts}{also}.")
    else:
        lines.append(
            f"Check failed: {plural(len(verdict.errors), 'error')}, "
            f"{plural(warnings, 'warning')}; {counts}."
        )
    return "\n".join(lines) + "\n"


def apply_text(review: Review, done: Revocations, written: Iterable[str]) -> str:
    """Each decision that needs something, by outcome, then the files written and what next."""
    lines = [population_line(review)]
    revoked = sum(1 for row in review.rows if row.decision.verdict == "revoke")
    lines.append(f"{counted(revoked, 'revocation', 'revocations')}:")
    for kind in OUTCOME_ORDER:
        for outcome in done.of(kind):
            lines.append(f"  {kind}: {visible(outcome.row.label)}: {visible(outcome.detail)}")
    files = list(written)
    if files:
        lines.append(f"Wrote {', '.join(visible(f) for f in files)}.")
        lines.append(
            "Next: open a pull request with the change; its plan lists these revocations under "
            "who loses access. Once it is applied, `reconciler review close` proves them."
        )
    else:
        lines.append("No manifest file needed a change.")
    if done.of("cannot") or done.of("kept, undeclared"):
        lines.append("Some decisions need a person: see `cannot` and `kept, undeclared` above.")
    return "\n".join(lines) + "\n"


def close_text(closing: Closing, written: Iterable[str] = ()) -> str:
    """What is still on the site, or that every revocation is gone, and by which apply."""
    lines = [population_line(closing.review)]
    for revocation in closing.revocations:
        label = visible(revocation.row.label)
        if revocation.present:
            lines.append(f"  still on the site: {label}")
            continue
        removed = revocation.removed_by
        by = (
            f"removed by the apply of plan {removed.plan[:12]} ({visible(removed.applied_by)}, "
            f"{removed.applied_at})"
            if removed is not None
            else "gone, with no recorded apply ending it (by hand, or deleted outside the tool)"
        )
        lines.append(f"  gone: {label}: {by}")
    present = len(closing.still_present)
    if present:
        lines.append(
            f"Not closed: {plural(present, 'revoked access')} still on the site "
            f"(read {closing.read_at}). Apply the manifest change (or do what `review apply` "
            "said a person must), then close again."
        )
    else:
        gone = counted(len(closing.revocations), "revocation", "revocations")
        lines.append(f"Closed: {gone} gone from the site (read {closing.read_at}).")
    files = list(written)
    if files:
        lines.append(f"Wrote the evidence: {', '.join(visible(f) for f in files)}.")
    return "\n".join(lines) + "\n"


def evidence_html(evidence: Mapping[str, Any]) -> str:
    """The evidence JSON as one self-contained page."""
    return render_html("review_evidence.html.j2", **evidence)
