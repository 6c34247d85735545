"""Render a plan in the format a command was asked for."""

from __future__ import annotations

from reconciler.engine.plan import Plan
from reconciler.render.json import render_json
from reconciler.render.markdown import render_markdown
from reconciler.render.text import render_text


def render_plan(plan: Plan, fmt: str, color: bool, show_unmanaged: bool = False) -> str:
    """JSON and Markdown always list every unmanaged object (programs and collapsed sections);
    the text view counts them unless ``show_unmanaged``."""
    if fmt == "json":
        return render_json(plan)
    if fmt == "markdown":
        return render_markdown(plan)
    return render_text(plan, color=color, show_unmanaged=show_unmanaged)
