"""What is new in a drift report since the last one: for notifications that are read.

The job ``report_drift`` (``drift --notify`` and ``drift --since-last``) is the drift of
``workflow`` with one more step: it keeps the report it delivered as the last one.

A nightly drift job that posts the whole report every night is muted within a week. So the
records keep the last report sent (``Records.last_drift``: a digest of each item), and the
next report sends only the items not in it -- and says how many of the last report's items
are gone (resolved). An item is what it is in fields -- its category, kind, name, action and
what differs (``DriftItem``), never the sentence that says it: a workspace whose extra members
change is news again, a sentence reworded is not; a name spelt otherwise (``Legal``,
``legal``) is the same object as the site compares names, so not news either
(``reconciler.identity``).

Records kept before items were keyed so hold digests of the sentences (``legacy_item_key``):
an item matches its digest in either scheme, and the next report kept is keyed anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from reconciler.core.planning import PlanOptions
from reconciler.core.records import DriftReported, DriftSeen, reduce
from reconciler.engine.drift import (
    DRIFT_CATEGORIES,
    EXPIRING,
    Category,
    DriftItem,
    DriftReport,
    SinceLast,
    difference_facts,
    drift_report,
)
from reconciler.engine.records import ledger
from reconciler.engine.workflow import LoadedManifest, OpenSite, make_plan
from reconciler.identity import KEYS, name_key
from reconciler.state.backend import LockHeld

NEWS_CATEGORIES: tuple[Category, ...] = (*DRIFT_CATEGORIES, "unmanaged", EXPIRING)
"""What can be news: drift, objects someone made on the site by hand, and access that ends
soon (said once, the night it enters ``policy.expiry_notice_days``). What the site cannot
report (unobservable) is the same every night."""


KEY_SCHEME = "drift-news/2"  # in every key's digest: no key of the sentence scheme equals one


def _name(item: DriftItem) -> str:
    """The item's name by its identity: ``Legal`` and ``legal`` are one workspace."""
    return name_key(item.kind, item.name) if item.kind in KEYS else item.name


def item_key(category: str, item: DriftItem) -> str:
    """A short, stable digest of what one report item is: its fields, not its sentence."""
    facts = [
        KEY_SCHEME,
        category,
        item.kind,
        _name(item),
        item.action,
        list(item.refs),
        [difference_facts(item.kind, d) for d in item.differences],
    ]
    text = json.dumps(facts, sort_keys=True, ensure_ascii=False, default=_sorted)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def legacy_item_key(category: str, item: DriftItem) -> str:
    """The key of the first scheme, a digest of the sentence: read in records kept by it."""
    text = "\x1f".join((category, item.kind, _name(item), item.detail))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _sorted(value: Any) -> Any:
    return sorted(value, key=str) if isinstance(value, set | frozenset) else str(value)


@dataclass(frozen=True, slots=True)
class DriftNews:
    """A full drift report, and what of it is new since ``since`` (None: no report before)."""

    report: DriftReport
    new: dict[Category, list[DriftItem]]
    resolved: int
    since: str | None
    seen: DriftSeen  # what to record once this report has been sent or shown
    rekeyed: bool = False  # the last report was kept under the sentence keys: keep it anew

    @property
    def count(self) -> int:
        return sum(len(items) for items in self.new.values())

    @property
    def changed(self) -> bool:
        """Whether the records' last report must be replaced by this one."""
        return self.count > 0 or self.resolved > 0 or self.since is None or self.rekeyed

    def since_last(self) -> DriftReport:
        """The report with only the new items (the same fields, for every renderer), and
        ``since_last``: when the last report was, and how many items it had that are gone or
        still there."""
        kept = sum(len(self.report.items(c)) for c in NEWS_CATEGORIES) - self.count
        listed = {c: tuple(self.new.get(c, ())) for c in NEWS_CATEGORIES}
        since = SinceLast(self.since, self.count, kept, self.resolved)
        return dataclasses.replace(self.report, **listed, since_last=since)  # type: ignore[arg-type]


def drift_news(report: DriftReport, last: DriftSeen | None) -> DriftNews:
    before = frozenset(last.items) if last else frozenset()
    new: dict[Category, list[DriftItem]] = {}
    keys: list[str] = []
    matched: set[str] = set()
    for category in NEWS_CATEGORIES:
        for item in report.items(category):
            key = item_key(category, item)
            keys.append(key)
            found = before & {key, legacy_item_key(category, item)}
            if not found:
                new.setdefault(category, []).append(item)
            matched |= found
    now = frozenset(keys)
    seen = DriftSeen(report.created_at, tuple(sorted(now)))
    rekeyed = bool(matched - now)  # matched by a sentence's digest
    since = last.at if last else None
    return DriftNews(report, new, len(before - matched), since, seen, rekeyed)


async def report_drift(
    manifest: LoadedManifest, site: OpenSite, deliver: Callable[[DriftNews], Awaitable[None]]
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
