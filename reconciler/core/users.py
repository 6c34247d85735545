"""Resolve the manifest's user references (username, e-mail or ID) against the site's users.

A reference may read several ways: ``1002`` is an ID but may also be someone's username, and
one user's username may be another's e-mail address. A reference that names two different
users is an error naming both: guessing would give access to the wrong person.

A reference to a user the manifest declares (``users:``) that the site does not have yet
resolves to ``AfterApply(username)``: the apply creates that user first and binds the ID.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reconciler.core.actions import AfterApply, UserKey
from reconciler.identity import same_name, username_key
from reconciler.model import DesiredSite, DesiredUser, LiveUser, UserRef


@dataclass(frozen=True, slots=True)
class UserDirectory:
    """The site's users, indexed every way the manifest may name them.

    One rule resolves every user reference -- the manifest's, ``--target``'s, ``--user``'s:
    the candidates are the user of that ID (for digits) and every user whose username or
    e-mail address is the reference as the site compares them (``reconciler.identity``:
    without regard to case or width). An exact spelling never hides a folded one: the site
    does not tell ``Carol.Carter@acme.test`` from ``carol.carter@acme.test``, so a reference
    that is one user's username and another's e-mail names both, and that is an error.
    """

    by_id: dict[int, LiveUser]
    folded: dict[str, list[LiveUser]]

    @classmethod
    def of(cls, users: Iterable[LiveUser]) -> UserDirectory:
        by_id: dict[int, LiveUser] = {}
        folded: dict[str, list[LiveUser]] = {}
        for user in users:
            by_id[user.id] = user
            name = username_key(user.username) if user.username else None
            if name is not None:
                folded.setdefault(name, []).append(user)
            mail = username_key(user.email) if user.email else None
            if mail is not None and mail != name:
                folded.setdefault(mail, []).append(user)
        return cls(by_id, folded)

    def candidates(self, ref: UserRef) -> list[LiveUser]:
        """Every distinct user ``ref`` may mean, by ID; more than one is an ambiguity."""
        named = self.folded.get(username_key(ref.text), [])
        if ref.kind != "id" and len(named) < 2:  # nearly every reference: no one or one user
            return list(named)
        found: dict[int, LiveUser] = {}
        if ref.kind == "id" and int(ref.text) in self.by_id:
            found[int(ref.text)] = self.by_id[int(ref.text)]
        for user in named:
            found.setdefault(user.id, user)
        return sorted(found.values(), key=lambda user: user.id)

    def label(self, user: UserKey) -> str:
        """How reports name a user: the username, ``#ID`` for a user the site did not list,
        or the username and "(new user)" for one this apply creates."""
        if isinstance(user, AfterApply):
            return f"{user.username} (new user)"
        found = self.by_id.get(user)
        return found.username if found and found.username else f"#{user}"

    def labels(self, users: Iterable[UserKey]) -> tuple[str, ...]:
        return tuple(sorted(self.label(user) for user in users))


def user_order(user: UserKey) -> tuple[bool, int, str]:
    """Sorts IDs (by number) before users known only after apply (by name)."""
    if isinstance(user, AfterApply):
        return (True, 0, user.username)
    return (False, user, "")


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """A reference that names more than one user."""

    ref: UserRef
    users: tuple[LiveUser, ...]
    declared: str | None = None  # a user the manifest declares and the site does not have yet

    def meanings(self) -> list[str]:
        """Each person the reference may mean: username, e-mail and ID."""
        meanings = [
            f"user {u.id} (username {u.username!r}, e-mail {u.email!r})" for u in self.users
        ]
        if self.declared is not None:
            meanings.append(f"the new user {self.declared!r} the manifest declares")
        return meanings

    def describe(self) -> str:
        return (
            f'{self.ref.source}: "{self.ref.text}" could mean {" and ".join(self.meanings())}; '
            f"{self.remedy()}"
        )

    def remedy(self) -> str:
        """How to name one of them without doubt: a numeric ID is one account."""
        ids = " or ".join(str(u.id) for u in self.users)
        if self.declared is not None:
            return (
                f"write the numeric ID ({ids}) for the site's user, or declare the new one "
                "under another username"
            )
        return f"write the numeric ID ({ids}) of the one meant"


@dataclass(frozen=True, slots=True)
class Resolution:
    """Manifest references mapped to user IDs; the unknown and ambiguous ones, with sources."""

    ids: dict[str, int]
    unknown: tuple[UserRef, ...] = ()
    ambiguous: tuple[Ambiguity, ...] = ()
    new: dict[str, str] = field(default_factory=dict)  # reference -> declared, absent username

    def ids_of(self, refs: Iterable[UserRef]) -> frozenset[UserKey]:
        """The users ``refs`` name: IDs, and users this apply creates."""
        found: set[UserKey] = set()
        for ref in refs:
            if ref.text in self.ids:
                found.add(self.ids[ref.text])
            elif ref.text in self.new:
                found.add(AfterApply(self.new[ref.text]))
        return frozenset(found)


def references(desired: DesiredSite) -> list[UserRef]:
    """Every user reference of the manifest, in manifest order."""
    refs = [ref for ws in desired.workspaces for ref in ws.users]
    return refs + [ref for group in desired.groups for ref in group.members]


def _declared_index(users: Iterable[DesiredUser]) -> dict[str, DesiredUser]:
    index: dict[str, DesiredUser] = {}
    for user in users:
        index.setdefault(username_key(user.username), user)
        index.setdefault(username_key(user.email), user)
    return index


def _is(user: LiveUser, declared: DesiredUser) -> bool:
    """Whether the site's ``user`` is the declared one (same username or same e-mail)."""
    return same_name("user", user.username, declared.username) or (
        bool(user.email) and same_name("user", user.email, declared.email)
    )


def resolve_references(desired: DesiredSite, directory: UserDirectory) -> Resolution:
    """Resolve every user reference of the manifest; the rest are kept with their source."""
    return resolve(references(desired), desired.users, directory)


def resolve(
    refs: Iterable[UserRef], declared_users: Iterable[DesiredUser], directory: UserDirectory
) -> Resolution:
    """Resolve ``refs`` against the site's users (``directory``) and the users the manifest
    declares (a reference to one the site does not have yet is bound after apply)."""
    ids: dict[str, int] = {}
    new: dict[str, str] = {}
    unknown: list[UserRef] = []
    ambiguous: dict[str, Ambiguity] = {}
    declared = _declared_index(declared_users)
    for ref in refs:
        if ref.text in ids or ref.text in ambiguous or ref.text in new:
            continue
        found = directory.candidates(ref)
        twin = declared.get(username_key(ref.text))
        if found and twin is not None and not any(_is(user, twin) for user in found):
            # "1002" is user 1002, and also the username of a user the manifest declares and
            # the site does not have yet: granting either would be a guess
            ambiguous[ref.text] = Ambiguity(ref, tuple(found), declared=twin.username)
        elif len(found) == 1:
            ids[ref.text] = found[0].id
        elif found:
            ambiguous[ref.text] = Ambiguity(ref, tuple(found))
        elif ref.kind != "id" and twin is not None:
            new[ref.text] = twin.username
        else:
            unknown.append(ref)
    return Resolution(ids, tuple(unknown), tuple(ambiguous.values()), new)
