"""Drift news is keyed by what differs, not by the sentence that says it: a reworded message
is not news, and the last report a records file kept under the old keys still reads."""

from __future__ import annotations

import dataclasses
import hashlib

import yaml

from reconciler.core.records import DriftSeen
from reconciler.engine.drift import DriftItem, DriftReport, drift_report
from reconciler.engine.drift_news import NEWS_CATEGORIES, drift_news
from reconciler.identity import KEYS, name_key
from tests.support.golden import GOLDEN
from tests.support.plan_cases import plan_case


def golden_report() -> DriftReport:
    return drift_report(plan_case(yaml.safe_load((GOLDEN / "site.yaml").read_text("utf-8"))))


def reworded(report: DriftReport) -> DriftReport:
    """The same report, every sentence in it said otherwise."""
    said = {
        c: tuple(
            dataclasses.replace(item, detail="said otherwise: " + item.detail)
            for item in report.items(c)
        )
        for c in NEWS_CATEGORIES
    }
    return dataclasses.replace(report, **said)  # type: ignore[arg-type]


def old_key(category: str, item: DriftItem) -> str:
    """How news items were keyed before: a digest of the human sentence."""
    kind, name = item.kind, item.name
    if kind in KEYS:
        name = name_key(kind, name)
    text = "\x1f".join((category, kind, name, item.detail))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_rewording_a_message_does_not_make_an_old_item_new() -> None:
    report = golden_report()
    first = drift_news(report, None)
    assert first.count >= 6
    again = drift_news(reworded(report), first.seen)
    assert again.count == 0 and again.resolved == 0 and not again.changed


def test_the_last_report_kept_under_the_old_keys_still_reads() -> None:
    report = golden_report()
    old = sorted(old_key(c, item) for c in NEWS_CATEGORIES for item in report.items(c))
    news = drift_news(report, DriftSeen("2026-11-20T00:00:00Z", tuple(old)))
    assert news.count == 0 and news.resolved == 0 and news.since == "2026-11-20T00:00:00Z"
