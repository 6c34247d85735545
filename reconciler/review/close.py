"""``review close``: whether every revocation took effect, and which apply carried it out.

A revocation took effect when the site, read now, holds no such access (the same user ID at
the same workspace ID, as ``access --since`` keys accesses): not as a member, not as an
administrator. Which apply removed it is the records' to say: each apply keeps the accesses
its done writes ended with its plan's run (``Records.plan_runs``, ``PlanRun.ended``); the
history of saved versions says who saved that plan's last version and when
(``state history``). An access that left the site with no recorded apply ending it was
removed by hand (or its account or workspace deleted outside the tool), and the evidence
says so rather than crediting an apply.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.access.model import AccessReport
from reconciler.core.records import AccessEnd
from reconciler.engine.records import document as records_document
from reconciler.review.check import Verdict, check_review
from reconciler.review.model import Review, Row
from reconciler.state.backend import RecordStore, VersionInfo
from reconciler.state.documents import parse_stamp


@dataclass(frozen=True, slots=True)
class RemovedBy:
    """The apply that ended an access: its plan, who saved its run, when, which version."""

    plan: str
    applied_by: str
    applied_at: str
    records_version: int


@dataclass(frozen=True, slots=True)
class Revocation:
    """A ``revoke`` decision and what became of it."""

    row: Row
    present: bool  # the site still holds the access
    removed_by: RemovedBy | None  # the apply that ended it; None: none recorded


@dataclass(frozen=True, slots=True)
class Closing:
    """A review checked, and each revocation looked for on the site read at ``read_at``."""

    review: Review
    verdict: Verdict
    read_at: str
    revocations: tuple[Revocation, ...]

    @property
    def still_present(self) -> tuple[Revocation, ...]:
        return tuple(r for r in self.revocations if r.present)

    @property
    def closed(self) -> bool:
        return self.verdict.passed and not self.still_present


def closing(review: Review, report: AccessReport, store: RecordStore) -> Closing:
    """What became of ``review``'s revocations, by the site as ``report`` read it and the
    applies the records of ``store`` hold since the review started."""
    verdict = check_review(review)
    held = {(entry.user_id, entry.workspace_id) for entry in report.entries}
    revoked = [row for row in review.rows if row.decision.verdict == "revoke"]
    applies = _applies_since(store, review.header.read_at) if revoked else []
    revocations = tuple(
        Revocation(row, row.key in held, _removed_by(row, applies)) for row in revoked
    )
    return Closing(review, verdict, report.read_at, revocations)


def _removed_by(
    row: Row, applies: Iterable[tuple[RemovedBy, frozenset[AccessEnd]]]
) -> RemovedBy | None:
    """The first apply that ended the row's access: by user and workspace, or by deleting
    either."""
    user, workspace = row.key
    ways = {(user, workspace), (user, None), (None, workspace)}
    return next((apply for apply, ended in applies if ways & ended), None)


def _applies_since(store: RecordStore, since: str) -> list[tuple[RemovedBy, frozenset[AccessEnd]]]:
    """Each apply saved at or after ``since``, oldest first, with the accesses it ended: from
    the last version its plan saved (the one that counts what ran)."""
    start = parse_stamp(since)
    last: dict[str, VersionInfo] = {}
    for info in store.history():
        if info.plan and parse_stamp(info.saved_at) >= start:
            last[info.plan] = info
    found = []
    for plan, info in sorted(last.items(), key=lambda item: item[1].version):
        snapshot = store.load_version(info.version)
        records = records_document.from_data(snapshot.data, site=store.site, where=store.location)
        run = records.plan_runs.get(plan)
        if run is not None and run.ended:
            removed = RemovedBy(plan, info.saved_by, info.saved_at, info.version)
            found.append((removed, frozenset(run.ended)))
    return found
