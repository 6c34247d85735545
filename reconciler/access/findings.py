"""What an access review must look at first, one finding per person and kind.

* ``deactivated``: an account the site reports inactive that still holds access (is still a
  member of a workspace, or still an administrator).
* ``administrator``: every administrator -- they reach every workspace.
* ``expired`` (with a manifest): access the manifest granted until an ``expires:`` date that
  has passed, still on the site (the next apply removes it).
* ``undeclared`` (with a manifest): access the manifest does not declare, held by someone it
  names: a membership it does not list, or administrator status its ``users:`` does not give.
* ``unmanaged_user`` (with a manifest): someone the manifest never names who holds access.
* ``unusual_domain``: someone whose e-mail domain is not one of the site's usual domains:
  those held by at least ``USUAL_DOMAIN_SHARE`` of the site's users with an e-mail address
  (when none is that common, the most common one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from reconciler.access.identity import email_domain
from reconciler.access.model import Access, AccessFinding, FindingKind, Person
from reconciler.findings import plural

USUAL_DOMAIN_SHARE = 0.10
"""A domain at least this share of the site's users hold is usual (an organisation's own
domains and its long-standing partners'; a personal webmail address is rarely that common)."""

KIND_ORDER: tuple[FindingKind, ...] = (
    "deactivated",
    "administrator",
    "expired",
    "undeclared",
    "unmanaged_user",
    "unusual_domain",
)
LISTED = 5  # workspaces named in a finding's sentence; the finding lists them all


def usual_domains(emails: Iterable[str]) -> tuple[str, ...]:
    counts = Counter(d for d in map(email_domain, emails) if d is not None)
    total = sum(counts.values())
    usual = [domain for domain, n in counts.items() if n >= USUAL_DOMAIN_SHARE * total]
    if not usual and counts:
        usual = [counts.most_common(1)[0][0]]
    return tuple(sorted(usual))


def workspace_list(names: Sequence[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")


def access_findings(
    people: Iterable[Person], entries: Iterable[Access], usual: Sequence[str]
) -> tuple[AccessFinding, ...]:
    held: dict[int, list[Access]] = defaultdict(list)
    for entry in entries:
        held[entry.user_id].append(entry)
    found: list[AccessFinding] = []
    for person in people:
        mine = held.get(person.id, [])
        if mine:
            found += _about(person, mine, usual)
    rank = {kind: i for i, kind in enumerate(KIND_ORDER)}
    return tuple(sorted(found, key=lambda f: (rank[f.kind], f.person.casefold(), f.user_id)))


def _about(person: Person, mine: list[Access], usual: Sequence[str]) -> list[AccessFinding]:
    def finding(kind: FindingKind, detail: str, workspaces: Sequence[str] = ()) -> AccessFinding:
        return AccessFinding(kind, person.username, person.id, detail, tuple(workspaces))

    member_of = [e.workspace for e in mine if e.member]
    found = []
    if person.active is False and (member_of or person.administrator):
        holds = []
        if person.administrator:
            holds.append("an administrator")
        if member_of:
            holds.append(f"a member of {workspace_list(member_of)}")
        detail = "deactivated, yet still " + " and ".join(holds)
        found.append(finding("deactivated", detail, member_of))
    if person.administrator:
        every = plural(len(mine), "workspace")
        found.append(
            finding("administrator", f"reaches every workspace ({every}) as an administrator")
        )
    if person.in_manifest is False:
        names = [e.workspace for e in mine]
        detail = f"never named in the manifest, yet reaches {workspace_list(names)}"
        found.append(finding("unmanaged_user", detail, names))
    expired = [e for e in mine if e.manifest == "expired"]
    if expired:
        ended = [f"{e.workspace} (on {e.expires})" if e.expires else e.workspace for e in expired]
        detail = f"still a member of {workspace_list(ended)}, whose grant in the manifest expired"
        found.append(finding("expired", detail, [e.workspace for e in expired]))
    undeclared = [e for e in mine if e.manifest == "not declared"]
    if undeclared:
        as_member = [e.workspace for e in undeclared if e.member]
        found.append(finding("undeclared", _undeclared(undeclared), as_member))
    domain = email_domain(person.email)
    if domain is not None and usual and domain not in usual:
        detail = (
            f"e-mail domain {domain} is not one of the site's usual domains ({', '.join(usual)})"
        )
        found.append(finding("unusual_domain", detail))
    return found


def _undeclared(undeclared: list[Access]) -> str:
    as_member = [e.workspace for e in undeclared if e.member]
    parts = [f"a member of {workspace_list(as_member)}"] if as_member else []
    if any(not e.member for e in undeclared):
        parts.append("an administrator")
    return " and ".join(parts) + " on the site; the manifest does not say so"
