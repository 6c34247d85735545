"""Render a plan in the format a command was asked for: the plan's formats, by name."""

from __future__ import annotations

from reconciler.engine.planning.plan import Plan
from reconciler.render.formats import Format, Formats, View
from reconciler.render.json import render_json
from reconciler.render.markdown import render_markdown
from reconciler.render.text import render_text

PLAN_FORMATS: Formats[Plan] = Formats(
    Format(
        "text",
        "people",
        lambda plan, view: render_text(plan, color=view.color, show_unmanaged=view.show_unmanaged),
    ),
    Format("json", "programs", lambda plan, view: render_json(plan)),
    Format("markdown", "a pull-request comment", lambda plan, view: render_markdown(plan)),
)
"""JSON and Markdown always list every unmanaged object (programs and collapsed sections);
the text view counts them unless ``show_unmanaged``."""


def render_plan(plan: Plan, fmt: str, color: bool, show_unmanaged: bool = False) -> str:
    return PLAN_FORMATS.render(plan, fmt, View(color, show_unmanaged))
