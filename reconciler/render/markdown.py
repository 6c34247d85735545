"""Render a plan as Markdown for pull-request comments: one comment, updated, never lost.

Each comment begins with a marker, an HTML comment naming the site and the records the plan
was made against (``<!-- site-reconciler:plan site=URL records=ID part=1/1 -->``), so a job
finds the comment it posted before and edits it instead of adding one per push. A plan longer
than a code host accepts in one comment (65,535 characters) is split into numbered parts: the
summary, notices and warnings first, the details continued part after part, each part its own
comment with its own marker. Nothing is trimmed away.

The drift report and the state diff still fit theirs in one comment (``trim``).

Names are user-controlled (the manifest's, the site's), so no name may hide, end or spoof any
part of the plan or its marker. Every piece outside a code block is a macro of the template
``templates/plan.md.j2``, which escapes every value as Markdown text
(``render/templating.py``); the lines of a code block enter only through ``_Section``, which
shows them as written (``visible``) behind a fence made from them (``code_fence``), so no line
can close it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reconciler.engine.planning.plan import Plan
from reconciler.render.access_plan import access_lines
from reconciler.render.escape import code_fence, visible
from reconciler.render.lines import (
    Line,
    change_lines,
    expiring_lines,
    left_alone_lines,
    record_lines,
    safety_lines,
    summary_line,
)
from reconciler.render.templating import markdown_macros, trusted

if TYPE_CHECKING:
    from markupsafe import Markup

MAX_COMMENT_CHARS = 60_000
_TRIM_RESERVE = 400  # room for the closing fences and the trim note

MAX_PART_CHARS = 65_535
"""The most a comment may hold (GitHub refuses 65,536 characters and more)."""
MARKER = "site-reconciler:plan"
_HEADER_RESERVE = 1_000  # a part's marker, heading and summary line, beyond the site's URL
MAX_LINE_CHARS = 4_000  # a longer line (a mass deletion's warning) is cut, saying so


def records_digest(plan: Plan) -> str:
    """What the marker names the records by: the same for every plan of this site and these
    records, so a job updates its comments. A digest: the records' location may name hosts a
    pull request's readers need not see."""
    state = plan.context.state
    return hashlib.sha256(state.encode()).hexdigest()[:12] if state else "none"


def _macros() -> Any:
    return markdown_macros("plan.md.j2")


def _lines(piece: Markup) -> list[str]:
    """A macro's output as the pager's lines (it ends each line with a newline)."""
    return str(piece).removesuffix("\n").split("\n") if piece else []


@dataclass(frozen=True, slots=True)
class _Section:
    """A collapsible section; a long one continues in the next part. Its ``lines`` are shown
    as written (``visible``: ``of`` makes them so), in a code block of ``info`` (``diff``,
    ``text``) that ``fence`` opens and closes: longer than any run of backticks in them."""

    title: str
    lines: Sequence[str]
    info: str

    @classmethod
    def of(cls, title: str, texts: Sequence[str], info: str) -> _Section:
        return cls(title, [visible(text) for text in texts], info)

    @property
    def fence(self) -> str:
        return code_fence(self.lines)


def _head_lines(plan: Plan) -> list[str]:
    """What part 1 carries before any details: notices, deletions, refusals."""
    deletions = [c for c in plan.changes if c.action in ("delete", "replace")]
    names = ", ".join(f'{c.kind} "{c.name}"' for c in deletions)
    refusal = [line.text.strip() for line in safety_lines(plan)]
    return _lines(_macros().head(plan.notices, names, refusal))


def _sections(plan: Plan) -> list[_Section]:
    sections = []
    if plan.changes:
        changes = [line for change in plan.changes for line in [*change_lines(change), Line("")]]
        sections.append(_Section.of(f"Changes ({len(plan.changes)})", _texts(changes), "diff"))
    if plan.access:
        title = f"Who gains or loses access ({len(plan.access)})"
        gains = [line.text[2:] for line in access_lines(plan.access)]
        sections.append(_Section.of(title, gains, "diff"))
    if plan.expiring:
        title = f"Expires soon ({len(plan.expiring)})"
        sections.append(_Section.of(title, _texts(expiring_lines(plan)), "text"))
    if plan.changed_records:
        title = f"Records only, the site is not changed ({len(plan.changed_records)})"
        sections.append(_Section.of(title, _texts(record_lines(plan)), "text"))
    kept = left_alone_lines(plan)
    if kept:
        sections.append(_Section.of(f"Left alone ({len(kept)})", _texts(kept), "text"))
    if plan.unobservable:
        title = f"Could not be observed ({len(plan.unobservable)})"
        sections.append(_Section.of(title, plan.unobservable, "text"))
    return sections


def _texts(lines: Sequence[Line]) -> list[str]:
    return [line.text for line in lines]


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
        fence = trusted(section.fence)  # backticks only, made from the section's lines
        closing = _lines(_macros().section_closing(fence))
        lines = [_cut(line) for line in section.lines]
        title, i = section.title, 0
        while True:
            opening = _lines(_macros().section_opening(title, fence, section.info))
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
    pages = _Pages(limit - _HEADER_RESERVE - 2 * len(plan.site))
    pages.add(*_head_lines(plan))
    for section in _sections(plan):
        pages.section(section)
    if plan.warnings:
        pages.add(*_lines(_macros().warnings(plan.warnings)))
    parts = [lines for lines in pages.parts if lines] or [[]]
    total = len(parts)
    digest = records_digest(plan)
    summary = trusted(summary_line(plan))  # the tool's words: counts and API method names
    return [
        str(_macros().part_head(trusted(MARKER), plan.site, digest, number, total, summary))
        + "".join(line + "\n" for line in lines)
        for number, lines in enumerate(parts, start=1)
    ]


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
