"""An access review from start to evidence against the sandbox (issue 44 items 1, 2 and 4):
the population frozen from the live site, a file checked as reviewers leave it (self-review
and tampering refused, a reordered file accepted), and ``close`` proving every revocation
gone -- naming the apply that removed it -- or naming the one still there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.api.answers import NewUser
from reconciler.errors import EXIT_ERROR, EXIT_OK
from reconciler.review.model import FACT_COLUMNS, population_digest
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite
from tests.support.review import TODAY, edit_rows, fill, keep, read_rows, revoke

REVIEWERS = "  reviewers: [viewer@acme.example]\n"
LEGAL = "users: [frank, grace@acme.example, heidi]"


def _started(site: LoopbackSite, name: str = "q1.csv", policy: str = REVIEWERS) -> Path:
    """The example applied with more policy, and a review started."""
    site.write_manifest("site.yaml", EXAMPLE_SITE.read_text(encoding="utf-8") + policy)
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    started = site.run("review", "start", "site.yaml", "-o", name)
    assert started.returncode == EXIT_OK, started.stderr
    return site.workdir / name


def _access_entries(site: LoopbackSite) -> list[dict[str, Any]]:
    report = site.run("access", "site.yaml", "--format", "json")
    entries: list[dict[str, Any]] = json.loads(report.stdout)["entries"]
    return entries


# --- item 1: start ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["q1.csv", "q1.json"])
def test_start_freezes_one_row_per_access_as_access_reads_it(site: LoopbackSite, name: str) -> None:
    path = _started(site, name)
    header, rows = read_rows(path)
    entries = _access_entries(site)

    assert [(r["person"], r["workspace"]) for r in rows] == [
        (e["person"], e["workspace"]) for e in entries
    ]
    assert {str(r["user_id"]) for r in rows} == {str(e["user_id"]) for e in entries}
    assert all(r["reviewer"] == "viewer@acme.example" for r in rows)
    assert all(r[c] == "" for r in rows for c in ("decision", "justification", "decided_by"))
    legacy = next(r for r in rows if (r["person"], r["workspace"]) == ("walter", "Legacy Scans"))
    assert legacy["manifest"] == "not declared" and "undeclared" in legacy["findings"]
    admin = next(r for r in rows if r["person"] == "admin")
    assert admin["via"] == "administrator" and "administrator" in admin["findings"]

    stated = dict(line[:2] for line in header) if name.endswith(".csv") else None
    data = json.loads(path.read_text()) if name.endswith(".json") else None
    head = stated if stated is not None else {k: str(v) for k, v in (data or {}).items()}
    assert head["site"] == site.url and head["row_count"] == str(len(rows))
    assert head["tool_version"] and head["read_at"].endswith("Z")
    # the digest is over the rows' facts, whatever their order
    from reconciler.review.files import read_review

    review = read_review(path)
    digest = population_digest(
        site.url, review.header.read_at, False, review.header.reviewers,
        [dict(reversed(list(r.facts.items()))) for r in reversed(review.rows)],
    )  # fmt: skip
    assert head["digest"] == digest
    assert review.header.reviewers[0].user_id == 2  # viewer@acme.example, as the site says


def test_the_csv_opens_in_a_spreadsheet_as_text(site: LoopbackSite) -> None:
    """Names a spreadsheet would compute are written as text: no cell starts a formula."""
    hostile = NewUser("-x", "x@acme.example", "=HYPERLINK(1)", "Doe,@SUM(2)")
    user = site.api(lambda c: c.user_add(hostile))
    site.api(lambda c: c.add_to_workspace(user, [1]))
    path = _started(site)
    cells = _cells(path.read_text(encoding="utf-8"))
    assert "'-x" in cells and "'=HYPERLINK(1) Doe,'@SUM(2)" in cells
    assert not any(cell.startswith(("=", "+", "@", "-")) for cell in cells)
    assert site.run("review", "check", "q1.csv").returncode == EXIT_ERROR  # undecided only
    fill(path, lambda row: keep())
    assert site.run("review", "check", "q1.csv").returncode == EXIT_OK


def _cells(text: str) -> list[str]:
    import csv
    import io

    return [cell for line in csv.reader(io.StringIO(text)) for cell in line]


# --- item 2: check ---------------------------------------------------------------------------


def test_check_passes_a_complete_review_saved_again_by_a_spreadsheet(site: LoopbackSite) -> None:
    path = _started(site)
    fill(path, lambda row: revoke() if row["person"] == "bob" else keep())  # two rows
    edit_rows(path, lambda rows: sorted(rows, key=lambda r: r["row_check"]))  # re-sorted

    result = site.run("review", "check", "q1.csv")

    assert result.returncode == EXIT_OK, result.stdout
    assert "Check passed: 40 of 40 decided (38 keep, 2 revoke)." in result.stdout


def test_check_lists_every_undecided_row_and_a_revoke_without_justification(
    site: LoopbackSite,
) -> None:
    path = _started(site, "q1.json")
    fill(path, lambda row: revoke(why="") if row["person"] == "bob" else None)

    result = site.run("review", "check", "q1.json")

    assert result.returncode == EXIT_ERROR
    assert 'bob @ "Finance" (rows[' in result.stdout
    assert "is revoked without a justification" in result.stdout
    assert result.stdout.count("has no decision yet") == 38
    assert "2 of 40 decided (0 keep, 2 revoke)" in result.stdout


def test_check_refuses_a_self_review_by_username_email_or_id(site: LoopbackSite) -> None:
    path = _started(site)
    own = {"Finance": "ALICE@acme.example", "Company Share": "1001", "Archive 2023": " Alice"}

    def decide(row: dict[str, Any]) -> dict[str, str]:
        if row["person"] == "alice":
            return keep(by=own[row["workspace"]])
        return keep()

    fill(path, decide)
    result = site.run("review", "check", "q1.csv")

    assert result.returncode == EXIT_ERROR
    self_reviews = [line for line in result.stdout.splitlines() if "no one may review" in line]
    assert len(self_reviews) == 3, result.stdout
    assert all("alice @" in line for line in self_reviews)


@pytest.mark.parametrize(
    ("tamper", "said"),
    [
        ("alter", 'bob @ "Finance" (line '),
        ("remove", "the file has 39 rows; the population had 40"),
        ("add", "repeats the access of"),
        ("header", "the population does not match its digest"),
    ],
)
def test_check_refuses_a_tampered_population(site: LoopbackSite, tamper: str, said: str) -> None:
    path = _started(site)
    fill(path, lambda row: keep())
    if tamper == "alter":
        edit_rows(path, lambda rows: [_widened(r) for r in rows])
    elif tamper == "remove":
        edit_rows(path, lambda rows: rows[:5] + rows[6:])
    elif tamper == "add":
        edit_rows(path, lambda rows: [*rows, dict(rows[3])])
    else:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("strict,false", "strict,true"), encoding="utf-8")

    result = site.run("review", "check", "q1.csv")

    assert result.returncode == EXIT_ERROR, result.stdout
    assert said in result.stdout
    if tamper == "alter":
        assert "was altered since the review started" in result.stdout


def _widened(row: dict[str, Any]) -> dict[str, Any]:
    if (row["person"], row["workspace"]) == ("bob", "Finance"):
        return {**row, "permissions": "all (administrator)"}
    return row


def test_a_reviewer_not_assigned_is_a_warning_and_an_error_when_strict(
    site: LoopbackSite,
) -> None:
    path = _started(site, policy=REVIEWERS + "  review: {strict: false}\n")
    fill(path, lambda row: keep(by="frank") if row["person"] == "bob" else keep(by="VIEWER"))
    loose = site.run("review", "check", "q1.csv")
    assert loose.returncode == EXIT_OK, loose.stdout
    assert "warning: bob @" in loose.stdout and "not by its assigned reviewer" in loose.stdout
    assert "2 warnings" in loose.stdout  # bob's two rows

    strict = _started(site, "strict.csv", policy="  review: {strict: true}\n" + REVIEWERS)
    fill(strict, lambda row: keep(by="frank") if row["person"] == "bob" else keep())
    refused = site.run("review", "check", "strict.csv")
    assert refused.returncode == EXIT_ERROR
    assert "error: bob @" in refused.stdout and "(policy.review.strict)" in refused.stdout


def test_check_refuses_what_is_not_a_review(site: LoopbackSite) -> None:
    site.write_manifest("report.json", '{"format": "site-reconciler-access"}')
    result = site.run("review", "check", "report.json")
    assert result.returncode == EXIT_ERROR
    assert "report.json is not a site-reconciler review file." in result.stderr
    assert "Traceback" not in result.stderr


# --- item 4: close ---------------------------------------------------------------------------


def test_close_proves_each_revocation_gone_and_names_the_apply(site: LoopbackSite) -> None:
    path = _started(site)
    legal = site.workspaces()["Legal"]["id"]
    site.api(lambda c: c.add_to_workspace(1011, [legal]))  # mallory, by hand
    assert site.run("review", "start", "site.yaml", "-o", "q1.csv").returncode == EXIT_OK
    chosen = {("grace", "Legal"), ("mallory", "Legal"), ("heidi", "Legal")}
    fill(path, lambda r: revoke() if (r["person"], r["workspace"]) in chosen else keep())
    assert site.run("review", "apply", "q1.csv", "site.yaml").returncode == EXIT_OK
    site.api(lambda c: c.remove_from_workspace(1008, [legal]))  # heidi: gone by hand first
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    checksum = json.loads((site.workdir / "plan.json").read_text())["checksum"]
    assert site.run("apply", "plan.json", "site.yaml", "--auto-approve").returncode == EXIT_OK
    ids = {user["username"]: user["id"] for user in site.state()["users"]}
    still = set(site.workspaces()["Legal"]["members"])  # the site's own state, not a read
    assert still.isdisjoint(ids[person] for person, _ in chosen)

    result = site.run("review", "close", "q1.csv", "site.yaml")

    assert result.returncode == EXIT_OK, result.output
    evidence = json.loads((site.workdir / "q1.evidence.json").read_text(encoding="utf-8"))
    assert evidence["population"]["digest"] == read_rows(path)[0][7][1]
    assert evidence["summary"] == {
        "rows": 41, "keep": 38, "revoke": 3, "removed_by_apply": 2, "removed_otherwise": 1,
    }  # fmt: skip
    removed = {r["person"]: r["removed_by"] for r in evidence["revocations"]}
    assert removed["heidi"] is None
    for person in ("grace", "mallory"):
        assert removed[person]["plan"] == checksum
        assert removed[person]["applied_by"].startswith("apply plan.json")
        assert removed[person]["applied_at"][:19] >= evidence["population"]["read_at"][:19]
    assert len(evidence["decisions"]) == 41
    grace = next(d for d in evidence["decisions"] if d["person"] == "grace")
    assert (grace["decision"], grace["decided_by"], grace["decided_at"]) == (
        "revoke", "viewer", TODAY,
    )  # fmt: skip
    html = (site.workdir / "q1.evidence.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and checksum[:12] in html
    assert "no recorded apply" in html


def test_close_names_a_revocation_that_did_not_take_effect(site: LoopbackSite) -> None:
    path = _started(site)
    bob = ("bob", "Finance")
    fill(path, lambda r: revoke() if (r["person"], r["workspace"]) == bob else keep())
    assert site.run("review", "apply", "q1.csv", "site.yaml").returncode == EXIT_OK
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda c: c.add_to_workspace(1002, [finance]))  # bob is back, by hand

    result = site.run("review", "close", "q1.csv", "site.yaml")

    assert result.returncode == EXIT_ERROR
    assert 'still on the site: bob @ "Finance"' in result.stdout
    assert "Not closed: 1 revoked access still on the site" in result.stdout
    assert not (site.workdir / "q1.evidence.json").exists()


def test_close_refuses_an_unfinished_review_before_reading_the_site(site: LoopbackSite) -> None:
    _started(site)
    site.control("calls/reset", {})
    result = site.run("review", "close", "q1.csv", "site.yaml")
    assert result.returncode == EXIT_ERROR
    assert "has no decision yet" in result.stderr
    assert site.control("calls")["methods"] == {}


def test_fact_columns_are_what_start_writes(site: LoopbackSite) -> None:
    _, rows = read_rows(_started(site))
    assert set(FACT_COLUMNS) <= set(rows[0])
