"""Render a plan as Markdown for pull-request comments: one comment, updated, never lost.

Each comment begins with a marker, an HTML comment naming the site and the records the plan
was made against (``<!-- site-reconciler:plan site=URL records=ID part=1/1 -->``), so a job
finds the comment it posted before and edits it instead of adding one per push. A plan longer
than a code host accepts in one comment (65,535 characters) is split into numbered parts: the
summary, notices and warnings first, the details continued part after part, each part its own
comment with its own marker. Nothing is trimmed away.

The drift report and the state diff still fit theirs in one comment (``trim``).

Names are user-controlled (the manifest's, the site's): every text that holds one is escaped
by ``render/escape.py`` -- outside code as Markdown text, inside code blocks fenced so that no
line can close them -- so no name can hide, end or spoof any part of the plan or its marker.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.engine.plan import Plan
from reconciler.render.access_plan import access_lines
from reconciler.render.escape import code_fence, code_span, markdown_text, marker_value, visible
from reconciler.render.lines import (
    Line,
    change_lines,
    left_alone_lines,
    record_lines,
    safety_lines,
    summary_line,
)

MAX_COMMENT_CHARS = 60_000
_TRIM_RESERVE = 400  # room for the closing fences and the trim note

MAX_PART_CHARS = 65_535
"""The most a comment may hold (GitHub refuses 65,536 characters and more)."""
MARKER = "site-reconciler:plan"
_HEADER_RESERVE = 1_000  # a part's marker, heading and summary line, beyond the site's URL
MAX_LINE_CHARS = 4_000  # a longer line (a mass deletion's warning) is cut, saying so


def marker(plan: Plan, part: int, parts: int) -> str:
    """The part's marker: the same for every plan of this site and these records, so a job
    updates its comments. The records are named by a digest: their location may name hosts
    a pull request's readers need not see."""
    state = plan.context.state
    records = hashlib.sha256(state.encode()).hexdigest()[:12] if state else "none"
    return f"<!-- {MARKER} site={marker_value(plan.site)} records={records} part={part}/{parts} -->"


@dataclass(frozen=True, slots=True)
class _Section:
    """A collapsible section; a long one continues in the next part. ``lines`` are shown as
    written (``visible``), in a code block of ``info`` (``diff``, ``text``) that ``fence``
    opens and closes: longer than any run of backticks in them."""

    title: str
    lines: Sequence[str]
    info: str

    @property
    def fence(self) -> str:
        return code_fence(self.lines)


def _head_lines(plan: Plan) -> list[str]:
    """What part 1 carries before any details: notices, deletions, refusals."""
    out = [f"> **Note:** {markdown_text(notice)}\n" for notice in plan.notices]
    deletions = [c for c in plan.changes if c.action in ("delete", "replace")]
    if deletions:
        names = ", ".join(f'{c.kind} "{c.name}"' for c in deletions)
        out += [
            f"> **Warning:** this plan deletes {markdown_text(names)}. "
            "Deleting a workspace destroys all files in it.",
            "",
        ]
    refusal = safety_lines(plan)
    if refusal:
        out += ["> " + markdown_text(line.text.strip()) for line in refusal] + [""]
    return out


def _sections(plan: Plan) -> list[_Section]:
    sections = []
    if plan.changes:
        changes = [line for change in plan.changes for line in [*change_lines(change), Line("")]]
        sections.append(_Section(f"Changes ({len(plan.changes)})", _texts(changes), "diff"))
    if plan.access:
        title = f"Who gains or loses access ({len(plan.access)})"
        gains = [visible(line.text[2:]) for line in access_lines(plan.access)]
        sections.append(_Section(title, gains, "diff"))
    if plan.changed_records:
        title = f"Records only, the site is not changed ({len(plan.changed_records)})"
        sections.append(_Section(title, _texts(record_lines(plan)), "text"))
    kept = left_alone_lines(plan)
    if kept:
        sections.append(_Section(f"Left alone ({len(kept)})", _texts(kept), "text"))
    if plan.unobservable:
        title = f"Could not be observed ({len(plan.unobservable)})"
        sections.append(_Section(title, [visible(fact) for fact in plan.unobservable], "text"))
    return sections


