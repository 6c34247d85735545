"""Who reviews an access, and whether a name written in a review is a given person.

``assigned_reviewers`` is the one rule for the first: the workspace's owners, else
``policy.reviewers``. Owners come through ``Owners``: today nothing names them
(``NO_OWNERS``); when the manifest gains an ``ownership:`` section, its reader is passed here
and nothing else changes.

``names_person`` is the one rule for the second, the manifest's rule for a user reference
(``core.users.UserDirectory.candidates``: the ID for digits, else username or e-mail
address as the site compares them): a review compares ``decided_by`` with the row's person
(self-review) and with the assigned reviewers by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from reconciler.core.users import UserDirectory
from reconciler.identity import username_key
from reconciler.model import LiveUser, Policy, Source, UserRef


class Owners(Protocol):
    """Who owns a workspace, as the manifest says (empty: it names no owner)."""

    def of_workspace(self, workspace: str) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class _NoOwners:
    def of_workspace(self, workspace: str) -> tuple[str, ...]:
        return ()


NO_OWNERS: Owners = _NoOwners()
"""No workspace has an owner of its own: every one is reviewed by ``policy.reviewers``."""


def assigned_reviewers(
    workspace: str, policy: Policy | None, owners: Owners = NO_OWNERS
) -> tuple[str, ...]:
    """Who is to decide on access to ``workspace``: its owners, else ``policy.reviewers``
    (none without a manifest)."""
    return owners.of_workspace(workspace) or (policy.reviewers if policy is not None else ())


@dataclass(frozen=True, slots=True)
class People:
    """The people of a review (every person with access when it started), to tell whom a
    name means the way the site does."""

    directory: UserDirectory

    @classmethod
    def of(cls, people: Iterable[LiveUser]) -> People:
        return cls(UserDirectory.of(people))

    def meant(self, name: str) -> frozenset[int]:
        """The IDs ``name`` may mean (several: it is ambiguous, and may be each of them)."""
        ref = UserRef(name.strip(), Source("review"))
        return frozenset(user.id for user in self.directory.candidates(ref))

    def names_person(self, name: str, user_id: int | None, spellings: Iterable[str]) -> bool:
        """Whether ``name`` may mean the person of ``user_id``, written in the review as
        ``spellings`` (their username and e-mail address): erring towards "yes", which is
        the side a self-review check must err on."""
        if user_id is not None and user_id in self.meant(name):
            return True
        key = username_key(name)
        return any(key == username_key(text) for text in spellings if text)

    def same_person(self, first: str, second: str) -> bool:
        """Whether two names written in a review mean one person: the same text, as the
        site compares names, or a person both may mean."""
        if username_key(first) == username_key(second):
            return True
        return bool(self.meant(first) & self.meant(second))
