"""Render a plan for a terminal (coloured) or a log (plain), in the style of Terraform."""

from __future__ import annotations

import io

from reconciler.engine.planning.plan import Plan
from reconciler.render.access_plan import access_section
from reconciler.render.escape import visible
from reconciler.render.lines import (
    EXPIRING_HEADING,
    RECORDS_HEADING,
    Line,
    change_lines,
    expiring_lines,
    left_alone_lines,
    notice_lines,
    record_lines,
    safety_lines,
    summary_line,
)

RICH_STYLES = {
    "create": "green",
    "delete": "bold red",
    "change": "yellow",
    "replace": "bold magenta",
    "warning": "bold yellow",
    "heading": "bold",
    "dim": "dim",
    "plain": "",
}


def plan_lines(plan: Plan, *, show_unmanaged: bool = False) -> list[Line]:
    """Every line of the text view, in order; unmanaged objects are counted unless shown."""
    lines = [Line(f"Site: {plan.site}", "heading"), Line(""), *notice_lines(plan)]
    if plan.changes:
        lines.append(Line("site-reconciler will make these changes:", "heading"))
        for change in plan.changes:
            lines += [Line(""), *change_lines(change)]
        lines.append(Line(""))
    lines += access_section(plan.access)
    sections = (
        (EXPIRING_HEADING, expiring_lines(plan)),
        (RECORDS_HEADING, record_lines(plan)),
        ("Left alone:", left_alone_lines(plan, list_unmanaged=show_unmanaged)),
        (
            "Could not be observed (reported, not guessed):",
            [Line(f"  {s}", "dim") for s in plan.unobservable],
        ),
        ("Warnings:", [Line(f"  {w}", "warning") for w in plan.warnings]),
    )
    for heading, body in sections:
        if body:
            lines += [Line(heading, "heading"), *body, Line("")]
    lines.append(Line(summary_line(plan), "heading"))
    lines += safety_lines(plan)
    return lines


def render_lines(lines: list[Line], *, color: bool) -> str:
    """Lines as text, with ANSI colours when ``color`` is true; a control character a name
    holds is shown as an escape (``render/escape.py``), never sent to the terminal."""
    if not color:
        texts = [line.text for line in lines]
        if "".join(texts).isprintable():  # the fast, common answer: nothing to escape
            return "\n".join(texts) + "\n"
        return "\n".join(map(visible, texts)) + "\n"
    from rich.console import Console  # only a terminal needs colours: keep start-up light
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=10_000)
    for line in lines:
        console.print(
            Text(visible(line.text), style=RICH_STYLES.get(line.style, "")), soft_wrap=True
        )
    return buffer.getvalue()


def render_text(plan: Plan, *, color: bool = False, show_unmanaged: bool = False) -> str:
    return render_lines(plan_lines(plan, show_unmanaged=show_unmanaged), color=color)
