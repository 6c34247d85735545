"""Resolve the manifest's user references (username, e-mail or ID) against the site's users."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.model import DesiredSite, LiveUser, UserRef


@dataclass(frozen=True, slots=True)
class UserDirectory:
    """The site's users, indexed the three ways the manifest may name them.

    Usernames and e-mail addresses match without regard to case, as people type them; an
    exact match wins when two users differ only by case.
    """

    by_id: dict[int, LiveUser]
    by_name: dict[str, LiveUser]
    by_email: dict[str, LiveUser]
    exact: dict[str, LiveUser]

    @classmethod
    def of(cls, users: Iterable[LiveUser]) -> UserDirectory:
        by_id: dict[int, LiveUser] = {}
        by_name: dict[str, LiveUser] = {}
        by_email: dict[str, LiveUser] = {}
        exact: dict[str, LiveUser] = {}
        for user in users:
            by_id[user.id] = user
            if user.username:
                by_name.setdefault(user.username.casefold(), user)
                exact[user.username] = user
            if user.email:
                by_email.setdefault(user.email.casefold(), user)
                exact[user.email] = user
        return cls(by_id, by_name, by_email, exact)

    def find(self, ref: UserRef) -> LiveUser | None:
        if ref.kind == "id":
            return self.by_id.get(int(ref.text))
        if ref.text in self.exact:
            return self.exact[ref.text]
        index = self.by_email if ref.kind == "email" else self.by_name
        return index.get(ref.text.casefold())

    def label(self, user_id: int) -> str:
        """How reports name a user: the username, or ``#ID`` for a user the site did not list."""
        user = self.by_id.get(user_id)
        return user.username if user and user.username else f"#{user_id}"

    def labels(self, user_ids: Iterable[int]) -> list[str]:
        return sorted(self.label(user_id) for user_id in user_ids)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Manifest references mapped to user IDs, and the references the site does not know."""

    ids: dict[str, int]
    unknown: tuple[UserRef, ...]

    def ids_of(self, refs: Iterable[UserRef]) -> frozenset[int]:
        return frozenset(self.ids[ref.text] for ref in refs if ref.text in self.ids)


def resolve_references(desired: DesiredSite, directory: UserDirectory) -> Resolution:
    """Resolve every user reference of the manifest; unknown ones are kept with their source."""
    ids: dict[str, int] = {}
    unknown: list[UserRef] = []
    refs = [ref for ws in desired.workspaces for ref in ws.users]
    refs += [ref for group in desired.groups for ref in group.members]
    for ref in refs:
        user = directory.find(ref)
        if user is None:
            unknown.append(ref)
        else:
            ids[ref.text] = user.id
    return Resolution(ids, tuple(unknown))
