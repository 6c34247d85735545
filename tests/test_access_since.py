"""``--since``: an earlier report read back strictly, and what was gained, lost and changed.

Every file that is not an earlier report this version can compare with is one clear error
(exit 1), never a traceback and never a comparison with nothing.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from typing import Any

import pytest

from reconciler.access.model import ReportScope
from reconciler.access.since import (
    MAX_PREVIOUS_DEPTH,
    BadPreviousReport,
    compare,
    load_previous,
)
from reconciler.errors import EXIT_ERROR
from reconciler.render.access import render_access, render_access_json
from tests.support.access_golden import golden_report

NOT_A_REPORT = "is not a site-reconciler access report"


def report_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(render_access_json(replace(golden_report(), since=None)))
    return data


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json {", "is not JSON"),
        ('{"format": "site-reconciler-plan", "format_version": 3}', NOT_A_REPORT),
        ("[1, 2]", NOT_A_REPORT),
        (
            '{"format": "site-reconciler-access", "format_version": 7}',
            "of format version 7; this reconciler reads version 1",
        ),
    ],
)
def test_a_file_that_is_not_a_report_of_this_version_is_one_clear_error(
    text: str, says: str
) -> None:
    with pytest.raises(BadPreviousReport, match=says) as raised:
        load_previous(text, "q3.json")
    assert raised.value.exit_code == EXIT_ERROR
    assert "q3.json" in raised.value.message


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("entries", 0, "user_id"), "1000"),
        (("entries", 0, "member"), "yes"),
        (("sign_off",), "Rita"),
        (("entries", 0, "manifest"), "maybe"),
        (("sign_off",), {}),
    ],
)
def test_a_damaged_report_names_what_is_wrong(path: tuple[Any, ...], value: Any) -> None:
    data = report_data()
    holder: Any = data
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    with pytest.raises(BadPreviousReport, match=r"q3.json is damaged: .*"):
        load_previous(json.dumps(data), "q3.json")


def test_a_missing_key_is_damage_too() -> None:
    data = report_data()
    del data["entries"][0]["workspace"]
    with pytest.raises(BadPreviousReport, match="damaged"):
        load_previous(json.dumps(data), "q3.json")


def test_a_signed_off_report_reads_back_with_its_sign_off() -> None:
    data = report_data()
    data["sign_off"] = {"reviewer": "Rita", "date": "2026-08-21", "notes": "fine"}
    earlier = load_previous(json.dumps(data), "q3.json")
    since = compare(earlier, golden_report(), "q3.json")
    assert since.previous_sign_off.reviewer == "Rita"
    assert (since.gained, since.lost, since.changed) == ((), (), ())


def test_gained_lost_and_changed_with_the_dates_of_both() -> None:
    now = replace(golden_report(), since=None)
    earlier = replace(
        now,
        read_at="2026-08-01T00:00:00Z",
        entries=tuple(
            replace(e, active=None) if e.person == "bob" else e
            for e in now.entries
            if e.person != "dave"
        ),
    )
    later = replace(now, entries=tuple(e for e in now.entries if e.person != "carol"))
    since = compare(earlier, later, "q3.json")
    assert (since.previous_read_at, since.read_at) == ("2026-08-01T00:00:00Z", now.read_at)
    assert [(e.person, e.workspace) for e in since.gained] == [("dave", "Legal")]
    assert [(e.person, e.workspace) for e in since.lost] == [("carol", "Finance")]
    assert [(s.person, s.field, s.before, s.after) for s in since.changed] == [
        ("bob", "active", "unknown", "true")
    ]


def test_an_account_is_the_same_by_its_id_whatever_its_username_and_says_so() -> None:
    now = replace(golden_report(), since=None)
    earlier = replace(now, entries=tuple(replace(e, person=e.person.upper()) for e in now.entries))
    since = compare(earlier, now, "q3.json")
    assert (since.gained, since.lost) == ((), ())
    assert {(s.user_id, s.workspace_id, s.field, s.before, s.after) for s in since.changed} == {
        (e.user_id, e.workspace_id, "username", e.person.upper(), e.person) for e in now.entries
    }


def test_a_workspace_made_again_under_its_name_is_lost_and_gained_and_each_shows_its_id() -> None:
    now = replace(golden_report(), since=None)
    legal = next(w for w in now.workspaces if w.name == "Legal")
    earlier = replace(
        now,
        entries=tuple(
            replace(e, workspace_id=99) if e.workspace == "Legal" else e for e in now.entries
        ),
    )
    since = compare(earlier, now, "q3.json")
    assert {(e.user_id, e.workspace_id) for e in since.lost} == {
        (e.user_id, 99) for e in now.entries if e.workspace == "Legal"
    }
    assert {(e.user_id, e.workspace_id) for e in since.gained} == {
        (e.user_id, legal.id) for e in now.entries if e.workspace == "Legal"
    }
    assert since.changed == ()
    report = replace(now, since=since)
    for fmt in ("text", "markdown", "html"):
        text = html.unescape(render_access(report, fmt))
        assert 'bob lost "Legal" (ID 99, member)' in text, fmt
        assert f'bob gained "Legal" (ID {legal.id}, member)' in text, fmt


def test_a_report_whose_changes_carry_no_ids_still_reads() -> None:
    data = report_data()
    data["since"] = {
        "previous_read_at": "2026-05-01T00:00:00Z",
        "read_at": "2026-08-01T00:00:00Z",
        "previous_sign_off": {"reviewer": None, "date": None, "notes": None},
        "gained": [],
        "lost": [],
        "changed": [
            {"workspace": "Legal", "person": "bob", "field": "via", "before": "a", "after": "b"}
        ],
    }
    earlier = load_previous(json.dumps(data), "q2.json")
    assert earlier.since is not None
    assert (earlier.since.changed[0].workspace_id, earlier.since.changed[0].user_id) == (None, None)
    assert 'bob in "Legal": via a -> b' in render_access(earlier, "text")


@pytest.mark.parametrize("depth", [MAX_PREVIOUS_DEPTH + 1, 100_000])
def test_a_file_nested_too_deep_is_one_clear_error(depth: int) -> None:
    with pytest.raises(
        BadPreviousReport, match=f"q3.json is nested more than {MAX_PREVIOUS_DEPTH}"
    ):
        load_previous("[" * depth + "]" * depth, "q3.json")


def test_another_site_s_report_is_refused() -> None:
    now = golden_report()
    with pytest.raises(BadPreviousReport, match=re.escape("is a report of https://other.example")):
        compare(replace(now, site="https://other.example"), now, "q3.json")


def test_a_whole_site_report_compares_with_a_narrower_one_within_its_scope() -> None:
    now = replace(golden_report(), since=None)
    narrow = replace(
        now,
        scope=ReportScope((), ("Fin*",)),
        workspaces=tuple(w for w in now.workspaces if w.name == "Finance"),
        entries=tuple(e for e in now.entries if e.workspace == "Finance"),
    )
    since = compare(now, narrow, "q3.json")
    assert (since.gained, since.lost, since.changed) == ((), (), ())


def test_a_narrower_earlier_report_of_another_scope_is_refused() -> None:
    now = replace(golden_report(), since=None)
    earlier = replace(now, scope=ReportScope(("alice",), ()))
    with pytest.raises(
        BadPreviousReport, match="covers --user alice; this report covers the whole site"
    ):
        compare(earlier, now, "q3.json")
