"""Render a drift report as text, JSON or Markdown (a template that escapes every value)."""

from __future__ import annotations

import json

from reconciler.engine.drift import (
    CATEGORIES,
    DRIFT_CATEGORIES,
    EXPIRING,
    AccessDrift,
    DriftItem,
    DriftReport,
)
from reconciler.findings import plural
from reconciler.render.formats import Format, Formats, View
from reconciler.render.lines import Line, unmanaged_summary
from reconciler.render.markdown import trim
from reconciler.render.templating import render_markdown
from reconciler.render.text import render_lines

TITLES = {
    "missing": "Missing (declared, not on the site)",
    "extra": "Extra (left the manifest, still on the site)",
    "changed": "Changed (members differ)",
    "needs_replacement": "Needs replacement (settings differ; replacement destroys all files)",
    "records": "Records only (the tool's records are behind; the next apply saves them)",
    "unmanaged": "Unmanaged (on the site, never in the manifest; left alone)",
    "unobservable": "Unobservable (the site does not report these facts)",
    "expiring": "Expires soon (within policy.expiry_notice_days; not drift)",
}
STYLES = {
    "missing": "create",
    "extra": "delete",
    "changed": "change",
    "needs_replacement": "warning",
    "records": "change",
}


ACCESS_TITLE = "Access (who can reach what on the site, against the manifest)"


def _access(item: AccessDrift) -> str:
    return f"  {item.detail}"


def item_text(item: DriftItem) -> str:
    """One item in words: its object, then what is said of it (an expiry names both)."""
    if item.action == "expiring" or not item.name:
        return item.detail
    return f'{item.kind} "{item.name}": {item.detail}'


def _entry(item: DriftItem) -> str:
    return f"  {item_text(item)}"


def _verdict(report: DriftReport) -> str:
    if report.in_sync:
        return "In sync: the site matches the manifest."
    counts = ", ".join(
        plural(len(report.items(c)), "record change")
        if c == "records"
        else f"{len(report.items(c))} {c.replace('_', ' ')}"
        for c in DRIFT_CATEGORIES
        if report.items(c)
    )
    if report.since_last is not None:  # only the new items are listed
        return f"Drift: {counts or 'nothing'} new; the site still differs from the manifest."
    return f"Drift: {counts}."


def _since_last(report: DriftReport) -> list[str]:
    """``--since-last``: when the last report was, and what it had that is still there."""
    since = report.since_last
    if since is None:
        return []
    when = f"the last report ({since.last_report})" if since.last_report else "no report"
    return [
        f"Since {when}: {since.new} new, {since.still_there} still there (not "
        f"listed), {since.resolved} resolved."
    ]


def drift_lines(report: DriftReport, *, show_unmanaged: bool = False) -> list[Line]:
    """The text view; unmanaged objects are counted in one line unless ``show_unmanaged``."""
    lines = [Line(f"Site: {report.site}", "heading"), Line("")]
    for text in _since_last(report):
        lines += [Line(text, "dim"), Line("")]
    for notice in report.notices:
        lines += [Line(f"Note: {notice}", "warning"), Line("")]
    for category in CATEGORIES:
        items = report.items(category)
        if not items:
            continue
        lines.append(Line(f"{TITLES[category]}:", "heading"))
        if category == "unmanaged" and not show_unmanaged:
            lines.append(Line(f"  {unmanaged_summary(item.kind for item in items)}", "dim"))
        else:
            lines += [Line(_entry(item), STYLES.get(category, "dim")) for item in items]
        lines.append(Line(""))
    access = report.access
    if access:
        lines += [
            Line(f"{ACCESS_TITLE}:", "heading"),
            *(Line(_access(i), "change") for i in access),
        ]
        lines.append(Line(""))
    if report.expiring:
        lines += [
            Line(f"{TITLES[EXPIRING]}:", "heading"),
            *(Line(_entry(item), "warning") for item in report.expiring),
            Line(""),
        ]
    lines.append(Line(_verdict(report), "heading"))
    return lines


def render_drift_text(
    report: DriftReport, *, color: bool = False, show_unmanaged: bool = False
) -> str:
    return render_lines(drift_lines(report, show_unmanaged=show_unmanaged), color=color)


def render_drift_json(report: DriftReport) -> str:
    return json.dumps(report.to_data(), indent=1) + "\n"


def render_drift_markdown(report: DriftReport) -> str:
    """The template ``templates/drift.md.j2`` escapes every value it prints."""
    sections = [
        (f"{TITLES[category]} ({len(items)})", [_entry(i) for i in items])
        for category in CATEGORIES
        if (items := report.items(category))
    ]
    if report.access:
        access = report.access
        sections.append((f"{ACCESS_TITLE} ({len(access)})", [_access(i) for i in access]))
    if report.expiring:
        title = f"{TITLES[EXPIRING]} ({len(report.expiring)})"
        sections.append((title, [_entry(item) for item in report.expiring]))
    text = render_markdown(
        "drift.md.j2",
        site=report.site,
        verdict=_verdict(report),
        since_last=_since_last(report),
        sections=sections,
    )
    return trim(text)


DRIFT_FORMATS: Formats[DriftReport] = Formats(
    Format(
        "text",
        "people",
        lambda report, view: render_drift_text(
            report, color=view.color, show_unmanaged=view.show_unmanaged
        ),
    ),
    Format("json", "programs", lambda report, view: render_drift_json(report)),
    Format(
        "markdown", "a pull-request comment", lambda report, view: render_drift_markdown(report)
    ),
)


def render_drift(report: DriftReport, fmt: str, color: bool, show_unmanaged: bool = False) -> str:
    return DRIFT_FORMATS.render(report, fmt, View(color, show_unmanaged))
