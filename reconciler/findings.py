"""A problem found in what the user wrote, and the two ways it is shown.

Validation never stops at the first problem: every check adds ``Finding``\\s, and the command
shows them all at once, so a user fixes a manifest in one round instead of many. A finding
points at the place (``Source``: file, line, column, path in the document) and says what to
do, because "invalid manifest" alone leaves the user searching. The engine reuses ``Finding``
for problems it can only see against the live site, such as an unknown user reference.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from reconciler.model import Source

Severity = Literal["error", "warning"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: an error makes the manifest invalid, a warning only deserves a look."""

    severity: Severity
    message: str
    source: Source
    hint: str = ""  # what to do about it, as a plain sentence

    @classmethod
    def error(cls, message: str, source: Source, hint: str = "") -> Finding:
        return cls("error", message, source, hint)

    @classmethod
    def warning(cls, message: str, source: Source, hint: str = "") -> Finding:
        return cls("warning", message, source, hint)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def render(self) -> str:
        """``FILE:LINE:COL: error: MESSAGE (at PATH) — HINT``, the shape editors and CI parse."""
        where = self.source.file
        if self.source.line is not None:
            where += f":{self.source.line}"
            if self.source.column is not None:
                where += f":{self.source.column}"
        text = f"{where}: {self.severity}: {self.message}"
        if self.source.path:
            text += f" (at {self.source.path})"
        return f"{text} — {self.hint}" if self.hint else text

    def to_dict(self) -> dict[str, object]:
        """The JSON form; every key is always present so CI scripts need no guards."""
        return {
            "severity": self.severity,
            "file": self.source.file,
            "line": self.source.line,
            "column": self.source.column,
            "path": self.source.path,
            "message": self.message,
            "hint": self.hint,
        }


def place(source: Source, here: Source) -> str:
    """Where ``source`` is, said briefly from ``here``: ``line 4`` or ``team.yaml:4``."""
    line = f"line {source.line}" if source.line is not None else "the top"
    if source.file == here.file:
        return line
    return f"{source.file}:{source.line}" if source.line is not None else source.file


def render_text(findings: Iterable[Finding]) -> str:
    """One line per finding, in the order given."""
    return "\n".join(finding.render() for finding in findings)


def render_json(findings: Iterable[Finding]) -> str:
    """The findings as a JSON list of objects, for CI."""
    return json.dumps([finding.to_dict() for finding in findings], indent=2, ensure_ascii=False)


def count(findings: Iterable[Finding], severity: Severity) -> int:
    return sum(1 for finding in findings if finding.severity == severity)


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(finding.is_error for finding in findings)


def plural(number: int, noun: str) -> str:
    """``1 error``, ``3 errors``: summaries read as sentences."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def tally(findings: Iterable[Finding]) -> str:
    """``3 errors, 1 warning`` (zero counts left out; empty when there is nothing)."""
    listed = list(findings)
    parts = [
        plural(number, severity) for severity in SEVERITIES if (number := count(listed, severity))
    ]
    return ", ".join(parts)
