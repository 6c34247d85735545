"""Change-scoped plans: read and plan only the objects that changed since the last apply.

A full plan reads the whole site (on 1,000 workspaces, 1,100 calls) even when a pull request
touches one workspace. The records know what was last applied: for every declared object the
digest of its desired form when the site last matched it, and every user reference resolved.
The *touched set* is every object whose desired form differs from that, that was added to or
removed from the manifest, that has a write of unknown outcome, that names a user never
resolved before, or that ``workspace_list`` shows gone or renamed. Only those are read and
planned; nothing outside the set is ever acted on. ``drift`` (always a full read) checks the
rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from reconciler import aio, codec
from reconciler.core.records import Records, UnreadableWrite
from reconciler.core.users import references
from reconciler.engine.apply.pending import pending_writes
from reconciler.engine.read.selection import Selection
from reconciler.identity import same_name, username_key
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredUser,
    DesiredWorkspace,
    LiveSite,
    UserRef,
)

Key = str  # "workspace:Finance", "group:finance-team", "user:nina"


def key(kind: str, name: str) -> Key:
    return f"{kind}:{name}"


def _digest(form: dict[str, Any]) -> str:
    text = json.dumps(form, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_declared = codec.converter.copy()
_declared.register_unstructure_hook(UserRef, lambda ref: ref.text)  # the reference, not where

NOT_DECLARED = ("name", "username", "source", "team", "previously")
"""Fields that say which object it is and where it was written, not what it should be."""


def digest_of(obj: DesiredWorkspace | DesiredGroup | DesiredUser) -> str:
    """A digest of everything the manifest says of ``obj`` (not where it says it).

    Every field counts, by the model's codec: a field added to the model is part of the
    digest without a change here, so a change-scoped plan never misses a change to it.
    References are a set (their order means nothing) and e-mail addresses are caseless.
    """
    form: dict[str, Any] = _declared.unstructure(obj)
    for field in NOT_DECLARED:
        form.pop(field, None)
    for refs in ("users", "members"):
        if refs in form:
            form[refs] = sorted(set(form[refs]))
    if isinstance(form.get("email"), str):
        form["email"] = username_key(form["email"])
    return _digest(form)


Declared = DesiredWorkspace | DesiredGroup | DesiredUser


def declared_objects(desired: DesiredSite) -> list[tuple[Key, Declared]]:
    """Every object ``desired`` declares, under its key."""
    return [
        *((key("workspace", ws.name), ws) for ws in desired.workspaces),
        *((key("group", g.name), g) for g in desired.groups),
        *((key("user", u.username), u) for u in desired.users),
    ]


def declared_digests(desired: DesiredSite) -> dict[Key, str]:
    """The digest of every object ``desired`` declares."""
    return {found: digest_of(obj) for found, obj in declared_objects(desired)}


async def digests_meanwhile(desired: DesiredSite) -> dict[Key, str]:
    """``declared_digests(desired)`` made a slice at a time while an apply's writes travel
    (``aio.in_slices``): its bookkeeping needs them after the last write, where a 200-team
    onboarding's took some 18 ms."""
    objects = declared_objects(desired)
    values = await aio.in_slices(objects, lambda item: digest_of(item[1]))
    return {found: value for (found, _), value in zip(objects, values, strict=True)}


@dataclass(frozen=True, slots=True)
class Scope:
    """What a change-scoped plan reads and plans."""

    workspaces: frozenset[str]
    groups: frozenset[str]
    users: frozenset[str]
    new_references: frozenset[str]  # reference texts never resolved before
    total: int  # objects declared or managed: what a full plan would consider
    last_full_read: str | None
    selection: Selection | None = None  # --target/--exclude (engine/read/targets.py)
    left_out: tuple[Key, ...] = ()  # what the selection left out
    changed_only: bool = True  # False: a targeted plan of everything selected

    def to_data(self) -> dict[str, list[str]]:
        return {
            "workspaces": sorted(self.workspaces),
            "groups": sorted(self.groups),
            "users": sorted(self.users),
        }

    def holds(self, kind: str, name: str) -> bool:
        names = {"workspace": self.workspaces, "group": self.groups, "user": self.users}
        return name in names.get(kind, frozenset())

    @property
    def size(self) -> int:
        return len(self.workspaces) + len(self.groups) + len(self.users)

    def site_of(self, desired: DesiredSite) -> DesiredSite:
        """The manifest restricted to the touched set (policy and files unchanged)."""
        return replace(
            desired,
            workspaces=tuple(ws for ws in desired.workspaces if ws.name in self.workspaces),
            groups=tuple(g for g in desired.groups if g.name in self.groups),
            users=tuple(u for u in desired.users if u.username in self.users),
        )

    def records_of(self, records: Records) -> Records:
        """The records of the touched objects only: nothing else can be deleted or changed."""
        return replace(
            records,
            workspaces={n: r for n, r in records.workspaces.items() if n in self.workspaces},
            groups={n: r for n, r in records.groups.items() if n in self.groups},
            users={n: r for n, r in records.users.items() if n in self.users},
        )

    def within(self) -> Scope:
        """This scope without what its selection leaves out: widening (hand edits, moved
        references) never pulls an object from outside a ``--target`` into the plan."""
        if self.selection is None:
            return self
        holds = self.selection.holds
        return replace(
            self,
            workspaces=frozenset(n for n in self.workspaces if holds("workspace", n)),
            groups=frozenset(n for n in self.groups if holds("group", n)),
            users=self.users,  # users are selected with their dependants
        )

    def describe(self) -> str:
        if self.selection is not None:
            return self._describe_selection(self.selection)
        parts = [
            f"{len(names)} {label}"
            for names, label in (
                (self.workspaces, "workspace(s)"),
                (self.groups, "group(s)"),
                (self.users, "user(s)"),
            )
            if names
        ]
        read = ", ".join(parts) or "nothing"
        since = self.last_full_read or "never"
        return (
            f"Scoped to what changed since the last apply: planned {self.size} of "
            f"{self.total} objects ({read}); {self.total - self.size} not read. The last full "
            f"read was {since}. `reconciler drift` checks the rest (or plan without --changed)."
        )

    def _describe_selection(self, selection: Selection) -> str:
        what = (
            " (what changed since the last apply, within the target)" if self.changed_only else ""
        )
        left = (
            f"Left out ({len(self.left_out)}): {names_text(self.left_out)}."
            if self.left_out
            else "Nothing was left out."
        )
        return (
            f"Targeted ({selection.describe()}): planned {self.size} of {self.total} "
            f"objects{what}; nothing outside the target is read, changed or deleted (prune "
            f"included). {left}"
        )


