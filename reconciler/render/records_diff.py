"""``state diff`` as text, JSON or Markdown: one line per object and field that changed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reconciler import codec
from reconciler.engine.records.diff import VersionChange
from reconciler.render.escape import visible
from reconciler.render.formats import Format, Formats, View
from reconciler.render.templating import render_markdown

_MARK = {"added": "+", "removed": "-", "changed": "~"}


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "(none)"
    if isinstance(value, dict):  # a whole record: its fields, in words
        return "; ".join(f"{key} {_value(item)}" for key, item in sorted(value.items()))
    return str(value)


def _line(change: VersionChange) -> str:
    what = f'{change.kind} "{change.name}"' if change.kind != "records" else change.name
    if change.field is None and change.change == "added":
        return f"+ {what} recorded: {_value(change.after)}"
    if change.field is None and change.change == "removed":
        return f"- {what} no longer recorded (was {_value(change.before)})"
    field = f": {change.field}" if change.field else ""
    return (
        f"{_MARK[change.change]} {what}{field}: {_value(change.before)} -> {_value(change.after)}"
    )


@dataclass(frozen=True, slots=True)
class RecordsDiff:
    """What ``state diff`` reports: the changes from version ``first`` to ``second``."""

    site: str
    first: int
    second: int
    changes: list[VersionChange]

    @property
    def title(self) -> str:
        return f"Records of {self.site}: version {self.first} -> version {self.second}"


def _json(diff: RecordsDiff, view: View) -> str:
    document = {
        "site": diff.site,
        "from": diff.first,
        "to": diff.second,
        "changes": codec.to_data(diff.changes, list[VersionChange]),
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def _markdown(diff: RecordsDiff, view: View) -> str:
    """The template ``templates/records_diff.md.j2`` escapes every value it prints."""
    return render_markdown(
        "records_diff.md.j2",
        title=diff.title,
        columns=("change", "kind", "name", "field", "before", "after"),
        rows=[_cells(change) for change in diff.changes],
    )


def _cells(change: VersionChange) -> tuple[str, ...]:
    before, after = _value(change.before), _value(change.after)
    return (change.change, change.kind, change.name, change.field or "", before, after)


def _text(diff: RecordsDiff, view: View) -> str:
    lines = [visible(_line(c)) for c in diff.changes] or ["No changes."]
    return "\n".join([f"{visible(diff.title)}:", *("  " + line for line in lines)]) + "\n"


RECORDS_DIFF_FORMATS: Formats[RecordsDiff] = Formats(
    Format("text", "people", _text),
    Format("json", "programs", _json),
    Format("markdown", "a report", _markdown),
)
