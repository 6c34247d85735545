"""A progress bar for long reads and applies, shown only when stderr is a terminal.

A command's work comes in stages ("Reading the site", then "Applying changes"); each stage has
its own bar, named after what is happening. A bar always ends at its total and is cleared
before anything else is printed or asked, so it never sits under a prompt redrawing over what
a person types, nor glues itself to the first line of a plan.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress

MIN_CALLS_FOR_BAR = 20  # a handful of calls finish before a bar would be worth drawing

READING = "Reading the site"
APPLYING = "Applying changes"


class TerminalProgress:
    """Counts API calls (reads) or actions (apply) on a rich progress bar on stderr.

    Without a terminal (CI, pipes) it only counts: rich is not even imported, and each call
    costs an addition, which matters when a large site's read makes thousands of calls.
    """

    def __init__(
        self, description: str = READING, *, enabled: bool | None = None, verbose: int = 0
    ) -> None:
        # With -v the log lines report each call: a bar redrawn between them would garble both.
        self.enabled = (sys.stderr.isatty() and not verbose) if enabled is None else enabled
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

    def stage(self, description: str, total: int) -> None:
        """Finish the current bar and begin the next stage of the work, ``total`` steps long."""
        self.finish()
        self.description = description
        self.expect(total)

    def finish(self) -> None:
        """End the bar at its total and clear it, so what is printed or asked next is readable.

        The work is complete when this is called: the last frame says so (``407/407``), even
        where a step counted several calls at once or the site needed fewer than expected.
        """
        if self._bar is not None:
            task = self._bar.task_ids[0]
            self._bar.update(task, total=max(self.total, self.done), completed=self.total)
            self._bar.stop()
            self._bar = None
        self.total = self.done = 0

    def _stop(self) -> None:
        """Clear the bar where it stands (the work was cut short: no claim that it finished)."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

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
            # Nothing may be printed while a bar is drawn (``finish`` comes first), so there
            # is nothing to redirect: rich would otherwise restyle stray text as it passed.
            redirect_stdout=False,
            redirect_stderr=False,
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
        if exc_type is None:
            self.finish()
        else:
            self._stop()