def _texts(lines: Sequence[Line]) -> list[str]:
    return [visible(line.text) for line in lines]


class _Pages:
    """Lines packed into parts of at most ``budget`` characters."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.parts: list[list[str]] = [[]]
        self.size = 0

    def fits(self, lines: Sequence[str]) -> bool:
        return self.size + sum(len(line) + 1 for line in lines) <= self.budget

    def add(self, *lines: str) -> None:
        for line in lines:
            line = _cut(line)
            if not self.fits([line]) and self.size:
                self.next()
            self.parts[-1].append(line)
            self.size += len(line) + 1

    def next(self) -> None:
        self.parts.append([])
        self.size = 0

    def section(self, section: _Section) -> None:
        closing = [section.fence, "", "</details>", ""]
        lines = [_cut(line) for line in section.lines]
        title, i = section.title, 0
        while True:
            opening = [f"<details><summary>{title}</summary>", "", section.fence + section.info]
            if self.size and not self.fits([*opening, *lines[i : i + 1], *closing]):
                self.next()
            self.add(*opening)
            while i < len(lines) and (self.fits([lines[i], *closing]) or not self.size):
                self.add(lines[i])
                i += 1
            self.add(*closing)
            if i >= len(lines):
                return
            self.next()
            title = f"{section.title}, continued"


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[: MAX_LINE_CHARS - 60] + f" … ({len(line):,} characters; cut for the comment)"


def markdown_parts(plan: Plan, limit: int = MAX_PART_CHARS) -> list[str]:
    """The comments of a plan, each at most ``limit`` characters, summary first."""
    title = f"### site-reconciler plan for {code_span(plan.site)}"
    pages = _Pages(limit - _HEADER_RESERVE - 2 * len(plan.site))
    pages.add(*_head_lines(plan))
    for section in _sections(plan):
        pages.section(section)
    if plan.warnings:
        pages.add("**Warnings**", "", *(f"- {markdown_text(w)}" for w in plan.warnings), "")
    parts = [lines for lines in pages.parts if lines] or [[]]
    total = len(parts)
    out = []
    for number, lines in enumerate(parts, start=1):
        if number == 1:
            head = [title, "", f"**{summary_line(plan)}**", ""]
            if total > 1:
                head += [f"_This plan is in {total} comments; this is part 1 of {total}._", ""]
        else:
            head = [
                f"{title} (part {number} of {total})",
                "",
                f"_Continued from part {number - 1}; the summary is in part 1._",
                "",
            ]
        out.append("\n".join([marker(plan, number, total), *head, *lines]) + "\n")
    return out


def render_markdown(plan: Plan) -> str:
    """Every part, one after the other: each begins with its marker line."""
    return "".join(markdown_parts(plan))


def trim(text: str, limit: int = MAX_COMMENT_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters at a line boundary, closing any open fence."""
    if len(text) <= limit:
        return text
    kept = text[: limit - _TRIM_RESERVE].rsplit("\n", 1)[0]
    fence = _open_fence(kept.split("\n"))
    closing = f"\n{fence}\n\n</details>\n" if fence else "\n"
    dropped = text[len(kept) :].count("\n")
    return (
        kept
        + closing
        + f"\n_… {dropped} more lines trimmed to fit a comment. Run `reconciler plan "
        "--format text` to see the whole plan._\n"
    )


def _open_fence(lines: Sequence[str]) -> str | None:
    """The fence of the code block still open after ``lines``, if one is."""
    fence = None
    for line in lines:
        ticks = line[: len(line) - len(line.lstrip("`"))]
        if len(ticks) < 3:
            continue
        if fence is None:
            fence = ticks
        elif ticks == line and len(ticks) >= len(fence):
            fence = None
    return fence
