"""The drift report: what changed on the site behind the manifest's back, by category.

Drift is a plan read the other way round, so it is computed from a plan (made without
``--replace``): one source of truth for "what differs". A difference the tool cannot judge --
group members it has no record of -- is reported as unobservable, never as missing.
"""

from __future__ import annotations

from typing import Any

from reconciler.access.words import access_drift
from reconciler.engine.plan import Change, Plan, value_text

CATEGORIES = (
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


def _item(
    kind: str, name: str, detail: str, differences: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": kind, "name": name, "detail": detail}
    if differences:
        item["differences"] = differences
    return item


def differences(change: Change) -> list[dict[str, Any]]:
    """Field by field, for programs and auditors: what the site shows and what the manifest
    says (settings), or which members are missing and extra, and how each was learnt."""
    found = [
        {"field": f.field, "site": f.before, "manifest": f.after, "basis": f.basis}
        for f in change.fields
    ]
    if change.added or change.removed:
        found.append(
            {
                "field": "members",
                "missing": list(change.added),
                "extra": list(change.removed),
                "basis": change.basis,
            }
        )
    return found


def drift_report(plan: Plan) -> dict[str, Any]:
    report: dict[str, Any] = {
        "site": plan.site,
        "created_at": plan.context.created_at,
        "notices": list(plan.notices),
    }
    for category in CATEGORIES:
        report[category] = []
    for change in plan.changes:
        category, detail = _categorise(change)
        report[category].append(_item(change.kind, change.name, detail, differences(change)))
    report["records"] += [
        _item(change.kind, change.name, change.detail()) for change in plan.changed_records
    ]
    for kept in plan.kept:
        category = "extra" if kept.on_site else "missing"
        report[category].append(_item(kept.kind, kept.name, kept.reason))
    report["unmanaged"] += [
        _item(u.kind, u.name, f"id {u.id}; never managed by the manifest") for u in plan.unmanaged
    ]
    report["unobservable"] += [_item("fact", "", sentence) for sentence in plan.unobservable]
    report["access"] = access_drift(plan.access)
    report["in_sync"] = not any(report[category] for category in DRIFT_CATEGORIES)
    return report


def _categorise(change: Change) -> tuple[str, str]:
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
            for f in change.fields
        )
    if change.action in ("needs-replacement", "replace"):
        return "needs_replacement", "; ".join(
            f"{f.field}: {value_text(f.before)} -> {value_text(f.after)} ({f.basis})"
            for f in change.fields
        )
    parts = []
    if change.added:
        parts.append("missing members: " + ", ".join(change.added))
    if change.removed:
        parts.append("extra members: " + ", ".join(change.removed))
    if change.basis is None:  # members the tool cannot judge: no record, no way to read them
        return "unobservable", (
            "; ".join(parts) + " (the site cannot report group members and the tool has no "
            "record of them; whether these differ cannot be judged)"
        )
    return "changed", "; ".join(parts) + f" ({change.basis})"
