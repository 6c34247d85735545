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
from typing import Any, Literal

from reconciler.kinds import group, user, workspace
from reconciler.kinds.change import (
    NOTHING as NOTHING,
)
from reconciler.kinds.change import (
    FieldChange as FieldChange,
)
from reconciler.kinds.change import (
    FieldValue as FieldValue,
)
from reconciler.kinds.change import (
    Side as Side,
)
from reconciler.kinds.change import (
    field_value as field_value,
)

ObjectKind = Literal["workspace", "group", "user"]
ChangeKind = Literal[
    "create", "update", "replace", "delete", "needs-replacement", "renamed", "differs"
]

MEMBERS: Mapping[ObjectKind, str | None] = {
    "workspace": workspace.MEMBERS,
    "group": group.MEMBERS,
    "user": user.MEMBERS,
}
"""Which field of each kind says who belongs to an object (None: the kind has none)."""


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
