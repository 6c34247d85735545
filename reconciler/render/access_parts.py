"""The pieces every access report format is made of, so each says the same things in the same
words: the opening sentences, the findings' labels, the ``--since`` lines, the per-workspace
and per-person groupings, and one row of an access."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reconciler.access.identity import person_key, workspace_key
from reconciler.access.model import Access, AccessReport, AccessShift, Person, WorkspaceFacts
from reconciler.access.words import counted, flags_text, known_text, manifest_text
from reconciler.findings import plural

FINDING_LABELS = {
    "deactivated": "deactivated",
    "administrator": "administrator",
    "expired": "expired",
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
    names = Namesakes.of(report)
    lines = [("+", names.access(e, "gained")) for e in report.since.gained]
    lines += [("-", names.access(e, "lost")) for e in report.since.lost]
    lines += [("~", names.shift(s)) for s in report.since.changed]
    return lines


@dataclass(frozen=True, slots=True)
class Namesakes:
    """The names that mean two accounts or two workspaces in a ``--since`` section (an
    account made again under its username, two workspaces of one name): there each is shown
    with its ID, and an account with its e-mail address, so that the lines read apart."""

    people: frozenset[str]  # person_key of usernames held by more than one user ID
    workspaces: frozenset[str]  # workspace_key of names held by more than one workspace ID

    @classmethod
    def of(cls, report: AccessReport) -> Namesakes:
        since = report.since
        entries = (*since.gained, *since.lost) if since else ()
        shifts = since.changed if since else ()
        people = [(p.username, p.id) for p in report.people]
        people += [(e.person, e.user_id) for e in entries]
        people += [(s.person, s.user_id) for s in shifts if s.user_id is not None]
        places = [(w.name, w.id) for w in report.workspaces]
        places += [(e.workspace, e.workspace_id) for e in entries]
        places += [(s.workspace, s.workspace_id) for s in shifts if s.workspace_id is not None]
        return cls(_shared(people, person_key), _shared(places, workspace_key))

    def access(self, entry: Access, verb: str) -> str:
        """``dave (ID 1004, dave@acme.example) lost "Ops" (ID 7, member)``; no IDs where the
        names say it alone."""
        person = entry.person
        if person_key(entry.person) in self.people:
            person += f" (ID {entry.user_id}{', ' + entry.email if entry.email else ''})"
        workspace_id = f"ID {entry.workspace_id}, " if self._namesake(entry.workspace) else ""
        return f'{person} {verb} "{entry.workspace}" ({workspace_id}{entry.via})'

    def shift(self, shift: AccessShift) -> str:
        person, place = shift.person, f'"{shift.workspace}"'
        if shift.user_id is not None and person_key(shift.person) in self.people:
            person += f" (ID {shift.user_id})"
        if shift.workspace_id is not None and self._namesake(shift.workspace):
            place += f" (ID {shift.workspace_id})"
        return f"{person} in {place}: {shift.field} {shift.before} -> {shift.after}"

    def _namesake(self, workspace: str) -> bool:
        return workspace_key(workspace) in self.workspaces


def _shared(named: Iterable[tuple[str, int]], key: Callable[[str], str]) -> frozenset[str]:
    """The keys of the names held by more than one ID."""
    ids: dict[str, set[int]] = defaultdict(set)
    for name, number in named:
        ids[key(name)].add(number)
    return frozenset(name for name, numbers in ids.items() if len(numbers) > 1)


def workspace_title(ws: WorkspaceFacts) -> str:
    plain = "; ".join(f"{name} {known_text(value)}" for name, value in ws.access_settings().items())
    overrides = (
        f"permission override: {_override(ws.permissions)}; "
        f"notification override: {_override(ws.notifications)}"
        if ws.observed
        else "members and overrides not read"
    )
    owners = f"; owners: {', '.join(ws.owners)}" if ws.owners else ""
    return f'"{ws.name}" (id {ws.id}): {plain}; {overrides}{owners}'


def _override(flags: frozenset[str] | None) -> str:
    return "none" if flags is None else (", ".join(sorted(flags)) or "(none set)")


def row(entry: Access) -> dict[str, str]:
    """One access in words, by ``COLUMNS``."""
    return dict(zip(COLUMNS, row_texts(entry), strict=True))


def row_texts(entry: Access) -> tuple[str, ...]:
    """One access in words, in the order of ``COLUMNS``: a table's row."""
    return (
        entry.person,
        entry.via,
        known_text(entry.active),
        flags_text(entry.permissions, entry.permissions_from),
        flags_text(entry.notifications, entry.notifications_from),
        manifest_text(entry),
    )


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
