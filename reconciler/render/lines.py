"""Plan and drift data as styled lines: the one walk over ``plan.data`` every renderer shares.

A ``Line`` is plain text plus a style name (``create``, ``delete``, ``change``, ``replace``,
``warning``, ``heading``, ``plain``, ``dim``). The text renderer colours them; the Markdown
renderer puts them in a ``diff`` block, where the leading ``+``/``-`` colour them on their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYMBOLS = {
    "create": "+",
    "update": "~",
    "replace": "-/+",
    "delete": "-",
    "needs-replacement": "!",
}
STYLES = {
    "create": "create",
    "update": "change",
    "replace": "replace",
    "delete": "delete",
    "needs-replacement": "warning",
}


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    style: str = "plain"


def _value(value: Any) -> str:
    if value is None:
        return "(no override)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)


def change_lines(change: dict[str, Any]) -> list[Line]:
    """The lines of one object's change, Terraform style."""
    action = change["action"]
    style = STYLES[action]
    ident = f" (id {change['id']})" if change.get("id") is not None else ""
    title = f'{SYMBOLS[action]} {change["kind"]} "{change["name"]}"{ident}'
    if action == "delete":
        title += f" will be DELETED: {change.get('warning', 'it is removed from the site')}"
    elif action == "replace":
        title += f" will be REPLACED: {change['warning']}"
    elif action == "needs-replacement":
        title += " needs replacement (not planned)"
    lines = [Line(title, style)]
    if action == "create":
        for name, value in change.get("fields", {}).items():
            lines.append(Line(f"    + {name + ':':<15} {_value(value)}", "create"))
        if "members" in change:
            lines.append(Line(f"    + {'members:':<15} {_value(change['members'])}", "create"))
    for item in change.get("fields", []) if action != "create" else []:
        lines.append(
            Line(
                f"    ~ {item['field']}: {_value(item['before'])} -> {_value(item['after'])}"
                f"   ({item['basis']})",
                "change",
            )
        )
    basis = f"   ({change['basis']})" if change.get("basis") else ""
    who = "members" if change["kind"] == "group" else "users"
    if change.get("members_added"):
        lines.append(Line(f"    + {who}: {_value(change['members_added'])}{basis}", "create"))
    if change.get("members_removed"):
        lines.append(Line(f"    - {who}: {_value(change['members_removed'])}{basis}", "delete"))
    if action == "needs-replacement":
        lines.append(Line(f"    {change['warning']}", "warning"))
        lines.append(Line(f"    {change['hint']}", "dim"))
    if change.get("note"):
        lines.append(Line(f"    note: {change['note']}", "dim"))
    return lines


def summary_line(plan: dict[str, Any]) -> str:
    counts = plan["summary"]
    if not plan["actions"]:
        return "No changes." + (
            f" {counts['needs_replacement']} workspace(s) need replacement (see above)."
            if counts["needs_replacement"]
            else " The site matches the manifest."
        )
    calls = ", ".join(f"{m} {n}" for m, n in sorted(_calls(plan).items()))
    return (
        f"Plan: {counts['create']} to create, {counts['change']} to change, "
        f"{counts['delete']} to delete. {counts['api_calls']} API calls ({calls})."
    )


def _calls(plan: dict[str, Any]) -> dict[str, int]:
    result: dict[str, int] = {}
    for action in plan["actions"]:
        result[action["method"]] = result.get(action["method"], 0) + 1
    return result


def left_alone_lines(plan: dict[str, Any]) -> list[Line]:
    lines = [
        Line(f'  {item["kind"]} "{item["name"]}": {item["reason"]}', "dim") for item in plan["kept"]
    ]
    lines += [
        Line(f'  {item["kind"]} "{item["name"]}" (id {item["id"]}): not managed; left alone', "dim")
        for item in plan["unmanaged"]
    ]
    return lines


def safety_lines(plan: dict[str, Any]) -> list[Line]:
    problems = plan["safety"]["problems"]
    if not problems:
        return []
    if plan["safety"]["forced"]:
        return [Line("Safety guards overridden with --force: " + "; ".join(problems), "warning")]
    lines = [Line("Apply will refuse this plan:", "delete")]
    lines += [Line(f"  - {problem}", "delete") for problem in problems]
    lines.append(Line("  Review it; if it is what you want, apply with --force.", "plain"))
    return lines
