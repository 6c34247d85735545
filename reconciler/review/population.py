"""``review start``: the population of an access review, frozen from a whole-site report.

Every access of ``reconciler access`` (one person at one workspace) is one row, in the
report's order, with the words of its other formats (``access.words``) and the findings about
the person that bear on it; each row names the reviewers ``reviewers.assigned_reviewers``
assigns. Only a whole-site report is a population: a narrowed one would prove nothing about
the accesses it left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reconciler.access.model import Access, AccessFinding, AccessReport
from reconciler.access.words import flags_text, known_text
from reconciler.core.users import UserDirectory
from reconciler.model import LiveUser, Policy, Source, UserRef
from reconciler.review.model import REVIEWER_SEPARATOR, Cell, Review, Reviewer, sealed
from reconciler.review.reviewers import NO_OWNERS, Owners, assigned_reviewers

WORKSPACE_FINDINGS = frozenset({"undeclared"})
"""Findings about one access rather than the person: shown on that access's row only."""


def population(
    report: AccessReport,
    policy: Policy | None,
    users: Iterable[LiveUser],
    owners: Owners = NO_OWNERS,
) -> Review:
    """The review of ``report``'s accesses, sealed, nothing decided; ``policy`` (the
    manifest's, or None) names the reviewers and says whether the review is strict;
    ``users`` are the site's, whom the reviewers' references are resolved against."""
    if not report.scope.whole_site:
        raise ValueError("a review's population is the whole site")
    names = {person.id: person.name for person in report.people}
    about: dict[int, list[AccessFinding]] = {}
    for finding in report.findings:
        about.setdefault(finding.user_id, []).append(finding)

    def facts(entry: Access) -> dict[str, Cell]:
        reviewers = assigned_reviewers(entry.workspace, policy, owners)
        return {
            "workspace": entry.workspace,
            "workspace_id": entry.workspace_id,
            "person": entry.person,
            "user_id": entry.user_id,
            "email": entry.email,
            "name": names.get(entry.user_id, ""),
            "active": known_text(entry.active),
            "via": entry.via,
            "permissions": flags_text(entry.permissions, entry.permissions_from),
            "notifications": _notifications(entry),
            **{name: known_text(value) for name, value in entry.access_settings().items()},
            "manifest": entry.manifest or "",
            "expires": _expires(entry),
            "findings": ", ".join(_findings(entry, about.get(entry.user_id, []))),
            "reviewer": REVIEWER_SEPARATOR.join(reviewers),
        }

    strict = policy.review.strict if policy is not None else False
    rows = [facts(entry) for entry in report.entries]
    assigned = {r for row in rows for r in str(row["reviewer"]).split(REVIEWER_SEPARATOR) if r}
    reviewers = _identities(sorted(assigned), UserDirectory.of(users))
    return sealed(report.site, report.read_at, report.tool_version, strict, reviewers, rows)


def _identities(references: Iterable[str], directory: UserDirectory) -> tuple[Reviewer, ...]:
    """Each reviewer reference with the one account it names on the site (if it names one)."""
    found = []
    for reference in references:
        users = directory.candidates(UserRef(reference, Source("policy.reviewers")))
        if len(users) == 1:
            found.append(Reviewer(reference, users[0].id, users[0].username, users[0].email))
        else:
            found.append(Reviewer(reference))
    return tuple(found)


def _findings(entry: Access, findings: list[AccessFinding]) -> Iterator[str]:
    """The kinds of finding that bear on this access: those about the person, and an
    undeclared access's own."""
    for finding in findings:
        if finding.kind not in WORKSPACE_FINDINGS or entry.manifest == "not declared":
            yield finding.kind


def _expires(entry: Access) -> str:
    """When the manifest's grant ends: its date (time-boxed, or expired), ``standing`` for a
    declared access without one, nothing where the manifest grants nothing (or was not
    given)."""
    if entry.expires is not None:
        return entry.expires.isoformat()
    return "standing" if entry.manifest == "declared" else ""


def _notifications(entry: Access) -> str:
    """As the other reports word them, but in words where they write ``-`` (someone who is
    not a member gets none): a cell starting with ``-`` would read as a formula."""
    if entry.notifications_from == "not a member":
        return "none (not a member)"
    return flags_text(entry.notifications, entry.notifications_from)
