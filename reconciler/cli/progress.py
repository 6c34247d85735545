"""A progress bar for long reads and applies, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

from reconciler.engine.executor import Outcome

if TYPE_CHECKING:
    from rich.progress import Progress

MIN_CALLS_FOR_BAR = 20  # a handful of calls finish before a bar would be worth drawing


class TerminalProgress:
    """Counts API calls (reads) or actions (apply) on a rich progress bar on stderr.

    Without a terminal (CI, pipes) it only counts: rich is not even imported, and each call
    costs an addition, which matters when a large site's read makes thousands of calls.
    """

    def __init__(self, description: str, *, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.description = description
        self.total = 0
        self.done = 0
        self._bar: Progress | None = None

    def expect(self, calls: int) -> None:
        self.total += calls
        if self._bar is not None:
            self._bar.update(self._bar.task_ids[0], total=self.total)
        elif self.enabled and self.total >= MIN_CALLS_FOR_BAR:
            self._start()

    def advance(self, calls: int = 1) -> None:
        self.done += calls
        if self._bar is not None:
            self._bar.update(self._bar.task_ids[0], completed=self.done)

    def action_done(self, outcome: Outcome) -> None:
        self.advance()

    def finish(self) -> None:
        """Stop and clear the bar, so that what is printed or asked next stays readable."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self.total = self.done = 0

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.add_task(self.description, total=self.total, completed=self.done)
        self._bar.start()

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
