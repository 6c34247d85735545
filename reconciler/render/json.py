"""Render a plan as JSON: the plan's data (see docs/plan-format.md), without its seal."""

from __future__ import annotations

import json

from reconciler.engine.planning.plan import Plan


def render_json(plan: Plan) -> str:
    return json.dumps({**plan.data, "checksum": plan.checksum}, indent=1, ensure_ascii=False) + "\n"
