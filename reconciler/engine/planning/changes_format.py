"""How a plan file writes a change: the keys plan files have always had (docs/plan-format.md).

A ``Change`` is one shape for every kind (``core/changes.py``); a plan file keeps the keys
its readers know, so that plans saved by earlier releases still read and every plan keeps
its checksum:

* a create's fields as ``settings``, by name and in order; a group's members beside them as
  ``members`` (a group has no settings);
* who joins and who leaves as ``members_added`` and ``members_removed``, with their ``basis``;
* any other field in ``fields``, each ``{field, before, after, basis}``.

``_Written`` is that shape as a type, so that the codec writes it and reads it as strictly as
every document; ``write_change`` and ``read_change`` go between the two (the plan's
document, ``engine/planning/plan.py``, writes and reads its changes with them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler import codec
from reconciler.core.changes import (
    MEMBERS,
    NOTHING,
    Change,
    ChangeKind,
    FieldChange,
    FieldValue,
    ObjectKind,
    Side,
    field_value,
)
from reconciler.kinds.change import Basis

APART = "members"
"""The key a plan file writes a created group's members under, beside ``settings`` (a
workspace's users stand among its settings), as plan files always have."""


@dataclass(frozen=True, slots=True)
class _WrittenField:
    field: str
    before: FieldValue
    after: FieldValue
    basis: Basis | None


@dataclass(frozen=True, slots=True)
class _Written:
    """A change as a plan file holds it, its keys in this order (those at their default are
    left out)."""

    kind: ObjectKind
    name: str
    action: ChangeKind
    id: int | None = None
    settings: Mapping[str, FieldValue] | None = None
    members: tuple[str, ...] | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    basis: Basis | None = None
    fields: tuple[_WrittenField, ...] = ()
    note: str | None = None
    warning: str | None = None
    hint: str | None = None
    site_name: str | None = None
    owners: tuple[str, ...] = ()


codec.rename(_Written, omit_defaults=True, added="members_added", removed="members_removed")
codec.hook(
    FieldValue, lambda value: list(value) if isinstance(value, tuple) else value, field_value
)


def write_change(change: Change) -> Any:
    """A change as a plan file's ``changes`` hold it."""
    return codec.to_data(_written(change), _Written)


def read_change(data: Any) -> Change:
    """A change of a plan file's ``changes``; ``codec.DecodeError`` (a ``ValueError``) where
    it is not one."""
    return _change(codec.from_data(data, _Written))


def _written(change: Change) -> _Written:
    created = [f for f in change.fields if f.before is NOTHING]
    membership = change.membership
    others = [f for f in change.fields if f.before is not NOTHING and f is not membership]
    return _Written(
        change.kind,
        change.name,
        change.action,
        change.id,
        settings={f.field: _value(f.after) for f in created if f.field != APART} or None,
        members=next((_names(f.after) for f in created if f.field == APART), None),
        added=membership.joining if membership else (),
        removed=membership.leaving if membership else (),
        basis=membership.basis if membership else None,
        fields=tuple(
            _WrittenField(f.field, _value(f.before), _value(f.after), f.basis) for f in others
        ),
        note=change.note,
        warning=change.warning,
        hint=change.hint,
        site_name=change.site_name,
        owners=change.owners,
    )


def _change(written: _Written) -> Change:
    fields = [FieldChange(name, after=value) for name, value in (written.settings or {}).items()]
    if written.members is not None:
        fields.append(FieldChange(APART, after=written.members))
    if written.added or written.removed or written.basis is not None:
        members = MEMBERS[written.kind]
        if members is None:
            raise ValueError(f'the {written.kind} "{written.name}" has no members to change')
        fields.append(FieldChange(members, written.removed, written.added, written.basis))
    fields += [FieldChange(f.field, f.before, f.after, f.basis) for f in written.fields]
    return Change(
        written.kind,
        written.name,
        written.action,
        written.id,
        tuple(fields),
        written.note,
        written.warning,
        written.hint,
        written.site_name,
        written.owners,
    )


def _value(side: Side) -> FieldValue:
    if side is NOTHING:  # a delete lists no fields: a plan file has no place for one
        raise ValueError("a field with nothing after it is not written in a plan file")
    return side


def _names(side: Side) -> tuple[str, ...]:
    if not isinstance(side, tuple):
        raise TypeError(f"expected the names of members, not {side!r:.40}")
    return side
