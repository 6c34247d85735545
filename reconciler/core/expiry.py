"""Access that ends on a date: the manifest as it wants the site on a given day.

A manifest grants time-boxed access three ways: an entry ``{user: bob, expires: 2026-12-31}``
of a workspace's ``users`` or a group's or team's ``members`` (``UserRef.expires``), and a
declared account with ``expires:`` (``DesiredUser.expires``), whose every reference by
username or e-mail address ends with it. From its date on, an entry is no longer wanted:
``as_of`` leaves it out of the desired site, so the comparison plans its removal exactly as
it plans that of an entry someone deleted, through the same guards. What ``as_of`` left out
(``Dated.expired``) and what ends within the notice window (``Dated.upcoming``) are kept, so
the plan can say why a removal happens (``Expiries``: cause ``expired``), list what expires
soon, and refuse a new grant that has already ended (``new_grants_expired``).

A day is one of ``reconciler.clock``'s: the clock is read once, by whoever calls ``as_of``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Literal, TypeVar

from reconciler.core.actions import UserKey
from reconciler.core.users import UserDirectory
from reconciler.errors import ManifestError
from reconciler.identity import name_key, username_key
from reconciler.model import DesiredSite, DesiredUser, Source, UserRef

GrantKind = Literal["workspace", "group", "user"]
K = TypeVar("K", bound=UserKey)


@dataclass(frozen=True, slots=True)
class Grant:
    """One time-boxed entry: ``person`` (the reference as written; an account's username)
    in the workspace or group ``name`` (for an account, ``kind`` user: its username)."""

    kind: GrantKind
    name: str
    person: str
    expires: date
    source: Source

    def expiring(self, day: date) -> Expiring:
        """The entry as a plan lists it on ``day``, before it ends."""
        return Expiring(self.kind, self.name, self.person, self.expires, (self.expires - day).days)

    def ended(self) -> str:
        """What ended: ``bob's access to "Finance" expired on 2026-12-31``."""
        if self.kind == "workspace":
            what = f'{self.person}\'s access to "{self.name}"'
        elif self.kind == "group":
            what = f'{self.person}\'s membership of the user group "{self.name}"'
        else:
            what = f"the account {self.person}"
        return f"{what} expired on {self.expires.isoformat()}"


@dataclass(frozen=True, slots=True)
class Expiring:
    """An entry that ends within the notice window, as a plan and drift list it: ``days``
    from the plan's day to the entry's end."""

    kind: GrantKind
    name: str
    person: str
    expires: date
    days: int

    def sentence(self) -> str:
        """What ends, and when: ``bob loses access to "Finance" on 2026-12-31 (in 5 days)``."""
        left = "in 1 day" if self.days == 1 else f"in {self.days} days"
        when = f"on {self.expires.isoformat()} ({left})"
        if self.kind == "workspace":
            return f'{self.person} loses access to "{self.name}" {when}'
        if self.kind == "group":
            return f'{self.person} leaves the user group "{self.name}" {when}'
        return f"the account {self.person} expires {when}"


@dataclass(frozen=True, slots=True)
class Dated:
    """The manifest as it wants the site on ``day``: ``site``, without the entries whose day
    has come (``expired``); ``upcoming``: those that end within the policy's notice window.
    ``preview``: ``day`` is not today (``--at``)."""

    site: DesiredSite
    day: date
    expired: tuple[Grant, ...] = ()
    upcoming: tuple[Grant, ...] = ()
    preview: bool = False

    def expiring(self) -> tuple[Expiring, ...]:
        """The upcoming entries, as the plan lists them."""
        return tuple(grant.expiring(self.day) for grant in self.upcoming)


def as_of(desired: DesiredSite, day: date, *, preview: bool = False) -> Dated:
    """``desired`` as it wants the site on ``day`` (``Dated``)."""
    accounts = _accounts(desired)
    if not accounts and not any(ref.expires for ref in _references(desired)):
        return Dated(desired, day, preview=preview)  # nearly every manifest: nothing to do
    window = day + timedelta(days=desired.policy.expiry_notice_days)
    expired: list[Grant] = []
    upcoming: list[Grant] = []

    def sorted_out(kind: GrantKind, name: str, refs: tuple[UserRef, ...]) -> tuple[UserRef, ...]:
        kept: list[UserRef] = []
        for ref in refs:
            ends = _ends(ref, accounts)
            if ends is not None and ends <= day:
                expired.append(Grant(kind, name, ref.text, ends, ref.source))
                continue
            if ends is not None and ends <= window:
                upcoming.append(Grant(kind, name, ref.text, ends, ref.source))
            kept.append(ref)
        return refs if len(kept) == len(refs) else tuple(kept)

    workspaces = tuple(
        replace(ws, users=sorted_out("workspace", ws.name, ws.users)) for ws in desired.workspaces
    )
    groups = tuple(
        replace(group, members=sorted_out("group", group.name, group.members))
        for group in desired.groups
    )
    users: list[DesiredUser] = []
    for user in desired.users:
        if user.expires is not None and user.expires <= window:
            grant = Grant("user", user.username, user.username, user.expires, user.source)
            (expired if user.expires <= day else upcoming).append(grant)
        if user.expires is None or user.expires > day:
            users.append(user)
    site = replace(desired, workspaces=workspaces, groups=groups, users=tuple(users))
    by_date = sorted(upcoming, key=lambda grant: (grant.expires, grant.person, grant.name))
    return Dated(site, day, tuple(expired), tuple(by_date), preview)


def time_boxed(desired: DesiredSite) -> Iterator[Grant]:
    """Every entry that ends, whatever the day: each member whose entry or account has an
    ``expires:``, and each such account (what access reports say of a standing grant's
    opposite)."""
    accounts = _accounts(desired)
    for kind, name, refs in _lists(desired):
        for ref in refs:
            ends = _ends(ref, accounts)
            if ends is not None:
                yield Grant(kind, name, ref.text, ends, ref.source)
    for user in desired.users:
        if user.expires is not None:
            yield Grant("user", user.username, user.username, user.expires, user.source)


def _accounts(desired: DesiredSite) -> dict[str, date]:
    """The declared accounts that end, by each of their logins (username, e-mail)."""
    return {
        username_key(text): user.expires
        for user in desired.users
        if user.expires is not None
        for text in (user.username, user.email)
        if text
    }


def _lists(desired: DesiredSite) -> Iterator[tuple[GrantKind, str, tuple[UserRef, ...]]]:
    for ws in desired.workspaces:
        yield "workspace", ws.name, ws.users
    for group in desired.groups:
        yield "group", group.name, group.members


def _references(desired: DesiredSite) -> Iterator[UserRef]:
    for ws in desired.workspaces:
        yield from ws.users
    for group in desired.groups:
        yield from group.members


def _ends(ref: UserRef, accounts: Mapping[str, date]) -> date | None:
    """When ``ref``'s access ends: its own date, or its account's, whichever comes first."""
    account = accounts.get(username_key(ref.text)) if accounts else None
    dates = [d for d in (ref.expires, account) if d is not None]
    return min(dates) if dates else None


@dataclass(frozen=True, slots=True)
class Expiries:
    """The expired entries by the users they name: why a plan removes an access."""

    members: Mapping[tuple[str, str, int], date] = field(default_factory=dict)
    accounts: Mapping[int, date] = field(default_factory=dict)

    @classmethod
    def of(cls, expired: Iterable[Grant], directory: UserDirectory) -> Expiries:
        """The expired entries resolved to user IDs, as the plan resolves references (an
        entry naming no user, or two, explains no removal)."""
        members: dict[tuple[str, str, int], date] = {}
        accounts: dict[int, date] = {}
        for grant in expired:
            found = directory.candidates(UserRef(grant.person, grant.source))
            if len(found) != 1:
                continue
            user_id = found[0].id
            if grant.kind == "user":
                accounts[user_id] = grant.expires
            else:
                members[(grant.kind, name_key(grant.kind, grant.name), user_id)] = grant.expires
        return cls(members, accounts)

    def people(self) -> frozenset[int]:
        """Everyone an entry names."""
        return frozenset(user for _, _, user in self.members) | frozenset(self.accounts)

    def member(self, kind: GrantKind, name: str, user: UserKey) -> date | None:
        """The day ``user``'s entry in the workspace or group ``name`` expired, if it did."""
        if not isinstance(user, int) or not self.members:
            return None
        return self.members.get((kind, name_key(kind, name), user))

    def expired_among(self, kind: GrantKind, name: str, users: Iterable[K]) -> frozenset[K]:
        """Those of ``users`` whose entry in the workspace or group ``name`` expired."""
        return frozenset(user for user in users if self.member(kind, name, user) is not None)

    def account(self, user: UserKey) -> date | None:
        """The day ``user``'s declared account expired, if it did."""
        return self.accounts.get(user) if isinstance(user, int) else None

    def note(
        self, kind: GrantKind, name: str, leaving: Iterable[UserKey], directory: UserDirectory
    ) -> str | None:
        """What a change says of the members it removes because their entries expired."""
        ended = sorted(
            (directory.label(user), day)
            for user in leaving
            if (day := self.member(kind, name, user)) is not None
        )
        return "; ".join(f"{label}: expired {day.isoformat()}" for label, day in ended) or None


NO_EXPIRIES = Expiries()


def new_grants_expired(expired: Iterable[Grant], created: Mapping[str, Iterable[str]]) -> None:
    """Refuse (``ManifestError``) an expired entry of an object this plan creates: a grant
    that ended before it was ever made is a mistake (a wrong year, most likely). ``created``:
    the names of the workspaces and groups the plan creates, by kind."""
    new = {kind: {name_key(kind, name) for name in names} for kind, names in created.items()}
    mistaken = [
        grant
        for grant in expired
        if grant.kind != "user" and name_key(grant.kind, grant.name) in new.get(grant.kind, ())
    ]
    if not mistaken:
        return
    lines = [f"{grant.source}: {grant.ended()}" for grant in mistaken]
    raise ManifestError(
        f"{len(mistaken)} new grant(s) have already expired:\n  " + "\n  ".join(lines),
        hint="Correct the date, or remove the entry: access that has ended is never granted.",
    )


def left_in_manifest(expired: Iterable[Grant], shown: int = 10) -> str | None:
    """What a plan says of the expired entries the manifest still lists: each ended (a
    removal is planned where the access is still held), and the files want tidying."""
    ended = list(expired)
    if not ended:
        return None
    listed = "; ".join(f"{grant.ended()} ({grant.source})" for grant in ended[:shown])
    more = f"; and {len(ended) - shown} more" if len(ended) > shown else ""
    return (
        f"The manifest lists {len(ended)} entr{'y' if len(ended) == 1 else 'ies'} past "
        f"{'its' if len(ended) == 1 else 'their'} expiry date: {listed}{more}. Where that access "
        "is still held, this plan removes it; `reconciler expire MANIFEST` removes the entries "
        "from the files."
    )
