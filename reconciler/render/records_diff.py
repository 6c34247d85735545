"""``state diff`` as text, JSON or Markdown: one line per object and field that changed."""

from __future__ import annotations

import json
from typing import Any

from reconciler import codec
from reconciler.engine.records_diff import RecordChange

_MARK = {"added": "+", "removed": "-", "changed": "~"}


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "(none)"
    if isinstance(value, dict):  # a whole record: its fields, in words
        return "; ".join(f"{key} {_value(item)}" for key, item in sorted(value.items()))
    return str(value)


def _line(change: RecordChange) -> str:
    what = f'{change.kind} "{change.name}"' if change.kind != "records" else change.name
    if change.field is None and change.change == "added":
        return f"+ {what} recorded: {_value(change.after)}"
    if change.field is None and change.change == "removed":
        return f"- {what} no longer recorded (was {_value(change.before)})"
    field = f": {change.field}" if change.field else ""
    return (
        f"{_MARK[change.change]} {what}{field}: {_value(change.before)} -> {_value(change.after)}"
    )


def render_records_diff(
    changes: list[RecordChange], first: int, second: int, fmt: str, site: str
) -> str:
    if fmt == "json":
        document = {
            "site": site,
            "from": first,
            "to": second,
            "changes": codec.to_data(changes, list[RecordChange]),
        }
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    title = f"Records of {site}: version {first} -> version {second}"
    if fmt == "markdown":
        rows = [f"| {c.change} | {c.kind} | {c.name} | {c.field or ''} | {_value(c.before)} | "
                f"{_value(c.after)} |" for c in changes]  # fmt: skip
        head = ["| change | kind | name | field | before | after |", "|---|---|---|---|---|---|"]
        body = [*head, *rows] if rows else ["No changes."]
        return "\n".join([f"### {title}", "", *body]) + "\n"
    lines = [_line(c) for c in changes] or ["No changes."]
    return "\n".join([f"{title}:", *("  " + line for line in lines)]) + "\n"
