"""The pieces every access report format is made of, so each says the same things in the same
words: the opening sentences, the findings' labels, the ``--since`` lines, the per-workspace
and per-person groupings, and one row of an access."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from reconciler.access.model import Access, AccessReport, AccessShift, Person, WorkspaceFacts
from reconciler.access.words import counted, flags_text, known_text
from reconciler.findings import plural

FINDING_LABELS = {
    "deactivated": "deactivated",
    "administrator": "administrator",
    "undeclared": "not declared",
    "unmanaged_user": "unmanaged user",
    "unusual_domain": "unusual domain",
}
COLUMNS = ("person", "via", "active", "permissions", "notifications", "manifest")


def opening(report: AccessReport) -> list[str]:
    """What the report is: the site, when, against what, how much."""
    if report.manifest is None:
        against = "no manifest given: whether each access is declared is not judged"
    else:
        against = "compared with the manifest " + ", ".join(report.manifest)
    scope = report.scope
    covers = " ".join(
        [*(f"--workspace {w}" for w in scope.workspaces), *(f"--user {u}" for u in scope.users)]
    )
    domains = ", ".join(report.usual_domains) or "none"
    return [
        f"Access on {report.site}, read at {report.read_at}; {against}.",
        f"Covers {covers or 'the whole site'}: {plural(len(report.workspaces), 'workspace')}, "
        f"{counted(len(report.people), 'person', 'people')}, "
        f"{counted(len(report.entries), 'access', 'accesses')}. Usual e-mail domains: {domains}.",
    ]


def since_heading(report: AccessReport) -> str | None:
    since = report.since
    if since is None:
        return None
    signed = since.previous_sign_off
    if signed.reviewer:
        by = f"signed off by {signed.reviewer}" + (f" on {signed.date}" if signed.date else "")
    else:
        by = "not signed off"
    return (
        f"Since the report of {since.previous_read_at} ({by}) to {since.read_at}: "
        f"{len(since.gained)} gained, {len(since.lost)} lost, {len(since.changed)} changed."
    )


def since_lines(report: AccessReport) -> list[tuple[str, str]]:
    """``(symbol, sentence)`` for each access gained, lost and changed."""
    if report.since is None:
        return []
    lines = [("+", f'{e.person} gained "{e.workspace}" ({e.via})') for e in report.since.gained]
    lines += [("-", f'{e.person} lost "{e.workspace}" ({e.via})') for e in report.since.lost]
    lines += [("~", shift_text(s)) for s in report.since.changed]
    return lines


def shift_text(shift: AccessShift) -> str:
    return f'{shift.person} in "{shift.workspace}": {shift.field} {shift.before} -> {shift.after}'


def workspace_title(ws: WorkspaceFacts) -> str:
    plain = "; ".join(f"{name} {known_text(value)}" for name, value in ws.access_settings().items())
    overrides = (
        f"permission override: {_override(ws.permissions)}; "
        f"notification override: {_override(ws.notifications)}"
        if ws.observed
        else "members and overrides not read"
    )
    return f'"{ws.name}" (id {ws.id}): {plain}; {overrides}'


def _override(flags: frozenset[str] | None) -> str:
    return "none" if flags is None else (", ".join(sorted(flags)) or "(none set)")


def row(entry: Access) -> dict[str, str]:
    """One access in words, by ``COLUMNS``."""
    return {
        "person": entry.person,
        "via": entry.via,
        "active": known_text(entry.active),
        "permissions": flags_text(entry.permissions, entry.permissions_from),
        "notifications": flags_text(entry.notifications, entry.notifications_from),
        "manifest": entry.manifest or "-",
    }


@dataclass(frozen=True, slots=True)
class Grouped:
    """The report's entries by workspace (in the report's order) and by person."""

    by_workspace: dict[int, list[Access]]
    by_person: dict[int, list[Access]]
    people: dict[int, Person]

    @classmethod
    def of(cls, report: AccessReport) -> Grouped:
        by_workspace: dict[int, list[Access]] = defaultdict(list)
        by_person: dict[int, list[Access]] = defaultdict(list)
        for entry in report.entries:
            by_workspace[entry.workspace_id].append(entry)
            by_person[entry.user_id].append(entry)
        return cls(by_workspace, by_person, {p.id: p for p in report.people})


def person_summary(person: Person, entries: list[Access]) -> str:
    """One person in one sentence: who, whether active, what they reach and how."""
    who = f"{person.username} <{person.email}>" if person.email else person.username
    if person.name:
        who += f" ({person.name})"
    facts = [f"active {known_text(person.active)}"]
    if person.administrator:
        facts.append(f"administrator: reaches {plural(len(entries), 'workspace')}")
    member_of = [f'"{e.workspace}"' for e in entries if e.member]
    if member_of:
        facts.append(f"member of {', '.join(member_of)}")
    if person.in_manifest is False:
        facts.append("never named in the manifest")
    return f"{who}: {'; '.join(facts)}"
