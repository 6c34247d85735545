"""Figures the reliability suites report: runs, faults, examples, printed after every run.

Suites add to ``FIGURES`` as they go; ``tests/conftest.py`` prints the totals in pytest's
terminal summary, so each CI log carries the numbers ``docs/reliability.md`` quotes.
"""

from __future__ import annotations

from collections import Counter, defaultdict

FIGURES: defaultdict[str, Counter[str]] = defaultdict(Counter)


def tally(section: str, counts: Counter[str] | dict[str, int] | None = None, **more: int) -> None:
    """Add ``counts`` and ``more`` to the figures of ``section``."""
    FIGURES[section].update(counts or {})
    FIGURES[section].update(more)


def summary_lines() -> list[str]:
    """One line per section, its figures in name order."""
    return [
        f"{section}: " + ", ".join(f"{name} {value}" for name, value in sorted(counts.items()))
        for section, counts in sorted(FIGURES.items())
        if counts
    ]
