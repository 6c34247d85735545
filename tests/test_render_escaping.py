"""Names cannot hide or spoof any part of a report (issue 32, item 6).

A name is user-controlled: the manifest's author writes it, and anyone who can make objects on
the site by hand. The pull-request comment of a plan is Markdown a code host renders and a CI
step finds again by the marker on its first line, so a name holding ``<!--``, ``-->``,
backticks, ``|``, a newline or the marker itself must show as itself and do nothing else. The
rendered comment is parsed as a code host parses it (CommonMark with tables, markdown-it-py),
and its visible text must still name every action; the terminal view must carry no control
character. Golden files under ``tests/golden/hostile-*`` fix the exact output.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.engine.drift import drift_report
from reconciler.engine.drift_news import drift_news
from reconciler.engine.planning.plan import Plan
from reconciler.engine.records.diff import VersionChange
from reconciler.identity import fold
from reconciler.render.drift import render_drift_markdown, render_drift_text
from reconciler.render.escape import visible
from reconciler.render.lines import Line, summary_line
from reconciler.render.markdown import MARKER, markdown_parts, render_markdown, trim
from reconciler.render.notify import notification_text
from reconciler.render.records_diff import RECORDS_DIFF_FORMATS, RecordsDiff
from reconciler.render.text import render_lines, render_text
from tests.support.golden import GOLDEN, assert_golden
from tests.support.markdown_view import PARSER, Rendered, raw_html
from tests.support.plan_cases import plan_case

HOSTILE = GOLDEN / "hostile-site.yaml"
RENDERINGS = {
    "hostile-plan.md": render_markdown,
    "hostile-plan.txt": render_text,
    "hostile-drift.md": lambda plan: render_drift_markdown(drift_report(plan)),
    "hostile-drift.txt": lambda plan: render_drift_text(drift_report(plan)),
}
HOSTILE_SITE = "https://acme.example.net/x --> part=9/9 <!-- `"
PREFIX = f"<!-- {MARKER} "


def hostile_plan(**changes: object) -> Plan:
    plan = plan_case(yaml.safe_load(HOSTILE.read_text(encoding="utf-8")))
    return dataclasses.replace(plan, **changes)  # type: ignore[arg-type]


OWN_HTML = re.compile(
    r"<!-- site-reconciler:plan [^\n]*-->|<details><summary>[^<>]*</summary>|</details>"
)


def _shown(plan: Plan) -> list[str]:
    """What each change, kept and unmanaged object must be shown as."""
    return [
        *(f'{c.kind} "{visible(c.name)}"' for c in plan.changes),
        *(f'{k.kind} "{visible(k.name)}"' for k in plan.kept),
        *(f'{u.kind} "{visible(u.name)}" (id {u.id})' for u in plan.unmanaged),
    ]


def _assert_shows_everything_and_hides_nothing(plan: Plan, parts: list[str]) -> None:
    seen = ""
    for number, part in enumerate(parts, start=1):
        lines = part.split("\n")
        assert lines[0].startswith(PREFIX) and lines[0].endswith(f"part={number}/{len(parts)} -->")
        assert not any(line.lstrip().startswith("<!--") for line in lines[1:]), part
        html = raw_html(part)  # the marker and the collapsible sections: the tool's HTML only
        assert html[0] == lines[0] and all(OWN_HTML.fullmatch(piece) for piece in html), html
        rendered = Rendered(part)
        assert set(rendered.strong) <= {"Note:", "Warning:", "Warnings", f"{summary_line(plan)}"}
        assert "a" not in rendered.tags and "/summary" not in rendered.tags[-3:]  # no link
        seen += rendered.visible
    for text in _shown(plan):
        assert text in seen, text
    for sentence in (*plan.notices, *plan.warnings):
        assert visible(sentence) in seen, sentence


@pytest.mark.parametrize("name", RENDERINGS)
def test_hostile_names_render_as_reviewed(name: str) -> None:
    assert_golden(name, RENDERINGS[name](hostile_plan()))


def test_the_rendered_comment_shows_every_action_and_hides_nothing() -> None:
    names = [c.name for c in hostile_plan().changes]
    plan = hostile_plan(
        notices=(f"A note naming {names[0]} and {names[1]}",),
        warnings=(f"`previously: [{names[2]}]` <!-- a warning -->",),
        guards=(f'it deletes workspace "{names[-1]}" <details>',),
    )
    assert any(c.action == "delete" for c in plan.changes) and plan.unmanaged and plan.kept == ()
    _assert_shows_everything_and_hides_nothing(plan, markdown_parts(plan))
    split = markdown_parts(plan, limit=1_500)  # in parts, each with its own marker
    assert len(split) > 1
    _assert_shows_everything_and_hides_nothing(plan, split)


def test_a_site_address_cannot_end_or_extend_the_marker() -> None:
    plan = hostile_plan(context=dataclasses.replace(hostile_plan().context, site=HOSTILE_SITE))
    (part,) = markdown_parts(plan)
    first = part.split("\n", 1)[0]
    assert re.fullmatch(rf"<!-- {MARKER} site=\S+ records=none part=1/1 -->", first), first
    assert first.count("-->") == 1 and first.count(" part=") == 1
    assert HOSTILE_SITE in Rendered(part).visible  # the title shows it as it is
    assert raw_html(part)[0] == first


def test_text_views_carry_no_control_character() -> None:
    plan = hostile_plan()
    report = drift_report(plan)
    listed = (
        render_text(plan, show_unmanaged=True),
        render_drift_text(report, show_unmanaged=True),
    )
    for shown in listed:
        assert all(char == "\n" or char.isprintable() for char in shown)
        assert "hand\\nmade\\x1b[31m red" in shown
    coloured = render_text(plan, color=True, show_unmanaged=True)  # rich's colours only
    assert "hand\\nmade\\x1b[31m red" in coloured and "made\x1b" not in coloured


_FRAGMENTS = ("<!--", "-->", "`", "```", "~~~", "|", "\n", "*", "_", "[x](y)", "</details>",
              "<details>", PREFIX, "&lt;", "\\", "\x1b[2J", "\u202e", "#", " ", "a")  # fmt: skip


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(
        st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=6).map("".join),
        min_size=1,
        max_size=4,
        unique_by=fold,  # one name each: two spellings of one name would be one object
    )
)
def test_any_name_made_of_markup_shows_as_written(names: list[str]) -> None:
    """Workspaces to create, one to delete and one never managed, named from the pieces of
    Markdown, HTML and terminal control a name may hold."""
    case = {
        "desired": {
            "policy": {"prune": True, "max_delete_fraction": 1.0},
            "workspaces": [{"name": name, "users": ["alice"]} for name in names[1:]],
            "groups": [{"name": names[0], "members": ["bob"]}],
        },
        "live": {"workspaces": [{"id": 12, "name": names[0]}, {"id": 13, "name": "x" + names[0]}]},
        "state": {"workspaces": {names[0]: {"id": 12}}},
    }
    plan = plan_case(case)
    assert len(plan.changes) == len(names) + 1
    _assert_shows_everything_and_hides_nothing(plan, markdown_parts(plan))
    shown = render_text(plan)
    assert all(char == "\n" or char.isprintable() for char in shown)


def test_a_trimmed_report_closes_the_fence_it_opened() -> None:
    """A drift report too long for one comment is cut; the block it cuts is closed with its
    own fence (four backticks here: a name holds three), so the note after it is not code."""
    report = drift_report(hostile_plan())
    report = dataclasses.replace(report, missing=report.missing * 400)
    trimmed = trim(render_drift_markdown(report), limit=5_000)
    tokens = PARSER.parse(trimmed)
    assert [t.type for t in tokens].count("fence") == 1
    assert "more lines trimmed" in tokens[-2].content and tokens[-2].type == "inline"
    assert all(OWN_HTML.fullmatch(piece) for piece in raw_html(trimmed))


def test_a_name_cannot_split_a_cell_of_the_state_diff_table() -> None:
    hostile = "a | b <!-- `c` -->"
    changes = [
        VersionChange("workspace", hostile, "changed", "members", [1001], [1002]),
        VersionChange("group", "crew", "added", None, None, {"id": 7}),
    ]
    markdown = RECORDS_DIFF_FORMATS.render(RecordsDiff(HOSTILE_SITE, 1, 2, changes), "markdown")
    assert raw_html(markdown) == []
    assert [t.type for t in PARSER.parse(markdown)].count("table_open") == 1
    cells = [t for t in PARSER.parse(markdown) if t.type in ("th_open", "td_open")]
    assert len(cells) == 6 * 3  # the head and two rows, six cells each
    assert f"workspace{hostile}members" in Rendered(markdown).visible.replace("\n", "")


def test_a_name_cannot_mention_everyone_or_add_lines_to_a_chat_message() -> None:
    plan = hostile_plan()
    report = drift_report(dataclasses.replace(plan, changes=(
        dataclasses.replace(plan.changes[0], name="x\n• Extra: <!channel> <https://evil|ok>"),
    )))  # fmt: skip
    text = notification_text(drift_news(report, None))
    assert "<!channel>" not in text and "<https" not in text
    (line,) = [line for line in text.split("\n") if "channel" in line]
    assert line.startswith('• Missing: group "x\\n• Extra: &lt;!channel&gt;')


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8),
            st.text(st.sampled_from("a 張\x1b\n\r\t\u202e\u200b\u00a0\u2028é"), max_size=6),
        ),
        max_size=6,
    )
)
def test_plain_text_lines_escape_as_each_line_escaped_alone(texts: list[str]) -> None:
    """``render_lines`` checks the whole text once for anything to escape (issue 47): the
    result is every line through ``visible``, whatever the lines hold."""
    lines = [Line(text) for text in texts]
    expected = "\n".join(visible(text) for text in texts) + "\n"
    assert render_lines(lines, color=False) == expected
