"""The quarterly access review in both templates, as docs/ci.md tells a team to run it
(issue 44 item 5): an operator starts it (``review-start``), reviewers fill the file in a pull
request whose ``review check`` job fails until it is complete and sound, ``review apply``
turns the revocations into the manifest change the same pull request's plan shows, the merge
applies it, and an operator closes the review (``review-close``), whose artefact is the
evidence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.ci_pipelines import FORGES, Team, TeamFactory, ci_tool, make_team
from tests.support.cli_runner import run_reconciler
from tests.support.review import fill, keep, revoke

__all__ = ["ci_tool", "make_team"]  # fixtures
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.parametrize("forge", FORGES)]
REVIEW = "reviews/2026-q1.csv"
PROTECT = '  protect: ["Archive*"]               # glob patterns of workspace names never deleted\n'


def _newest_artefact(team: Team, name: str) -> Path:
    found = sorted(team.root.glob(f"run-*/artifacts/**/{name}"))
    assert found, f"no artefact {name}"
    return found[-1]


def _committed(team: Team, artefact: Path) -> Path:
    """The file an operator job left as an artefact, committed to the branch."""
    path = team.checkout / REVIEW
    path.parent.mkdir(exist_ok=True)
    shutil.copy(artefact, path)
    return path


def test_a_review_goes_from_start_to_evidence_through_the_pipeline(
    make_team: TeamFactory, forge: str
) -> None:
    team = make_team(forge)
    team.edit(PROTECT, PROTECT + "  reviewers: [viewer@acme.example]\n")
    team.apply_from_main()

    started = team.operate("review-start", review=REVIEW)
    assert started.exit_code == EXIT_OK, started.log
    path = _committed(team, _newest_artefact(team, "2026-q1.csv"))

    undecided = team.review_check(31)
    assert undecided.exit_code == EXIT_ERROR, undecided.log
    assert "has no decision yet" in undecided.log

    bob = ("bob", "Finance")
    fill(path, lambda r: keep(by="bob") if r["person"] == "bob" else keep())  # bob on bob
    refused = team.review_check(31)
    assert refused.exit_code == EXIT_ERROR and "no one may review" in refused.log

    fill(path, lambda r: revoke() if (r["person"], r["workspace"]) == bob else keep())
    passed = team.review_check(31)
    assert passed.exit_code == EXIT_OK, passed.log
    assert "Check passed" in passed.log

    edited = run_reconciler("review", "apply", REVIEW, "site/", cwd=team.checkout)
    assert edited.exit_code == EXIT_OK, edited.output  # a person runs it and commits
    plan = team.pull_request(31)
    assert plan.exit_code == EXIT_OK, plan.log
    comment = team.forge_api.comments[31][0]["body"]
    assert '- bob loses access to "Finance"' in comment

    merged = team.merge()
    assert merged.applied and merged.apply.exit_code == EXIT_OK, merged.apply.log

    closed = team.operate("review-close", review=REVIEW)
    assert closed.exit_code == EXIT_OK, closed.log
    evidence = json.loads(_newest_artefact(team, "2026-q1.evidence.json").read_text())
    (revocation,) = evidence["revocations"]
    assert (revocation["person"], revocation["workspace"]) == bob
    assert revocation["removed_by"]["applied_by"].startswith("apply plan.json")
    assert _newest_artefact(team, "2026-q1.evidence.html").is_file()


@pytest.mark.parametrize("given", ["../secrets.csv", "reviews/sub/q.csv", "reviews/q.txt", ""])
def test_the_review_input_must_name_a_review_file_in_reviews(
    make_team: TeamFactory, forge: str, given: str
) -> None:
    team = make_team(forge)
    done = team.operate("review-start", review=given)
    assert done.exit_code == EXIT_ERROR
    said = "must name a file in reviews/, NAME.csv or NAME.json" if given else "needs the"
    assert said in done.log, done.log
    assert not list(team.root.glob("run-*/artifacts/**/*.csv"))
