"""The drift report: what changed on the site behind the manifest's back, by category.

Drift is a plan read the other way round, so it is computed from a plan (made without
``--replace``): one source of truth for "what differs". A difference the tool cannot judge --
group members it has no record of -- is reported as unobservable, never as missing.

The report is typed (``DriftReport``, frozen); ``to_data`` is its JSON, written only at the
edge (``drift --format json``, a webhook's body). Each item carries, beside the sentence
people read, what it is in fields (``action``, ``differences``, ``refs``): drift news keys
items by those, so a sentence can be reworded without making old items news.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from reconciler import codec
from reconciler.access.words import drift_sentence
from reconciler.core.changes import MEMBERS, Change, FieldChange, value_text
from reconciler.engine.planning.plan import Plan

Category = Literal[
    "missing",
    "extra",
    "changed",
    "needs_replacement",
    "records",
    "unmanaged",
    "unobservable",
    "expiring",
]
CATEGORIES: tuple[Category, ...] = (
    "missing",
    "extra",
    "changed",
    "needs_replacement",
    "records",
    "unmanaged",
    "unobservable",
)
DRIFT_CATEGORIES = CATEGORIES[:5]  # the ones that mean "out of sync"
"""``records``: the site matches, but the tool's records do not yet (a ``previously`` move,
an object gone from the site and the manifest): out of sync until an apply saves them."""
EXPIRING: Category = "expiring"
"""The manifest's entries that end within ``policy.expiry_notice_days``: not drift (the site
matches), listed so their owners hear of it ahead; written only when there are some."""


def difference_data(kind: str, field: FieldChange) -> dict[str, Any]:
    """One difference as drift's JSON writes it: a setting as the site shows it and as the
    manifest says it, or the members the manifest declares that the site lacks (``missing``)
    and the reverse (``extra``); and how it was learnt."""
    if field.field == MEMBERS.get(kind):  # type: ignore[call-overload]
        members = {"missing": list(field.joining), "extra": list(field.leaving)}
        return {"field": "members", **members, "basis": field.basis}
    return {
        "field": field.field,
        "site": _plain(field.before),
        "manifest": _plain(field.after),
        "basis": field.basis,
    }


def difference_facts(kind: str, field: FieldChange) -> tuple[Any, ...]:
    """What differs, without how it was learnt: what drift news digests."""
    if field.field == MEMBERS.get(kind):  # type: ignore[call-overload]
        return ("members", field.joining, field.leaving)
    return (field.field, field.before, field.after)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class DriftItem:
    """One finding: an object (``kind``, ``name``), what it is in fields, and in words.

    ``detail`` is the sentence people read and is never part of what the item is; ``action``
    (what a plan would do, or ``kept``, ``unmanaged``, ``unobservable``), ``differences`` and
    ``refs`` (an id, an old name, user ids) are. Only kind, name, detail and differences are
    written to the JSON."""

    kind: str
    name: str
    detail: str
    differences: tuple[FieldChange, ...] = ()  # the change's own fields that differ
    action: str = ""
    refs: tuple[str | int, ...] = ()

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "name": self.name, "detail": self.detail}
        if self.differences:
            data["differences"] = [difference_data(self.kind, d) for d in self.differences]
        return data


@dataclass(frozen=True, slots=True)
class AccessDrift:
    """One person's access on the site against the manifest (``workspace`` None: every one),
    with the IDs an access report keys it by, where they exist."""

    person: str
    workspace: str | None
    detail: str
    workspace_id: int | None = None
    user_id: int | None = None

    def to_data(self) -> dict[str, Any]:
        return codec.to_data(self)  # type: ignore[no-any-return]


codec.rename(AccessDrift, omit_defaults=True)


@dataclass(frozen=True, slots=True)
class SinceLast:
    """``--since-last``: when the last report was and what of it is still there or gone."""

    last_report: str | None
    new: int
    still_there: int
    resolved: int

    def to_data(self) -> dict[str, Any]:
        return codec.to_data(self)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class DriftReport:
    site: str
    created_at: str
    notices: tuple[str, ...] = ()
    missing: tuple[DriftItem, ...] = ()
    extra: tuple[DriftItem, ...] = ()
    changed: tuple[DriftItem, ...] = ()
    needs_replacement: tuple[DriftItem, ...] = ()
    records: tuple[DriftItem, ...] = ()
    unmanaged: tuple[DriftItem, ...] = ()
    unobservable: tuple[DriftItem, ...] = ()
    access: tuple[AccessDrift, ...] = ()
    in_sync: bool = True  # of the whole report: a since-last view lists less, and says so
    since_last: SinceLast | None = None  # only the new items are listed
    expiring: tuple[DriftItem, ...] = ()  # entries that end soon (``EXPIRING``)

    def items(self, category: Category) -> tuple[DriftItem, ...]:
        found: tuple[DriftItem, ...] = getattr(self, category)
        return found

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "site": self.site,
            "created_at": self.created_at,
            "notices": list(self.notices),
        }
        for category in CATEGORIES:
            data[category] = [item.to_data() for item in self.items(category)]
        data["access"] = [item.to_data() for item in self.access]
        if self.expiring:
            data[EXPIRING] = [item.to_data() for item in self.expiring]
        data["in_sync"] = self.in_sync
        if self.since_last is not None:
            data["since_last"] = self.since_last.to_data()
        return data


def differences(change: Change) -> tuple[FieldChange, ...]:
    """Field by field, for programs and auditors: the settings that differ, then who joins
    and leaves, each with how it was learnt (``difference_data``). An object to be created
    or deleted has none: the object itself is missing or extra."""
    members = change.membership
    joined = (members,) if members is not None and (members.joining or members.leaving) else ()
    return (*change.changed_values, *joined)


def drift_report(plan: Plan) -> DriftReport:
    found: dict[Category, list[DriftItem]] = {category: [] for category in CATEGORIES}
    for change in plan.changes:
        category, detail = _categorise(change)
        found[category].append(
            DriftItem(change.kind, change.name, detail, differences(change), change.action)
        )
    found["records"] += [
        DriftItem(
            r.kind, r.name, r.detail(), action=r.action, refs=_record_refs(r.old_name, r.user_ids)
        )
        for r in plan.changed_records
    ]
    for kept in plan.kept:
        found["extra" if kept.on_site else "missing"].append(
            DriftItem(kept.kind, kept.name, kept.reason, action="kept")
        )
    found["unmanaged"] += [
        DriftItem(
            u.kind,
            u.name,
            f"id {u.id}; never managed by the manifest",
            action="unmanaged",
            refs=(u.id,),
        )
        for u in plan.unmanaged
    ]
    found["unobservable"] += [
        DriftItem("fact", "", sentence, action="unobservable", refs=(sentence,))
        for sentence in plan.unobservable
    ]
    return DriftReport(
        site=plan.site,
        created_at=plan.context.created_at,
        notices=tuple(plan.notices),
        missing=tuple(found["missing"]),
        extra=tuple(found["extra"]),
        changed=tuple(found["changed"]),
        needs_replacement=tuple(found["needs_replacement"]),
        records=tuple(found["records"]),
        unmanaged=tuple(found["unmanaged"]),
        unobservable=tuple(found["unobservable"]),
        access=tuple(
            AccessDrift(c.person, c.workspace, drift_sentence(c), c.workspace_id, c.user_id)
            for c in plan.access or ()
        ),
        in_sync=not any(found[category] for category in DRIFT_CATEGORIES),
        expiring=tuple(
            DriftItem(
                e.kind,
                e.name,
                e.sentence(),
                action="expiring",
                refs=(e.person, e.expires.isoformat()),
            )
            for e in plan.expiring or ()
        ),
    )


def _record_refs(old_name: str | None, user_ids: tuple[int, ...]) -> tuple[str | int, ...]:
    return ((old_name,) if old_name is not None else ()) + user_ids


def _categorise(change: Change) -> tuple[Category, str]:
    if change.action == "create":
        return "missing", "declared in the manifest, absent from the site"
    if change.action == "delete":
        return "extra", "left the manifest; still on the site"
    if change.action == "renamed":
        return "changed", change.note or "renamed on the site"
    if change.action == "differs":
        return "changed", "; ".join(
            f"{f.field}: {value_text(f.before)} on the site, {value_text(f.after)} in the "
            "manifest (observed; no API method changes an existing user)"
            for f in change.changed_values
        )
    if change.action in ("needs-replacement", "replace"):
        return "needs_replacement", "; ".join(
            f"{f.field}: {value_text(f.before)} -> {value_text(f.after)} ({f.basis})"
            for f in change.changed_values
        )
    return _members_changed(change.membership)


def _members_changed(members: FieldChange | None) -> tuple[Category, str]:
    """Who would join and leave: a change, or unobservable where the tool cannot judge."""
    joining, leaving = (members.joining, members.leaving) if members else ((), ())
    basis = members.basis if members else None
    parts = []
    if joining:
        parts.append("missing members: " + ", ".join(joining))
    if leaving:
        parts.append("extra members: " + ", ".join(leaving))
    if basis is None:  # members the tool cannot judge: no record, no way to read them
        return "unobservable", (
            "; ".join(parts) + " (the site cannot report group members and the tool has no "
            "record of them; whether these differ cannot be judged)"
        )
    return "changed", "; ".join(parts) + f" ({basis})"
