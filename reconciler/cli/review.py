"""How ``apply`` shows its plan and asks a person for approval on a terminal."""

from __future__ import annotations

import sys

import click

from reconciler.cli.progress import TerminalProgress
from reconciler.engine.plan import Plan
from reconciler.errors import RefusedForSafety
from reconciler.render.plans import render_plan


class TerminalReview:
    """Prints the plan (after clearing any progress bar) and asks for a typed ``yes``."""

    def __init__(self, progress: TerminalProgress, *, color: bool, auto_approve: bool) -> None:
        self.progress = progress
        self.color = color
        self.auto_approve = auto_approve

    def show(self, plan: Plan) -> None:
        self.progress.finish()
        click.echo(render_plan(plan, "text", self.color), nl=False)

    def approve(self, plan: Plan) -> None:
        if self.auto_approve:
            return
        if not sys.stdin.isatty():
            raise RefusedForSafety(
                "Not applied: there is no terminal to ask for approval.",
                hint="Review the plan above; in a pipeline, run apply with --auto-approve (or "
                "apply a reviewed plan file).",
            )
        deletes = plan.summary["delete"]
        warning = (
            f" It DELETES {deletes} object(s); deleted workspaces lose all files."
            if deletes
            else ""
        )
        answer = click.prompt(
            f"Apply these changes to {plan.site}?{warning} Only 'yes' will be accepted",
            default="",
            show_default=False,
            err=True,
        )
        if answer.strip() != "yes":
            raise RefusedForSafety("Not applied: the changes were not approved.")
