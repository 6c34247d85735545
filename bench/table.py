"""One table format for the terminal and for RESULTS.md: a padded Markdown table.

Padded Markdown reads well in a terminal and renders on GitHub, so what a benchmark prints is
exactly what ``run_all.py`` writes to ``bench/RESULTS.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Row = Mapping[str, str]


def render_table(columns: Sequence[str], rows: Sequence[Row], right: Sequence[str] = ()) -> str:
    """``rows`` as a Markdown table with the given ``columns``; ``right`` columns are numbers."""
    widths = {c: max([len(c), *(len(row.get(c, "")) for row in rows)]) for c in columns}

    def line(cells: Mapping[str, str]) -> str:
        padded = (
            cells.get(c, "").rjust(widths[c]) if c in right else cells.get(c, "").ljust(widths[c])
            for c in columns
        )
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (widths[c] + 1) + ":" if c in right else "-" * (widths[c] + 2) for c in columns
        )
        + "|"
    )
    return "\n".join([line({c: c for c in columns}), rule, *(line(row) for row in rows)])


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def megabytes(value: float) -> str:
    return f"{value:.0f} MB"


def calls_by_method(calls: Mapping[str, int]) -> str:
    """``{"workspace_info": 1000, ...}`` as ``workspace_info 1000, ...`` (sorted by method)."""
    return ", ".join(f"{method} {count}" for method, count in sorted(calls.items())) or "none"
