"""A kind of object the tool manages, as the engine sees it: one object it loops over.

Each kind's package (``reconciler/kinds/<kind>/``) holds everything about the kind -- its
spec and name rule, its comparison with the site, its plan, its writes and what each write
does to access -- and exports one ``Kind`` (``kinds/<kind>/kind.py``). The engine knows the
kinds only through the registry (``kinds/registry.py``: ``KINDS``), never by name, as
octoDNS's zone knows its records only through each record's own ``changes``.

A kind's comparison gives one difference per object (``Diff``: every kind's has these
fields, and more of its own that only the kind reads); its plan turns them into what it
plans (``core/planning.py``: ``Planned``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Protocol

from reconciler.core.actions import WriteAction
from reconciler.core.changes import ObjectKind
from reconciler.core.planning import PlanInputs, Planned
from reconciler.core.records import Event, Records
from reconciler.core.users import Resolution
from reconciler.model import DesiredSite, LiveSite


class Diff(Protocol):
    """What every kind's difference of one object tells the engine."""

    @property
    def name(self) -> str:
        """The object's name, as the manifest (or the records) spell it."""

    @property
    def status(self) -> str:
        """``missing``, ``present``, ``extra``, ``renamed``, ``vanished`` (and a kind's own)."""

    @property
    def desired(self) -> Any:
        """The declaration (with ``previously`` and ``source``), or None: not declared."""

    @property
    def unobservable(self) -> tuple[str, ...]:
        """Facts of the object the site would not report and the records do not hold."""


Compare = Callable[[DesiredSite, LiveSite, Records, Resolution, list[str]], Sequence[Any]]
"""``(desired, live, records, resolution, conflicts) -> diffs``: one per declared or managed
object; a declared object the tool cannot act on is a sentence added to ``conflicts``."""

Plan = Callable[[Sequence[Any], PlanInputs], Planned]
"""``(diffs, inputs) -> Planned``: what the differences become."""


@dataclass(frozen=True, slots=True)
class Adoption:
    """What adopting the compared objects means: sentences on what is now managed and on the
    declared objects the site lacks (a plan will create them), and the events that record
    it."""

    adopted: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()

    def __add__(self, other: Adoption) -> Adoption:
        return Adoption(
            self.adopted + other.adopted, self.absent + other.absent, self.events + other.events
        )


Adopt = Callable[[Sequence[Any], Records], Adoption]
"""``(diffs, records) -> Adoption``: the declared objects on the site, recorded as managed."""

Lookalikes = Callable[[Sequence[Any], Set[tuple[str, str]], Set[tuple[str, str]]], list[str]]
"""``(diffs, deleted, created) -> warnings``: an object deleted while another of the same
content is created under another name -- a rename, most likely (``(kind, name)`` pairs)."""


def no_lookalikes(
    diffs: Sequence[Any], deleted: Set[tuple[str, str]], created: Set[tuple[str, str]]
) -> list[str]:
    """For a kind whose objects hold nothing a rename would lose."""
    return []


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """How a plan fingerprints the objects of a kind its actions depend on, to say in words
    what changed when a saved plan turns out stale (``engine/planning/facts.py``)."""

    keys: Callable[[Iterable[WriteAction]], set[str]]  # the objects the actions depend on
    facts: Callable[[LiveSite, Records, Iterable[str]], dict[str, Any]]  # JSON-able, by key
    changed: Callable[[str, Any, Any], str]  # (key, was, now) -> one sentence


Upgrade = Callable[[Mapping[str, Any], int], Mapping[str, Any]]
"""``(stored record, format version) -> record``: one of the kind's records as an older
version of the tool stored it, in the current format's shape."""


def as_stored(record: Mapping[str, Any], version: int) -> Mapping[str, Any]:
    """For a kind whose records every format stored alike."""
    return record


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of object, everything the engine does with it reached through here."""

    name: ObjectKind
    name_key: Callable[[str], str]  # when two spellings name one object (``identity.py``)
    actions: tuple[type[WriteAction], ...]  # its writes, one class each
    compare: Compare
    plan: Plan  # creations, updates, replacements: in the registry's order
    retire: Plan  # deletions of what left the manifest: in the reverse order, last
    adopt: Adopt
    fingerprint: Fingerprint
    lookalikes: Lookalikes = no_lookalikes
    upgrade: Upgrade = as_stored

    @property
    def section(self) -> str:
        """Its key in the sections of documents by kind (records, a plan's expected facts)."""
        return f"{self.name}s"
