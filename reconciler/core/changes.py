"""What a plan does to one object, for people: each field before and after, and why.

One shape for every kind, as Terraform's change (before, after, action) and octoDNS's
Create/Update/Delete have it. A ``Change`` names the object and what happens to it, and lists
the fields that change (``FieldChange``), each with what is there before and what the
manifest wants after, and how the before was learnt where it matters (``basis``):

* a create has nothing before (``NOTHING``): its fields are what the object is created with;
* a delete has nothing after, and lists no fields: what it held is gone with it;
* a change of who belongs to an object -- the field its kind names ``MEMBERS``, a workspace's
  ``users`` and a group's ``members`` -- lists only who differs: ``before`` those leaving,
  ``after`` those joining. Those who stay are no part of the change, and the tool cannot
  always say who they are (the site does not report a group's members);
* any other field (a setting that needs a replacement, a user the site shows otherwise) has
  its value on both sides.

What needs a replacement and which field holds the members is the kind's to declare
(``reconciler.kinds``); renderers, drift and the access delta read only this shape. A plan
file writes it as plan files always had it (``engine/planning/changes_format.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal

from reconciler.kinds import group, user, workspace
from reconciler.kinds.change import Basis

ObjectKind = Literal["workspace", "group", "user"]
ChangeKind = Literal[
    "create", "update", "replace", "delete", "needs-replacement", "renamed", "differs"
]

FieldValue = bool | int | str | tuple[str, ...] | None
"""A field's value as reports show it: a flag, a name, names or flags in order, or ``None``
(an override that is off)."""

MEMBERS: Mapping[ObjectKind, str | None] = {
    "workspace": workspace.MEMBERS,
    "group": group.MEMBERS,
    "user": user.MEMBERS,
}
"""Which field of each kind says who belongs to an object (None: the kind has none)."""


class Nothing(Enum):
    """No value on this side of a change: before a create, after a delete. Not ``None``,
    which is a value (an override that is off)."""

    NOTHING = "nothing"


NOTHING: Final = Nothing.NOTHING
Side = FieldValue | Literal[Nothing.NOTHING]
"""One side of a field's change: its value, or nothing (the object is not there)."""


def field_value(value: object) -> FieldValue:
    """``value`` as a change holds it: a set of names or flags sorted, a sequence kept in its
    order. ``TypeError`` for what no field holds (a plan file edited by hand)."""
    if isinstance(value, frozenset | set):
        value = sorted(value)
    if isinstance(value, list | tuple):
        if all(isinstance(item, str) for item in value):
            return tuple(value)
    elif value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"expected a field's value, not {value!r:.40}")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of an object: what is there before and what the manifest wants after."""

    field: str  # the name of a field of the kind's spec, or of its members
    before: Side = NOTHING
    after: Side = NOTHING
    basis: Basis | None = None  # how ``before`` was learnt; None: where it does not matter

    @property
    def joining(self) -> tuple[str, ...]:
        """Of a members field: who is in it after and not before."""
        return _only_in(self.after, self.before)

    @property
    def leaving(self) -> tuple[str, ...]:
        """Of a members field: who is in it before and not after."""
        return _only_in(self.before, self.after)


def _only_in(side: Side, other: Side) -> tuple[str, ...]:
    if not isinstance(side, tuple):
        return ()
    others = set(other) if isinstance(other, tuple) else set()
    return tuple(name for name in side if name not in others)


@dataclass(frozen=True, slots=True)
class Change:
    """What happens to one object, for people: renderers, drift and the access delta read it.

    ``note``, ``warning`` and ``hint`` are why, what it costs and what to do: said as they
    are, never derived from the fields. ``site_name`` is how the site spells the object
    where that is not the manifest's spelling (``site_spelling``): a reviewer sees which
    object the plan acts on. ``owners`` are those whose approval it needs, where the manifest
    declares ``ownership:`` (``reconciler.ownership.owners``).
    """

    kind: ObjectKind
    name: str
    action: ChangeKind
    id: int | None = None
    fields: tuple[FieldChange, ...] = ()
    note: str | None = None
    warning: str | None = None
    hint: str | None = None
    site_name: str | None = None
    owners: tuple[str, ...] = ()

    def is_membership(self, field: FieldChange) -> bool:
        """Whether ``field`` is who belongs to an object there before and after (a create's
        members are just what it is created with)."""
        return (
            field.field == MEMBERS[self.kind]
            and field.before is not NOTHING
            and field.after is not NOTHING
        )

    @property
    def membership(self) -> FieldChange | None:
        """Who joins and who leaves the object, if anyone does."""
        return next((f for f in self.fields if self.is_membership(f)), None)

    @property
    def changed_values(self) -> tuple[FieldChange, ...]:
        """The other fields whose value changes on an object there before and after."""
        return tuple(
            f
            for f in self.fields
            if not self.is_membership(f) and f.before is not NOTHING and f.after is not NOTHING
        )


def site_spelling(declared: str, on_site: str) -> str | None:
    """The site's spelling of an object the manifest names ``declared``, where it is another
    (outer spaces, width, case...): the two are one name as the site compares names
    (``reconciler.identity``), yet a reviewer must see which object is acted on."""
    return on_site if on_site != declared else None


def created(values: Mapping[str, object]) -> tuple[FieldChange, ...]:
    """The fields of an object to be created, in order: nothing before, ``values`` after."""
    return tuple(FieldChange(name, after=field_value(value)) for name, value in values.items())


def value_text(value: Any) -> str:
    """How every report writes a setting's value: one vocabulary for text, Markdown, drift."""
    if value is None:
        return "(no override)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)
