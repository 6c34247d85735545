"""Render a plan as Markdown for a pull-request comment.

A summary comes first, details follow in collapsible sections, and the whole comment is
trimmed (with a note saying so) to stay under the 60,000 characters code hosts accept.
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.engine.plan import Plan
from reconciler.render.lines import (
    Line,
    change_lines,
    left_alone_lines,
    safety_lines,
    summary_line,
)

MAX_COMMENT_CHARS = 60_000
_TRIM_RESERVE = 400  # room for the closing fences and the trim note


def _details(summary: str, lines: Sequence[Line], *, fence: str = "diff") -> list[str]:
    body = "\n".join(line.text for line in lines)
    return [
        f"<details><summary>{summary}</summary>",
        "",
        f"```{fence}",
        body,
        "```",
        "",
        "</details>",
        "",
    ]


def render_markdown(plan: Plan) -> str:
    out = [f"### site-reconciler plan for `{plan.site}`", "", f"**{summary_line(plan)}**", ""]
    out += [f"> **Note:** {notice}\n" for notice in plan.notices]
    deletions = [c for c in plan.changes if c.action in ("delete", "replace")]
    if deletions:
        names = ", ".join(f'{c.kind} "{c.name}"' for c in deletions)
        out += [
            f"> **Warning:** this plan deletes {names}. "
            "Deleting a workspace destroys all files in it.",
            "",
        ]
    refusal = safety_lines(plan)
    if refusal:
        out += ["> " + line.text.strip() for line in refusal] + [""]
    if plan.changes:
        changes = [line for change in plan.changes for line in [*change_lines(change), Line("")]]
        out += _details(f"Changes ({len(plan.changes)})", changes)
    kept = left_alone_lines(plan)
    if kept:
        out += _details(f"Left alone ({len(kept)})", kept, fence="text")
    if plan.unobservable:
        out += _details(
            f"Could not be observed ({len(plan.unobservable)})",
            [Line(s) for s in plan.unobservable],
            fence="text",
        )
    if plan.warnings:
        out += ["**Warnings**", ""] + [f"- {w}" for w in plan.warnings] + [""]
    return trim("\n".join(out) + "\n")


def trim(text: str, limit: int = MAX_COMMENT_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters at a line boundary, closing any open fence."""
    if len(text) <= limit:
        return text
    kept = text[: limit - _TRIM_RESERVE].rsplit("\n", 1)[0]
    closing = "\n```\n\n</details>\n" if kept.count("```") % 2 else "\n"
    dropped = text[len(kept) :].count("\n")
    return (
        kept
        + closing
        + f"\n_… {dropped} more lines trimmed to fit a comment. Run `reconciler plan "
        "--format text` to see the whole plan._\n"
    )
