"""Review files filled in as reviewers fill them: a CSV saved again by a spreadsheet (its own
quoting, no neutralising of what they typed), or JSON edited by a program."""

from __future__ import annotations

import csv
import datetime
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Decide = Callable[[dict[str, Any]], dict[str, str] | None]
"""Given a row (its cells by column), the decision cells to write, or None to leave it."""

TODAY = datetime.date.today().isoformat()


def keep(by: str = "viewer") -> dict[str, str]:
    return {"decision": "keep", "justification": "", "decided_by": by, "decided_at": TODAY}


def revoke(why: str = "left the team", by: str = "viewer") -> dict[str, str]:
    return {"decision": "revoke", "justification": why, "decided_by": by, "decided_at": TODAY}


def read_rows(path: Path) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """A review file's header lines (CSV) or keys (JSON), and its rows by column."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        return [[key] for key in data if key != "rows"], data["rows"]
    lines = list(csv.reader(io.StringIO(text)))
    split = lines.index([])
    columns = lines[split + 1]
    return lines[:split], [dict(zip(columns, line, strict=True)) for line in lines[split + 2 :]]


def fill(path: Path, decide: Decide) -> None:
    """Write each row's decision as ``decide`` says, the file saved as a spreadsheet or a
    program would save it."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        for row in data["rows"]:
            row.update(decide(row) or {})
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return
    lines = list(csv.reader(io.StringIO(text)))
    split = lines.index([])
    columns = lines[split + 1]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # a spreadsheet's quoting: only as needed
    writer.writerows(lines[: split + 2])
    for line in lines[split + 2 :]:
        row = dict(zip(columns, line, strict=True))
        row.update(decide(row) or {})
        writer.writerow([row[column] for column in columns])
    path.write_text(out.getvalue(), encoding="utf-8")


def edit_rows(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite the rows of a review file as ``change`` returns them (reordered, altered...)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        data["rows"] = change(data["rows"])
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return
    lines = list(csv.reader(io.StringIO(text)))
    split = lines.index([])
    columns = lines[split + 1]
    rows = change([dict(zip(columns, line, strict=True)) for line in lines[split + 2 :]])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerows(lines[: split + 2])
    writer.writerows([row[column] for column in columns] for row in rows)
    path.write_text(out.getvalue(), encoding="utf-8")