def names_text(keys: Iterable[str], limit: int = 20) -> str:
    """``workspace "A", group "b"`` ... for a notice: at most ``limit`` names."""
    listed = sorted(keys)
    words = [f'{k.split(":", 1)[0]} "{k.split(":", 1)[1]}"' for k in listed[:limit]]
    more = len(listed) - limit
    return ", ".join(words) + (f" and {more} more" if more > 0 else "")


FULL_PLAN_NOTICE = (
    "--changed: the records hold no account of what was last applied (no apply with this "
    "version of the tool yet, or no records at all), so this is a full plan. The next apply "
    "records it; later plans can then be scoped."
)


def touched(desired: DesiredSite, records: Records) -> Scope | None:
    """The touched set, or None when only a full plan can be trusted."""
    if records.last_full_read is None:
        return None
    sets: dict[str, set[str]] = {"workspace": set(), "group": set(), "user": set()}
    digests = declared_digests(desired)
    for name_key, digest in digests.items():
        if records.digests.get(name_key) != digest:
            kind, name = name_key.split(":", 1)
            sets[kind].add(name)
    for kind, table in (
        ("workspace", records.workspaces),
        ("group", records.groups),
        ("user", records.users),
    ):
        for name, record in table.items():
            if record.managed and key(kind, name) not in digests:
                sets[kind].add(name)  # removed from the manifest
    for name, recorded in records.groups.items():
        if recorded.uncertain:
            sets["group"].add(name)
    for action in pending_writes(records):
        if isinstance(action, UnreadableWrite):
            return None  # a write the tool cannot read back: only a full read can tell
        for kind, name in action.touches():
            sets[kind].add(name)
    new_refs = {r.text for r in references(desired) if r.text not in records.references}
    for ws in desired.workspaces:
        if any(r.text in new_refs for r in ws.users):
            sets["workspace"].add(ws.name)
    for declared in desired.groups:
        if any(r.text in new_refs for r in declared.members):
            sets["group"].add(declared.name)
    total = len(set(digests) | {key(k, n) for k, t in _tables(records) for n in t})
    return Scope(
        frozenset(sets["workspace"]),
        frozenset(sets["group"]),
        frozenset(sets["user"]),
        frozenset(new_refs),
        total,
        records.last_full_read,
    )


def _tables(records: Records) -> list[tuple[str, Iterable[str]]]:
    return [
        ("workspace", [n for n, r in records.workspaces.items() if r.managed]),
        ("group", [n for n, r in records.groups.items() if r.managed]),
        ("user", [n for n, r in records.users.items() if r.managed]),
    ]


def widened(scope: Scope, live: LiveSite, records: Records) -> Scope:
    """``scope`` with the managed workspaces and groups the site no longer shows under their
    recorded ID and name: deleted (to create again) or renamed by hand (to report)."""
    on_site = {ws.id: ws.name for ws in live.workspaces}
    moved = [
        name
        for name, record in records.managed_workspaces().items()
        if not same_name("workspace", on_site.get(record.id, ""), name)
    ]
    groups = {group.id: group.name for group in live.groups}
    gone = (
        [
            name
            for name, record in records.managed_groups().items()
            if record.id is not None and not same_name("group", groups.get(record.id, ""), name)
        ]
        if live.groups_listed
        else []
    )
    workspaces = scope.workspaces | frozenset(moved)
    return replace(scope, workspaces=workspaces, groups=scope.groups | frozenset(gone))
