"""Render a plan as JSON: exactly the plan file's content (see docs/plan-format.md)."""

from __future__ import annotations

from reconciler.engine.plan import Plan


def render_json(plan: Plan) -> str:
    return plan.to_json() + "\n"
