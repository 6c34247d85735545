"""A plan's access changes as styled lines: who gains and who loses access, by person.

Shared by the text plan (before the question and the API calls), the Markdown comment and the
drift report. Up to ``MAX_LISTED`` changes are listed one a line, sorted by person; a longer
list is summarised with counts by workspace ("4 members of "Finance" gain delete_files"), and
the plan's JSON carries every one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from reconciler.access.model import AccessChange
from reconciler.access.words import cause_text, place
from reconciler.render.lines import Line

MAX_LISTED = 20
SYMBOLS = {"gains": "+", "loses": "-", "changes": "~"}
STYLES = {"gains": "create", "loses": "delete", "changes": "change"}
HEADING = "Who gains or loses access:"


def change_line(change: AccessChange) -> Line:
    symbol, style = SYMBOLS[change.effect], STYLES[change.effect]
    where = place(change)
    why = cause_text(change)
    if change.what == "access":
        role = " as an administrator" if change.via == "administrator" else ""
        text = f"{change.person} {change.effect} access to {where}{role}"
        why += f"; {change.detail}" if change.detail else ""
    elif change.effect == "changes":
        text = f"{change.person}: {change.what} in {where}: {change.detail}"
    else:
        text = f"{change.person} {change.effect} {change.what} in {where}"
    return Line(f"  {symbol} {text} ({why})", style)


def _group_key(change: AccessChange) -> tuple[Any, ...]:
    """What changes counted together share: everything but the person."""
    return (
        change.workspace,
        change.effect,
        change.what,
        change.via,
        change.cause,
        change.detail,
        change.workspace_id,
        change.site_name,
        change.expires,
    )


def _group_line(key: tuple[Any, ...], count: int) -> Line:
    workspace, effect, what, via, cause, detail, workspace_id, site_name, expires = key
    sample = AccessChange(
        "",
        workspace,
        effect,
        what,
        via,
        cause,
        detail,
        workspace_id,
        site_name=site_name,
        expires=expires,
    )
    verb = effect if count == 1 else effect.removesuffix("s")
    if what == "access":
        who = "1 person" if count == 1 else f"{count} people"
        role = ""
        if via == "administrator":
            role = " as an administrator" if count == 1 else " as administrators"
        text = f"{who} {verb} access to {place(sample)}{role}"
    else:
        who = f"{count} member{'s' if count != 1 else ''} of {place(sample)}"
        text = f"{who}: {what} {detail}" if effect == "changes" else f"{who} {verb} {what}"
    return Line(f"  {SYMBOLS[effect]} {text} ({cause_text(sample)})", STYLES[effect])


def access_lines(changes: Sequence[AccessChange]) -> list[Line]:
    """The changes one a line, or summarised with counts when there are many."""
    if len(changes) <= MAX_LISTED:
        return [change_line(change) for change in changes]
    groups = Counter(_group_key(c) for c in changes)
    people = len({c.person for c in changes})
    head = Line(
        f"  {len(changes)} changes for {people} people, counted by workspace (the plan's "
        "JSON lists each one):",
        "dim",
    )
    ordered = sorted(groups, key=lambda k: (k[0] or "", k[6] or 0, k[1], k[2], k[4]))
    return [head, *(_group_line(key, groups[key]) for key in ordered)]


def access_section(changes: Sequence[AccessChange] | None) -> list[Line]:
    """The text plan's section, or nothing when the plan changes nobody's access."""
    if not changes:
        return []
    return [Line(HEADING, "heading"), *access_lines(changes), Line("")]
