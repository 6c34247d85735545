"""The plan's second step, *resolve names*: what a read of the site must look for, taken from
the manifest once, before anything is read.

A read needs two things of the manifest, and only these: the names under which the site may
list a declared workspace (its own and those it had before, ``previously:``: the API cannot
rename, so the site may still use an old one), and the user references the declared objects
make (to verify them against the users the read returns, and to look up the others). The
read (``engine/read/site_read.py``) works from a ``Wanted`` and never from the manifest itself,
so the manifest goes from ``select`` to ``settle identities`` without a detour.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from reconciler.core.records import Records
from reconciler.core.users import Resolution, UserDirectory, resolve
from reconciler.identity import NameSet
from reconciler.model import DesiredSite, DesiredUser, UserRef


@dataclass(frozen=True, slots=True)
class Wanted:
    """The names and references of the declared objects, by kind and name."""

    old_names: dict[str, tuple[str, ...]]  # workspace -> the names it had before
    workspace_refs: dict[str, tuple[UserRef, ...]]  # workspace -> its users
    group_refs: dict[str, tuple[UserRef, ...]]  # group -> its members
    users: tuple[DesiredUser, ...]  # the declared users (their facts are compared)
    prune: bool = False  # policy.prune: a managed workspace that left may be deleted
    prune_users: bool = False  # policy.prune_users: a managed user who left may be deleted

    @classmethod
    def of(cls, desired: DesiredSite) -> Wanted:
        return cls(
            {ws.name: ws.previously for ws in desired.workspaces},
            {ws.name: ws.users for ws in desired.workspaces},
            {group.name: group.members for group in desired.groups},
            desired.users,
            desired.policy.prune,
            desired.policy.prune_users,
        )

    def leaving_workspaces(self, records: Records) -> list[str]:
        """Managed workspaces that left the manifest, where the policy may delete them: a
        plan reads their members to say who loses access with them."""
        if not self.prune:
            return []
        declared = NameSet("workspace", self.workspace_refs)
        return sorted(n for n in records.managed_workspaces() if n not in declared)

    def leaving_users(self, records: Records, names: Collection[str] | None = None) -> list[int]:
        """The IDs of managed users who left the manifest (of ``names`` only, when given),
        where the policy may delete them: a plan reads their workspaces to say which they
        lose."""
        if not self.prune_users:
            return []
        declared = NameSet("user", (user.username for user in self.users))
        chosen = None if names is None else NameSet("user", names)
        return sorted(
            record.id
            for name, record in records.users.items()
            if record.managed and name not in declared and (chosen is None or name in chosen)
        )

    @property
    def workspaces(self) -> list[str]:
        """Every declared workspace, by the manifest's name."""
        return list(self.workspace_refs)

    def with_old_names(self, names: Iterable[str]) -> list[str]:
        """``names`` of workspaces and the names they had before: the site may still use one
        (a workspace's details are read by the name the site lists)."""
        wanted = set(names)
        chosen = NameSet("workspace", wanted)
        old = {n for name, before in self.old_names.items() if name in chosen for n in before}
        return sorted(wanted | old)

    def within(
        self, workspaces: Collection[str], groups: Collection[str], users: Collection[str]
    ) -> Wanted:
        """What the objects of a scope (by the manifest's names) look for."""
        return Wanted(
            {n: old for n, old in self.old_names.items() if n in workspaces},
            {n: refs for n, refs in self.workspace_refs.items() if n in workspaces},
            {n: refs for n, refs in self.group_refs.items() if n in groups},
            tuple(user for user in self.users if user.username in users),
            self.prune,
            self.prune_users,
        )

    def references(self) -> list[UserRef]:
        """Every user reference, workspaces' then groups', in manifest order."""
        refs = [ref for refs in self.workspace_refs.values() for ref in refs]
        return refs + [ref for refs in self.group_refs.values() for ref in refs]

    def resolve(self, directory: UserDirectory) -> Resolution:
        """The references resolved against ``directory`` (``users.resolve``)."""
        return resolve(self.references(), self.users, directory)

    def look_ups(self) -> frozenset[str]:
        """What a scoped plan must look up on the site to resolve these references exactly as
        a read of every user would: every reference (a user its reads did not name may have
        it, in another case, as username or e-mail, and the reference then names two people:
        ``users.UserDirectory``), and every declared user's username and e-mail (their facts
        -- e-mail, administrator, active -- are compared, and only a look-up reports them
        all)."""
        texts = {ref.text for ref in self.references()}
        for user in self.users:
            texts |= {user.username, user.email}
        return frozenset(text for text in texts if text)

    def naming(self, texts: Collection[str]) -> tuple[set[str], set[str]]:
        """The workspaces and the groups that name one of ``texts``."""
        workspaces = {
            n for n, refs in self.workspace_refs.items() if any(r.text in texts for r in refs)
        }
        groups = {n for n, refs in self.group_refs.items() if any(r.text in texts for r in refs)}
        return workspaces, groups
