"""A plan as styled lines: the one walk over a plan every renderer shares.

A ``Line`` is plain text plus a style name (``create``, ``delete``, ``change``, ``replace``,
``warning``, ``heading``, ``plain``, ``dim``). The text renderer colours them; the Markdown
renderer puts them in a ``diff`` block, where the leading ``+``/``-`` colour them on their own.
Values are written in one vocabulary everywhere (``plan.value_text``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.core.changes import NOTHING, Change, FieldChange, value_text
from reconciler.engine.planning.plan import Plan
from reconciler.findings import plural

SYMBOLS = {
    "create": "+",
    "update": "~",
    "replace": "-/+",
    "delete": "-",
    "needs-replacement": "!",
    "renamed": "!",
    "differs": "!",
}
STYLES = {
    "create": "create",
    "update": "change",
    "replace": "replace",
    "delete": "delete",
    "needs-replacement": "warning",
    "renamed": "warning",
    "differs": "warning",
}


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    style: str = "plain"


def _title(change: Change) -> str:
    ident = f" (id {change.id})" if change.id is not None else ""
    if change.site_name is not None:
        spelled = f'on the site "{change.site_name}"'
        ident = f" (id {change.id}, {spelled})" if change.id is not None else f" ({spelled})"
    title = f'{SYMBOLS[change.action]} {change.kind} "{change.name}"{ident}'
    if change.action == "delete":
        return title + f" will be DELETED: {change.warning or 'it is removed from the site'}"
    if change.action == "replace":
        return title + f" will be REPLACED: {change.warning}"
    if change.action == "needs-replacement":
        return title + " needs replacement (not planned)"
    if change.action == "renamed":
        return title + " was renamed on the site: left alone"
    if change.action == "differs":
        return title + " differs on the site (not changed: the API cannot)"
    return title


def change_lines(change: Change) -> list[Line]:
    """The lines of one object's change, Terraform style: a created field with ``+``, who joins
    and who leaves with ``+`` and ``-``, any other field with ``~`` before ``->`` after."""
    lines = [Line(_title(change), STYLES[change.action])]
    if change.owners:  # the manifest's ownership: who must approve this change
        lines.append(Line(f"    approval: {', '.join(change.owners)}", "dim"))
    for item in change.fields:
        if item.before is NOTHING:
            lines.append(Line(f"    + {item.field + ':':<15} {value_text(item.after)}", "create"))
        elif change.is_membership(item):
            lines += _membership_lines(item)
        else:
            lines.append(
                Line(
                    f"    ~ {item.field}: {value_text(item.before)} -> {value_text(item.after)}"
                    f"   ({item.basis})",
                    "change",
                )
            )
    if change.action == "needs-replacement":
        lines.append(Line(f"    {change.warning}", "warning"))
    if change.hint:
        lines.append(Line(f"    {change.hint}", "dim"))
    if change.note:
        lines.append(Line(f"    note: {change.note}", "dim"))
    return lines


def _membership_lines(item: FieldChange) -> list[Line]:
    basis = f"   ({item.basis})" if item.basis else ""
    lines = []
    if item.joining:
        lines.append(Line(f"    + {item.field}: {value_text(item.joining)}{basis}", "create"))
    if item.leaving:
        lines.append(Line(f"    - {item.field}: {value_text(item.leaving)}{basis}", "delete"))
    return lines


RECORDS_HEADING = "The tool's records will change (the site is not changed):"
EXPIRING_HEADING = "Expires soon (within policy.expiry_notice_days; extend it in the manifest):"


def expiring_lines(plan: Plan) -> list[Line]:
    """The manifest's entries that end soon, soonest first: their owners are warned ahead."""
    return [Line(f"  {entry.sentence()}", "warning") for entry in plan.expiring or ()]


def record_lines(plan: Plan) -> list[Line]:
    return [Line(f"  ~ {change.describe()}", "change") for change in plan.changed_records]


def _calls(count: int) -> str:
    return f"{count} API call" + ("" if count == 1 else "s")


def summary_line(plan: Plan) -> str:
    counts = plan.summary
    saved = len(plan.changed_records)
    records = plural(saved, "record change")
    if not plan.actions:
        replacing = (
            f" {counts['needs_replacement']} workspace(s) need replacement (see above)."
            if counts["needs_replacement"]
            else ""
        )
        if saved:
            return (
                f"Plan: {records} (the tool's records only): no API calls, the site is not "
                f"changed; apply saves {'it' if saved == 1 else 'them'}.{replacing}"
            )
        return "No changes." + (replacing or " The site matches the manifest.")
    calls = ", ".join(f"{m} {n}" for m, n in plan.calls_by_method().items())
    also = f" {records} (the tool's records only)." if saved else ""
    return (
        f"Plan: {counts['create']} to create, {counts['change']} to change, "
        f"{counts['delete']} to delete. {_calls(counts['api_calls'])} ({calls}).{also}"
    )


def left_alone_lines(plan: Plan, *, list_unmanaged: bool = True) -> list[Line]:
    """Managed objects kept, each with its reason; then the unmanaged ones, listed or counted.

    A large site has hundreds of objects the manifest never managed: listed in every plan
    they would bury the changes, so a person's view counts them (``list_unmanaged=False``).
    """
    lines = [Line(f'  {item.kind} "{item.name}": {item.reason}', "dim") for item in plan.kept]
    if list_unmanaged:
        lines += [
            Line(f'  {item.kind} "{item.name}" (id {item.id}): not managed; left alone', "dim")
            for item in plan.unmanaged
        ]
    elif plan.unmanaged:
        lines.append(Line(f"  {unmanaged_summary(u.kind for u in plan.unmanaged)}", "dim"))
    return lines


def unmanaged_summary(kinds: Iterable[str]) -> str:
    """One line for the objects the manifest never managed, by kind, and how to list them."""
    counts = Counter(kinds)
    total = sum(counts.values())
    by_kind = ", ".join(plural(counts[kind], kind) for kind in sorted(counts))
    return (
        f"{plural(total, 'object')} not managed by the manifest ({by_kind}): left alone; "
        "--show-unmanaged lists them"
    )


def notice_lines(plan: Plan) -> list[Line]:
    lines: list[Line] = []
    for notice in plan.notices:
        lines += [Line(f"Note: {notice}", "warning"), Line("")]
    return lines


def safety_lines(plan: Plan) -> list[Line]:
    problems = plan.guards
    if not problems:
        return []
    if plan.options.force:
        return [Line("Safety guards overridden with --force: " + "; ".join(problems), "warning")]
    lines = [Line("Apply will refuse this plan:", "delete")]
    lines += [Line(f"  - {problem}", "delete") for problem in problems]
    lines.append(Line("  Review it; if it is what you want, apply with --force.", "plain"))
    return lines
