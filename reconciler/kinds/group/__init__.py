"""The user group kind: its name identity and what the tool records of a group.

A group has no settings besides its members, and the site cannot report those: what the
tool knows of them is what it recorded applying (``RecordedGroup``). Nothing of a group is
ever replaced (``REQUIRES_REPLACEMENT`` is empty): members join and leave in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from cattrs.gen import make_dict_unstructure_fn, override

from reconciler import codec
from reconciler.kinds.change import Origin, fold

KIND = "group"

REQUIRES_REPLACEMENT: frozenset[str] = frozenset()
"""Groups are never replaced: their members change in place."""

MEMBERS = "members"
"""The field that says who belongs to a group, its only one: a plan's change of it lists who
joins and who leaves (``core/changes.py``)."""


def name_key(name: str) -> str:
    """The identity of a user group name: how names of groups are compared wherever they are
    (``reconciler.identity`` holds the tables that use it)."""
    return fold(name)


@dataclass(frozen=True, slots=True)
class RecordedGroup:
    """A user group the tool created, adopted or changed the members of.

    ``members`` are the memberships the tool applied: the site cannot report them. They are
    known only when ``members_known`` (the tool created the group, or applied every declared
    member since). ``uncertain`` marks a ``user_group_add`` whose outcome could not be checked.
    ``unsure``: users whose last membership change was interrupted (an apply killed while it
    was on its way): whether they are members now is unknown, so the next plan sends what its
    manifest wants for them, whichever way.
    """

    id: int | None
    managed: bool = False
    origin: Origin | None = None
    members: frozenset[int] = frozenset()
    members_known: bool = False
    uncertain: bool = False
    source: str | None = None
    unsure: frozenset[int] = frozenset()


# Records written before ``unsure`` existed stay byte for byte the same while it is empty.
codec.converter.register_unstructure_hook(
    RecordedGroup,
    make_dict_unstructure_fn(RecordedGroup, codec.converter, unsure=override(omit_if_default=True)),
)
