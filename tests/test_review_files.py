"""Review files written and read back (``review/files.py``) and judged (``review/check.py``)
without a site: a spreadsheet's re-save still checks, a file that is not a review is one clear
error, and each kind of wrong decision is named."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reconciler.render.access import neutralised
from reconciler.render.review import evidence_html
from reconciler.review import files
from reconciler.review.check import check_review
from reconciler.review.files import BadReview, read_review, review_text
from reconciler.review.model import Decision, Review, Reviewer, sealed
from tests.support.review import TODAY, fill, keep

SITE = "https://files.example"


def _facts(person: str, user_id: int, workspace: str = "Finance") -> dict[str, str | int]:
    return {
        "workspace": workspace,
        "workspace_id": 7,
        "person": person,
        "user_id": user_id,
        "email": f"{person}@acme.example",
        "name": person.title(),
        "active": "true",
        "via": "member",
        "permissions": "download_files (workspace override)",
        "notifications": "own (not read)",
        "root_access": "false",
        "manifest": "declared",
        "expires": "2026-12-31" if person == "carol" else "standing",
        "findings": "",
        "reviewer": "vera",
    }


def _review() -> Review:
    reviewers = (Reviewer("vera", 2, "vera", "vera@acme.example"),)
    rows = [_facts("alice", 1001), _facts("=bob", 1002), _facts("carol", 1003, "Legal")]
    return sealed(SITE, "2026-01-05T10:00:00Z", "0.1.0", False, reviewers, rows)


def _written(tmp_path: Path, kind: str, review: Review | None = None) -> Path:
    path = tmp_path / f"review.{kind}"
    path.write_text(review_text(review or _review(), kind), encoding="utf-8")
    return path


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_a_file_reads_back_as_written_and_checks_once_decided(tmp_path: Path, kind: str) -> None:
    path = _written(tmp_path, kind)
    back = read_review(path)
    assert back.header == _review().header
    written = [{k: neutralised(str(v)) for k, v in r.facts.items()} for r in _review().rows]
    assert [{k: str(v) for k, v in r.facts.items()} for r in back.rows] == (
        written
        if kind == "csv"
        else [{k: str(v) for k, v in r.facts.items()} for r in _review().rows]
    )
    fill(path, lambda row: keep(by="vera@acme.example"))
    verdict = check_review(read_review(path))
    assert verdict.passed, verdict.problems


def test_the_grants_end_is_a_sealed_fact_and_a_file_written_before_it_still_checks(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, "csv")
    fill(path, lambda row: keep(by="vera@acme.example"))
    text = path.read_text(encoding="utf-8")
    extended = text.replace(",2026-12-31,", ",2027-12-31,")
    assert extended != text
    path.write_text(extended, encoding="utf-8")
    verdict = check_review(read_review(path))
    assert not verdict.passed  # an access's end moved after the review started
    assert any("carol" in problem.message for problem in verdict.problems), verdict.problems

    before = [{k: v for k, v in _facts(p, i).items() if k != "expires"} for p, i in PEOPLE]
    older = sealed(SITE, "2026-01-05T10:00:00Z", "0.1.0", False, (), before)
    json_path = tmp_path / "older.json"
    json_path.write_text(review_text(older, "json"), encoding="utf-8")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    for row in data["rows"]:
        del row["expires"]  # as a release before the column wrote it
    json_path.write_text(json.dumps(data), encoding="utf-8")
    fill(json_path, lambda row: keep(by="vera@acme.example"))
    verdict = check_review(read_review(json_path))
    assert verdict.passed, verdict.problems


PEOPLE = [("alice", 1001), ("dave", 1004)]


def test_a_spreadsheet_resave_with_its_own_spelling_of_booleans_still_checks(
    tmp_path: Path,
) -> None:
    path = _written(tmp_path, "csv")
    fill(path, lambda row: keep())
    text = path.read_text(encoding="utf-8").replace(",true,", ",TRUE,").replace("false", "FALSE")
    path.write_text("\ufeff" + text, encoding="utf-8")
    verdict = check_review(read_review(path))
    assert verdict.passed, verdict.problems


def test_each_wrong_decision_is_named(tmp_path: Path) -> None:
    review = _review()
    decisions = [
        Decision("maybe", "", "vera", TODAY),
        Decision("keep", "", "vera", "last tuesday"),
        Decision("revoke", "gone", "", "2025-12-31"),
    ]
    rows = tuple(replace(r, decision=d, where=f"rows[{i}]") for i, (r, d) in enumerate(
        zip(review.rows, decisions, strict=True), start=1))  # fmt: skip
    messages = [p.message for p in check_review(replace(review, rows=rows)).problems]
    assert messages == [
        "alice @ \"Finance\" (rows[1]) has the decision 'maybe': write keep or revoke",
        "=bob @ \"Finance\" (rows[2]) has decided_at 'last tuesday': write a date, YYYY-MM-DD",
        'carol @ "Legal" (rows[3]) does not say who decided (decided_by)',
        'carol @ "Legal" (rows[3]) was decided on 2025-12-31, before the population was read '
        "(2026-01-05)",
    ]


def test_a_reviewer_known_only_by_the_header_is_the_assigned_one(tmp_path: Path) -> None:
    """vera reaches no workspace, so no row names her: the header says who ``vera`` is."""
    path = _written(tmp_path, "json")
    fill(path, lambda row: keep(by="2"))  # her user ID
    assert check_review(read_review(path)).problems == ()
    fill(path, lambda row: keep(by="carol@acme.example"))
    problems = check_review(read_review(path)).problems
    assert [p.severity for p in problems] == ["warning", "warning", "error"]  # carol's own row


NOT_A_REVIEW = [
    ('{"format": "site-reconciler-access", "entries": []}', "is not a site-reconciler review"),
    ("[1, 2]", "not a review file"),
    ('{"a": ' * 40 + "1" + "}" * 40, "nested more than 8 levels deep"),
    ("{not json", "is not JSON"),
    ('"a","b"\n1,2\n', "has no row of column names"),
    ('"format","' + "x" * 200_000 + '"\n', "is not a CSV file a review can be"),
]


@pytest.mark.parametrize(("text", "said"), NOT_A_REVIEW)
def test_what_is_not_a_review_is_one_clear_error(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "odd.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadReview) as refused:
        read_review(path)
    assert said in refused.value.message


def test_a_damaged_review_names_what_is_wrong(tmp_path: Path) -> None:
    path = _written(tmp_path, "json")
    data = json.loads(path.read_text(encoding="utf-8"))
    for change, said in [
        ({"format_version": 9}, "of format version 9; this reconciler reads version 1"),
        ({"row_count": "three"}, "its row_count cannot be read"),
        ({"rows": [["a"]]}, "rows[1]: a row must be an object"),
        ({"rows": [{"workspace": "x"}]}, "rows[1]: lacks workspace_id"),
        ({"reviewers": [{"reference": 1}]}, "its reviewers cannot be read"),
    ]:
        path.write_text(json.dumps({**data, **change}), encoding="utf-8")
        with pytest.raises(BadReview) as refused:
            read_review(path)
        assert said in refused.value.message
    csv_path = _written(tmp_path, "csv")
    text = csv_path.read_text(encoding="utf-8").replace('"row_check"', '"check"')
    csv_path.write_text(text, encoding="utf-8")
    with pytest.raises(BadReview, match="lacks the column"):
        read_review(csv_path)


def test_a_file_too_large_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _written(tmp_path, "csv")
    monkeypatch.setattr(files, "MAX_REVIEW_BYTES", 100)
    with pytest.raises(BadReview, match="is larger than"):
        read_review(path)


def test_the_evidence_page_shows_every_value_as_text() -> None:
    """A justification or a name is text on the page: never markup, never a request."""
    hostile = '<img src=x onerror=alert(1)> & "quotes"'
    evidence = {
        "site": SITE,
        "review_file": "q1.csv",
        "population": {
            "read_at": "2026-01-05T10:00:00Z", "tool_version": "0.1.0", "row_count": 1,
            "digest": "sha256:ab", "strict": False,
        },
        "closed": {"at": "2026-01-09T10:00:00Z", "by": "vera", "tool_version": "0.1.0"},
        "summary": {
            "rows": 1, "keep": 0, "revoke": 1, "removed_by_apply": 0, "removed_otherwise": 1,
        },
        "warnings": [],
        "decisions": [{
            "person": hostile, "user_id": 1, "workspace": "W", "workspace_id": 2, "via": "member",
            "reviewer": ["vera"], "decision": "revoke", "justification": hostile,
            "decided_by": "vera", "decided_at": "2026-01-06",
        }],
        "revocations": [{
            "person": hostile, "user_id": 1, "workspace": "W", "workspace_id": 2,
            "absent_at": "2026-01-09T10:00:00Z", "removed_by": None,
        }],
    }  # fmt: skip
    page = evidence_html(evidence)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt; &amp;" in page
    assert page.count("&lt;img") == 3
