"""The body of a drift notification: JSON whose ``text`` a Slack (or Mattermost, or Teams
workflow) incoming webhook shows as the message, and whose other keys a program reads."""

from __future__ import annotations

from typing import Any

from reconciler.engine.drift import EXPIRING
from reconciler.engine.drift_news import NEWS_CATEGORIES, DriftNews
from reconciler.render.drift import TITLES, item_text
from reconciler.render.escape import slack_text

LISTED = 20  # items named in the message; the rest are counted (the JSON keys have them all)


def notification_text(news: DriftNews) -> str:
    report = news.report
    since = f"since the last report ({news.since})" if news.since else "(first report)"
    lines = [f"*site-reconciler drift on {slack_text(report.site)}*: {news.count} new {since}"]
    items = [(c, item) for c in NEWS_CATEGORIES for item in news.new.get(c, [])]
    for category, item in items[:LISTED]:
        title = TITLES[category].split(" (")[0]
        lines.append(slack_text(f"• {title}: {item_text(item)}"))
    if len(items) > LISTED:
        lines.append(f"… and {len(items) - LISTED} more")
    if news.resolved:
        lines.append(f"{news.resolved} item(s) of the last report are gone.")
    lines.append(
        "The site is in sync with the manifest."
        if report.in_sync
        else "The site still differs from the manifest: `reconciler drift` shows it all."
    )
    return "\n".join(lines)


def notification(news: DriftNews) -> dict[str, Any]:
    """The JSON body: ``text`` for people, the new items and counts for programs."""
    return {
        "text": notification_text(news),
        "site": news.report.site,
        "in_sync": news.report.in_sync,
        "last_report": news.since,
        "new": {
            category: [item.to_data() for item in news.new.get(category, [])]
            for category in NEWS_CATEGORIES
            if category != EXPIRING or news.new.get(category)  # a key only when some expire
        },
        "resolved": news.resolved,
    }
