"""The drift report: what changed on the site behind the manifest's back, by category.

Drift is a plan read the other way round, so it is computed from the plan's data (made
without ``--replace``): one source of truth for "what differs".
"""

from __future__ import annotations

from typing import Any

from reconciler.engine.plan import Plan

CATEGORIES = ("missing", "extra", "changed", "needs_replacement", "unmanaged", "unobservable")
DRIFT_CATEGORIES = CATEGORIES[:4]  # the ones that mean "out of sync"


def drift_report(plan: Plan) -> dict[str, Any]:
    data = plan.data
    by_action: dict[str, list[dict[str, Any]]] = {}
    for change in data["changes"]:
        by_action.setdefault(change["action"], []).append(change)
    report: dict[str, Any] = {
        "site": data["site"],
        "created_at": data["created_at"],
        "missing": [
            _item(c, "declared in the manifest, absent from the site")
            for c in by_action.get("create", [])
        ],
        "extra": [
            _item(c, "left the manifest; still on the site") for c in by_action.get("delete", [])
        ]
        + [{"kind": k["kind"], "name": k["name"], "detail": k["reason"]} for k in data["kept"]],
        "changed": [_changed(c) for c in by_action.get("update", [])],
        "needs_replacement": [
            _item(
                c,
                "; ".join(
                    f"{f['field']}: {f['before']} -> {f['after']} ({f['basis']})"
                    for f in c["fields"]
                ),
            )
            for c in by_action.get("needs-replacement", []) + by_action.get("replace", [])
        ],
        "unmanaged": [
            {
                "kind": u["kind"],
                "name": u["name"],
                "detail": f"id {u['id']}; never managed by the manifest",
            }
            for u in data["unmanaged"]
        ],
        "unobservable": [{"kind": "fact", "name": "", "detail": s} for s in data["unobservable"]],
    }
    report["in_sync"] = not any(report[category] for category in DRIFT_CATEGORIES)
    return report


def _item(change: dict[str, Any], detail: str) -> dict[str, Any]:
    return {"kind": change["kind"], "name": change["name"], "detail": detail}


def _changed(change: dict[str, Any]) -> dict[str, Any]:
    parts = []
    if change.get("members_added"):
        parts.append("missing members: " + ", ".join(change["members_added"]))
    if change.get("members_removed"):
        parts.append("extra members: " + ", ".join(change["members_removed"]))
    return _item(change, "; ".join(parts) + f" ({change.get('basis', 'observed')})")
