"""``review apply`` against the sandbox (issue 44 item 3): each revocation becomes the removal
of the member from the file that declares it, every other byte of a commented manifest kept
(compared with a golden file); access the manifest never declared needs no change; an
administrator, a list shared through an anchor and a workspace the manifest does not declare
are named with what to do; and the plan of the edited manifest takes away exactly the revoked
accesses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from reconciler.api.answers import NewUser
from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite
from tests.support.review import fill, keep, read_rows, revoke

CASE = Path(__file__).parent / "cases" / "review" / "commented.yaml"
GOLDEN = Path(__file__).parent / "golden" / "review-commented.yaml"
MALLORY = 1011

REVOKED = {
    ("bob", "Finance"),  # a block list, a comment line above it
    ("grace", "Legal"),  # a quoted reference in a flow list written over two lines
    ("oscar", "Legal"),  # the flow list's last item, named by ID (1042)
    ("ivan", "Marketing"),  # a block list's only item: `users: []`
    ("dave", "Payments"),  # a team's member
    ("mallory", "Finance"),  # added by hand: the manifest never declared it
    ("judy", "Archive"),  # a list shared with Records through an anchor
    ("admin", "Finance"),  # an administrator reaches every workspace
    ("walter", "Legacy Scans"),  # a workspace the manifest does not declare
}


def _reviewed(site: LoopbackSite) -> Path:
    shutil.copy(CASE, site.workdir / "review.yaml")
    assert site.run("apply", "review.yaml", "--auto-approve").returncode == EXIT_OK
    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda c: c.add_to_workspace(MALLORY, [finance]))
    started = site.run("review", "start", "review.yaml", "-o", "q1.csv")
    assert started.returncode == EXIT_OK, started.stderr
    path = site.workdir / "q1.csv"
    fill(path, lambda row: revoke() if (row["person"], row["workspace"]) in REVOKED else keep())
    return path


def test_revocations_become_edits_of_the_declaring_file_and_nothing_else(
    site: LoopbackSite,
) -> None:
    path = _reviewed(site)
    assert site.run("review", "check", "q1.csv").returncode == EXIT_OK

    result = site.run("review", "apply", "q1.csv", "review.yaml")

    assert result.returncode == EXIT_ERROR, result.output  # some need a person
    edited = (site.workdir / "review.yaml").read_bytes()
    assert edited == GOLDEN.read_bytes()
    lines = result.stdout.splitlines()
    said = {line.split(": ", 2)[1].split(" (line")[0]: line for line in lines if ": " in line}
    assert 'no change: mallory @ "Finance"' in said['mallory @ "Finance"']
    assert "the next apply removes it" in said['mallory @ "Finance"']
    assert said['judy @ "Archive"'].startswith("  cannot:")
    assert "shared through the YAML anchor &archivists" in said['judy @ "Archive"']
    assert "site administrator" in said['admin @ "Finance"']
    assert 'does not declare the workspace "Legacy Scans"' in said['walter @ "Legacy Scans"']
    assert 'the team also makes the group "Payments"' in said['dave @ "Payments"']
    assert "Wrote review.yaml." in result.stdout

    # the plan of the edited manifest takes away exactly the revocations it carries out
    plan = site.run("plan", "review.yaml", "--format", "json")
    changes = json.loads(plan.stdout)["access"]
    carried = REVOKED - {("judy", "Archive"), ("admin", "Finance"), ("walter", "Legacy Scans")}
    assert {(c["person"], c["workspace"]) for c in changes} == carried
    assert {(c["effect"], c["cause"]) for c in changes} == {("loses", "member removed")}
    _, rows = read_rows(path)
    ids = {(r["person"], r["workspace"]): (int(r["user_id"]), int(r["workspace_id"])) for r in rows}
    assert {(c["user_id"], c["workspace_id"]) for c in changes} == {ids[k] for k in carried}


def test_a_second_apply_finds_nothing_left_to_edit(site: LoopbackSite) -> None:
    _reviewed(site)
    assert site.run("review", "apply", "q1.csv", "review.yaml").returncode == EXIT_ERROR
    again = site.run("review", "apply", "q1.csv", "review.yaml")
    assert (site.workdir / "review.yaml").read_bytes() == GOLDEN.read_bytes()
    assert "No manifest file needed a change." in again.stdout
    assert 'no change: bob @ "Finance"' in again.stdout


def test_every_reference_to_the_person_goes_and_one_that_may_mean_another_stays(
    site: LoopbackSite,
) -> None:
    """``alice`` and ``ALICE`` both name alice: both go. ``bob@acme.example`` is bob's e-mail
    address and, once an account is made with it as its username, that account's too: it
    may mean either, so it is named, never edited by a guess."""
    manifest = (
        "version: 1\nworkspaces:\n  - name: Finance\n    users: [alice, ALICE, bob@acme.example]\n"
    )
    site.write_manifest("small.yaml", manifest)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    twin = site.api(
        lambda c: c.user_add(NewUser("bob@acme.example", "twin@acme.example", "Bo", "Twin"))
    )
    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda c: c.add_to_workspace(twin, [finance]))
    assert site.run("review", "start", "small.yaml", "-o", "q.json").returncode == EXIT_OK
    path = site.workdir / "q.json"
    fill(path, lambda row: revoke() if row["person"] in ("alice", "bob") else keep())

    result = site.run("review", "apply", "q.json", "small.yaml")

    assert result.returncode == EXIT_ERROR, result.output
    written = (site.workdir / "small.yaml").read_text(encoding="utf-8")
    assert written == manifest.replace("[alice, ALICE, bob@acme.example]", "[bob@acme.example]")
    assert 'removed "alice", "ALICE" from workspaces[0].users' in result.stdout
    assert 'cannot: bob @ "Finance"' in result.stdout
    assert 'the reference "bob@acme.example" at small.yaml:4' in result.stdout
    assert "may also mean someone else" in result.stdout
