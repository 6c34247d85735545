"""What is new in a drift report since the last one: for notifications that are read.

The job ``report_drift`` (``drift --notify`` and ``drift --since-last``) is the drift of
``workflow`` with one more step: it keeps the report it delivered as the last one.

A nightly drift job that posts the whole report every night is muted within a week. So the
records keep the last report sent (``Records.last_drift``: a digest of each item), and the
next report sends only the items not in it -- and says how many of the last report's items
are gone (resolved). An item is its category, kind, name and detail: a workspace whose
extra members change is news again; a name spelt otherwise (``Legal``, ``legal``) is the same
object as the site compares names, so not news (``reconciler.identity``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from reconciler.engine import ledger
from reconciler.engine.drift import DRIFT_CATEGORIES, drift_report
from reconciler.engine.plan import PlanOptions
from reconciler.engine.records import DriftReported, DriftSeen, reduce
from reconciler.engine.workflow import Manifest, Site, make_plan
from reconciler.identity import KEYS, name_key
from reconciler.state.backend import LockHeld

NEWS_CATEGORIES = (*DRIFT_CATEGORIES, "unmanaged")
"""What can be news: drift, and objects someone made on the site by hand. What the site
cannot report (unobservable) is the same every night."""


def item_key(category: str, item: dict[str, Any]) -> str:
    """A short, stable digest of one report item, its name by its identity."""
    kind, name = str(item["kind"]), str(item["name"])
    if kind in KEYS:
        name = name_key(kind, name)
    text = "\x1f".join((category, kind, name, str(item["detail"])))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class DriftNews:
    """A full drift report, and what of it is new since ``since`` (None: no report before)."""

    report: dict[str, Any]
    new: dict[str, list[dict[str, Any]]]
    resolved: int
    since: str | None
    seen: DriftSeen  # what to record once this report has been sent or shown

    @property
    def count(self) -> int:
        return sum(len(items) for items in self.new.values())

    @property
    def changed(self) -> bool:
        """Whether the records' last report must be replaced by this one."""
        return self.count > 0 or self.resolved > 0 or self.since is None

    def since_last(self) -> dict[str, Any]:
        """The report with only the new items (the same keys, for every renderer), plus a
        ``since_last`` entry: when the last report was, and how many items it had that are
        gone or still there."""
        kept = sum(len(self.report[c]) for c in NEWS_CATEGORIES) - self.count
        return {
            **self.report,
            **{c: self.new.get(c, []) for c in NEWS_CATEGORIES},
            "since_last": {
                "last_report": self.since,
                "new": self.count,
                "still_there": kept,
                "resolved": self.resolved,
            },
        }


def drift_news(report: dict[str, Any], last: DriftSeen | None) -> DriftNews:
    before = frozenset(last.items) if last else frozenset()
    new: dict[str, list[dict[str, Any]]] = {}
    keys: list[str] = []
    for category in NEWS_CATEGORIES:
        for item in report[category]:
            key = item_key(category, item)
            keys.append(key)
            if key not in before:
                new.setdefault(category, []).append(item)
    now = frozenset(keys)
    seen = DriftSeen(str(report["created_at"]), tuple(sorted(now)))
    return DriftNews(report, new, len(before - now), last.at if last else None, seen)


async def report_drift(
    manifest: Manifest, site: Site, deliver: Callable[[DriftNews], Awaitable[None]]
) -> tuple[DriftNews, str | None]:
    """Drift, and what is new in it since the last report the records keep; ``deliver``
    shows or sends it. Only once it has returned does this report become the last one: a
    delivery that fails raises, the last report stays, and the next run delivers these
    items again. Also a note when the records were locked, so this report was not kept."""
    report = drift_report(await make_plan(manifest, site, PlanOptions()))
    news = drift_news(report, ledger.read(site.store).records.last_drift)
    await deliver(news)
    if not news.changed:
        return news, None
    try:
        with ledger.locked(site.store, site.holder, wait_seconds=site.lock_wait) as state:
            records = reduce(state.records, [DriftReported(news.seen)])
            state.save(records, f"drift reported: {news.count} new, {news.resolved} resolved")
    except LockHeld as exc:
        return news, (
            f"this report was not kept as the last one ({exc.message}): the next report "
            "says its new items again"
        )
    return news, None
