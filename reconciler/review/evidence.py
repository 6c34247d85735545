"""The evidence a closed review leaves: one JSON document (``REVIEW.evidence.json``), and the
same as one HTML page for people (``render/review_html.py``).

It says what an auditor asks of an access review: the population (its site, read time, row
count and digest: the file it was decided in can be checked against it), every decision
(who decided, when, why), and each revocation: gone from the site when the review was closed
(the site's read time), and the apply that removed it -- its plan's checksum, who ran it and
when, from the records -- or that no recorded apply did.
"""

from __future__ import annotations

from typing import Any

from reconciler.review.close import Closing, Revocation
from reconciler.review.model import Row, unneutralised

EVIDENCE_FORMAT = "site-reconciler-review-evidence"
EVIDENCE_FORMAT_VERSION = 1

DECISION_FIELDS = ("decision", "justification", "decided_by", "decided_at")


def evidence_data(closing: Closing, closed_by: str, tool_version: str) -> dict[str, Any]:
    """The evidence of ``closing`` (every revocation gone), closed by ``closed_by`` (who ran
    ``review close``, as the records name a holder)."""
    review = closing.review
    header = review.header
    revoked = closing.revocations
    return {
        "format": EVIDENCE_FORMAT,
        "format_version": EVIDENCE_FORMAT_VERSION,
        "site": header.site,
        "review_file": review.origin,
        "population": {
            "read_at": header.read_at,
            "tool_version": header.tool_version,
            "row_count": header.row_count,
            "digest": header.digest,
            "strict": header.strict,
        },
        "closed": {"at": closing.read_at, "by": closed_by, "tool_version": tool_version},
        "summary": {
            "rows": closing.verdict.rows,
            "keep": closing.verdict.keep,
            "revoke": closing.verdict.revoke,
            "removed_by_apply": sum(1 for r in revoked if r.removed_by is not None),
            "removed_otherwise": sum(1 for r in revoked if r.removed_by is None),
        },
        "warnings": [problem.message for problem in closing.verdict.problems],
        "decisions": [_decision(row) for row in review.rows],
        "revocations": [_revocation(r, closing.read_at) for r in revoked],
    }


def _access(row: Row) -> dict[str, Any]:
    return {
        "person": unneutralised(row.text("person")),
        "user_id": row.number("user_id"),
        "workspace": unneutralised(row.text("workspace")),
        "workspace_id": row.number("workspace_id"),
    }


def _decision(row: Row) -> dict[str, Any]:
    decision = row.decision
    return {
        **_access(row),
        "via": row.text("via"),
        "reviewer": list(row.reviewers),
        "decision": decision.verdict,
        "justification": decision.justification.strip(),
        "decided_by": decision.decided_by.strip(),
        "decided_at": decision.decided_at.strip(),
    }


def _revocation(revocation: Revocation, absent_at: str) -> dict[str, Any]:
    removed = revocation.removed_by
    return {
        **_access(revocation.row),
        "absent_at": absent_at,
        "removed_by": None
        if removed is None
        else {
            "plan": removed.plan,
            "applied_by": removed.applied_by,
            "applied_at": removed.applied_at,
            "records_version": removed.records_version,
        },
    }
