"""Targeted plans (``--target`` / ``--exclude``): plan only the objects a person names.

A pattern names workspaces, groups and users by name, with shell globs (``Finance*``,
``team-?``); ``KIND:PATTERN`` (``workspace:Legal``, ``group:*``, ``user:nina``) names one
kind only. A pattern matches names as the site compares them (``reconciler.identity``:
without regard to case or width), the glob applied to the folded forms. A declared user may
also be named by e-mail address, as every user reference may (``core/users.py``); a
pattern without a glob that names two people is an error. The objects a pattern can name
are those the manifest declares and those the records manage (so a managed object that left
the manifest can be targeted for its removal); an object the tool never managed is
never planned, targeted or not.

The selection becomes a ``Scope`` (``engine/read/scope.py``), so a targeted plan reads, resolves
and compares exactly like a change-scoped one: the touched objects are read fresh and every
user reference is resolved against the site, never from the records' memory. Nothing
outside the selection is compared, so nothing outside it -- prune included -- is acted on.
A declared user that a targeted workspace or group names goes with it (it must be created
before it can be given access), unless an ``--exclude`` names it.
"""

from __future__ import annotations

from dataclasses import replace

from reconciler.core.planning import PlanOptions
from reconciler.core.records import Records
from reconciler.engine.read.scope import FULL_PLAN_NOTICE, Scope, key, touched
from reconciler.engine.read.selection import (
    AmbiguousTarget,
    NothingTargeted,
    Selection,
    is_literal,
    matches,
)
from reconciler.identity import NameSet, username_key
from reconciler.model import DesiredSite


def select(
    desired: DesiredSite, records: Records, options: PlanOptions
) -> tuple[Scope | None, tuple[str, ...]]:
    """The first step of every plan: what it reads and plans -- everything (``None``), the
    objects ``--target``/``--exclude`` select, what changed since the last apply
    (``--changed``), or what changed within the target -- and what to say about that."""
    selection = Selection(options.targets, options.excludes)
    if selection:
        targeted = selected(desired, records, selection)
        if not options.changed:
            return targeted, ()
        changed = touched(desired, records)
        if changed is None:
            return targeted, (TARGET_NOT_NARROWED,)
        return narrowed(changed, targeted), ()
    if options.changed:
        scope = touched(desired, records)
        return (scope, ()) if scope is not None else (None, (FULL_PLAN_NOTICE,))
    return None, ()


TARGET_NOT_NARROWED = (
    "--changed: the records hold no account of what was last applied, so everything the "
    "target selects is planned, changed or not."
)


NAMES_HINT = (
    "Names match as the site compares them (case and width aside); globs * ? [..] and "
    "KIND:PATTERN (workspace:, group:, user:) are allowed. `reconciler validate --show` lists "
    "what the manifest declares."
)


def _universe(desired: DesiredSite, records: Records) -> dict[str, set[str]]:
    """Every object a pattern may name: declared, or managed by the tool -- once, by the
    manifest's spelling when the records spell its name otherwise."""
    found: dict[str, set[str]] = {
        "workspace": {ws.name for ws in desired.workspaces},
        "group": {g.name for g in desired.groups},
        "user": {u.username for u in desired.users},
    }
    managed = {
        "workspace": set(records.managed_workspaces()),
        "group": set(records.managed_groups()),
        "user": {name for name, record in records.users.items() if record.managed},
    }
    for kind, names in managed.items():
        declared = NameSet(kind, found[kind])
        found[kind] |= {name for name in names if name not in declared}
    return found


def _dependencies(desired: DesiredSite, workspaces: set[str], groups: set[str]) -> set[str]:
    """Declared users that the selected workspaces and groups name (by username or e-mail)."""
    texts = {
        username_key(r.text) for ws in desired.workspaces if ws.name in workspaces for r in ws.users
    }
    texts |= {username_key(r.text) for g in desired.groups if g.name in groups for r in g.members}
    return {
        u.username
        for u in desired.users
        if username_key(u.username) in texts or (u.email and username_key(u.email) in texts)
    }


def _aliases(desired: DesiredSite) -> dict[str, tuple[str, ...]]:
    """The other names a pattern may give a declared user by: its e-mail address."""
    return {u.username: (u.email,) for u in desired.users if u.email}


def _refuse_two_people(pattern: str, users: set[str], aliases: dict[str, tuple[str, ...]]) -> None:
    """A pattern written as one user's name must name one user: the rule of every user
    reference (one's username may be another's e-mail address)."""
    named = sorted(u for u in users if matches(pattern, "user", u, *aliases.get(u, ())))
    if is_literal(pattern.partition(":")[2] or pattern) and len(named) > 1:
        people = " and ".join(
            f'"{u}"' + (f" (e-mail {aliases[u][0]})" if u in aliases else "") for u in named
        )
        raise AmbiguousTarget(
            f'--target "{pattern}" names {len(named)} users: {people}.',
            hint="Name the user by username (user:USERNAME) where another's e-mail address "
            "reads the same.",
        )


def selected(desired: DesiredSite, records: Records, selection: Selection) -> Scope:
    """The scope of a targeted plan; ``NothingTargeted`` when a ``--target`` or an
    ``--exclude`` names nothing: a typo in a target would plan nothing, and one in an
    exclude would plan -- prune included -- the very object it meant to leave out."""
    universe = _universe(desired, records)
    aliases = _aliases(desired)

    def names_of(kind: str, name: str) -> tuple[str, ...]:
        return (name, *aliases.get(name, ())) if kind == "user" else (name,)

    for pattern in selection.targets:
        _refuse_two_people(pattern, universe["user"], aliases)
    for option, patterns in (("--target", selection.targets), ("--exclude", selection.excludes)):
        for pattern in patterns:
            if not any(
                matches(pattern, k, *names_of(k, n)) for k, names in universe.items() for n in names
            ):
                raise NothingTargeted(
                    f'{option} "{pattern}" names no workspace, group or user that the '
                    "manifest declares or the tool manages.",
                    hint=NAMES_HINT,
                )
    chosen = {
        kind: {n for n in names if selection.holds(kind, *names_of(kind, n))}
        for kind, names in universe.items()
    }
    needed = _dependencies(desired, chosen["workspace"], chosen["group"])
    chosen["user"] |= {
        n
        for n in needed
        if not any(matches(p, "user", *names_of("user", n)) for p in selection.excludes)
    }
    left_out = tuple(
        sorted(key(kind, n) for kind, names in universe.items() for n in names - chosen[kind])
    )
    return Scope(
        frozenset(chosen["workspace"]),
        frozenset(chosen["group"]),
        frozenset(chosen["user"]),
        frozenset(),
        sum(len(names) for names in universe.values()),
        records.last_full_read,
        selection=selection,
        left_out=left_out,
        changed_only=False,
    )


def narrowed(changed: Scope, targeted: Scope) -> Scope:
    """``--changed`` with a target: what changed, within the target."""
    return replace(
        targeted,
        workspaces=changed.workspaces & targeted.workspaces,
        groups=changed.groups & targeted.groups,
        users=changed.users & targeted.users,
        new_references=changed.new_references,
        changed_only=True,
    )


__all__ = ["NothingTargeted", "Selection", "narrowed", "select", "selected"]
