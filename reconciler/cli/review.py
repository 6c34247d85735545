"""What a person sees of ``apply`` on a terminal: the plan, the question, the work, and what
had been done if they stop it.
"""

from __future__ import annotations

import select
import signal
import sys

import click

from reconciler.cli.progress import APPLYING, TerminalProgress
from reconciler.engine.apply.executor import ActionOutcome
from reconciler.engine.planning.plan import Plan
from reconciler.errors import RefusedForSafety
from reconciler.findings import plural
from reconciler.render.plans import render_plan


class TerminalReview:
    """Prints the plan (after clearing any progress bar), asks for a typed ``yes``, then counts
    the actions on an "Applying changes" bar and keeps their outcomes for a Ctrl-C report."""

    def __init__(
        self,
        progress: TerminalProgress,
        *,
        color: bool,
        auto_approve: bool,
        show_unmanaged: bool = False,
        plan_to_stderr: bool = False,
    ) -> None:
        self.progress = progress
        self.color = color
        self.auto_approve = auto_approve
        self.show_unmanaged = show_unmanaged
        self.plan_to_stderr = plan_to_stderr  # stdout is for a report a program reads
        self.approved: Plan | None = None  # the plan being carried out, once approved
        self.outcomes: list[ActionOutcome] = []

    def show(self, plan: Plan) -> None:
        self.progress.finish()
        text = render_plan(plan, "text", self.color, self.show_unmanaged)
        click.echo(text, nl=False, err=self.plan_to_stderr)

    def approve(self, plan: Plan) -> None:
        if not self.auto_approve:
            self._ask(plan)
        self.approved = plan
        self.progress.stage(APPLYING, len(plan.actions))

    def action_done(self, outcome: ActionOutcome) -> None:
        self.outcomes.append(outcome)
        self.progress.advance()

    def _ask(self, plan: Plan) -> None:
        if not sys.stdin.isatty():
            raise RefusedForSafety(
                "Not applied: there is no terminal to ask for approval.",
                hint="Review the plan above; in a pipeline, run apply with --auto-approve (or "
                "apply a reviewed plan file).",
            )
        deletes = plan.summary["delete"]
        warning = (
            " " + self._style(f"It DELETES {plural(deletes, 'object')}", fg="red", bold=True)
            + "; deleted workspaces lose all files."
            if deletes
            else ""
        )  # fmt: skip
        question = f"\nApply these changes to {self._style(plan.site, bold=True)}?{warning}"
        try:
            answer = _answer(f"{question} Only 'yes' will be accepted:")
        except (KeyboardInterrupt, EOFError):  # Ctrl-C, or Ctrl-D / end of input
            click.echo(err=True)
            raise RefusedForSafety(
                "Not applied: the question was not answered. Nothing was changed."
            ) from None
        if answer.strip() != "yes":
            raise RefusedForSafety("Not applied: the changes were not approved.")

    def _style(self, text: str, **style: object) -> str:
        return click.style(text, **style) if self.color else text  # type: ignore[arg-type]


def _answer(question: str) -> str:
    """One line typed at the terminal, the echo left to the terminal.

    The question is asked inside ``aio.run`` (an ``asyncio.Runner``), whose SIGINT handler
    only cancels the task, and SIGINT may land on any of the process's threads: a read blocked
    on the keyboard would then never see Ctrl-C. So Ctrl-C raises KeyboardInterrupt here, and
    the wait for the line comes back to Python ten times a second, where that handler runs.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        click.echo(question + " ", nl=False, err=True)  # after the handler: Ctrl-C at once works
        while not select.select([sys.stdin], [], [], 0.1)[0]:
            pass
        line = sys.stdin.readline()
    finally:
        signal.signal(signal.SIGINT, previous)
    if not line:
        raise EOFError
    return line
