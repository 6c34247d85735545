"""A progress bar for long reads and applies, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reconciler.engine.apply import Outcome

MIN_CALLS_FOR_BAR = 20  # a handful of calls finish before a bar would be worth drawing


class TerminalProgress:
    """Counts API calls (reads) or actions (apply) on a rich progress bar on stderr."""

    def __init__(self, description: str, *, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task(description, total=0)
        self._started = False

    def expect(self, calls: int) -> None:
        self._bar.update(self._task, total=(self._bar.tasks[0].total or 0) + calls)
        if (
            self.enabled
            and not self._started
            and (self._bar.tasks[0].total or 0) >= MIN_CALLS_FOR_BAR
        ):
            self._bar.start()
            self._started = True

    def advance(self, calls: int = 1) -> None:
        self._bar.advance(self._task, calls)

    def action_done(self, outcome: Outcome) -> None:
        self.advance()

    def __enter__(self) -> TerminalProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._started:
            self._bar.stop()
