"""Expired entries left in the manifest (issue 45, item 5): ``validate`` reports each at its
place with the command that removes them, ``reconciler expire`` removes exactly those items
from the files -- comments and formatting kept -- and the dates are checked like any value.
Offline: nothing here reads a site."""

from __future__ import annotations

import shlex
from pathlib import Path

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import run_reconciler

MANIFEST = """\
version: 1
users:
  - username: quentin   # the contractor
    email: quentin@acme.example
    expires: 2026-12-31
  - {username: rita, email: rita@acme.example}
workspaces:
  - name: Finance
    users: [alice, {user: bob, expires: 2026-12-31}, quentin, erin]   # finance
  - name: HR
    users:
      - alice
      - user: bob        # until the audit ends
        expires: 2027-06-30
      - quentin@acme.example
groups:
  - name: auditors
    members:
      - mallory
      - {user: oscar, expires: "2026-10-01"}  # the external auditor
teams:
  - name: Payments
    members: [carol, {user: dave, expires: 2026-11-30}]
"""

TIDIED = """\
version: 1
users:
  - {username: rita, email: rita@acme.example}
workspaces:
  - name: Finance
    users: [alice, erin]   # finance
  - name: HR
    users:
      - alice
      - user: bob        # until the audit ends
        expires: 2027-06-30
groups:
  - name: auditors
    members:
      - mallory
teams:
  - name: Payments
    members: [carol]
"""


def _manifest(tmp_path: Path, text: str = MANIFEST) -> Path:
    path = tmp_path / "site.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_validate_reports_each_expired_entry_with_the_command_that_removes_them(
    tmp_path: Path,
) -> None:
    _manifest(tmp_path)
    checked = run_reconciler("validate", "site.yaml", "--at", "2027-01-01", cwd=tmp_path)
    assert checked.returncode == EXIT_OK, checked.output  # warnings: still valid
    warnings = [line for line in checked.stdout.splitlines() if ": warning: " in line]
    assert [line.split(": warning: ")[0] for line in warnings] == [
        "site.yaml:3:5",
        "site.yaml:9:20",
        "site.yaml:9:54",
        "site.yaml:15:9",
        "site.yaml:20:9",
        "site.yaml:23:22",
    ]
    assert 'bob\'s access to "Finance" expired on 2026-12-31' in warnings[1]
    command = (
        "— remove the expired entries from the files: reconciler expire site.yaml --at 2027-01-01"
    )
    assert all(line.endswith(command) for line in warnings)
    before = run_reconciler("validate", "site.yaml", "--at", "2026-09-30", cwd=tmp_path)
    assert "warning" not in before.stdout, before.stdout


def test_the_clock_for_tests_sets_the_day_validate_judges_on(tmp_path: Path) -> None:
    _manifest(tmp_path)
    env = {"RECONCILER_TODAY": "2026-12-31", "PATH": ""}
    checked = run_reconciler("validate", "site.yaml", cwd=tmp_path, env=env)
    assert checked.stdout.count(": warning: ") == 6, checked.stdout  # not bob's 2027 one
    bad = run_reconciler("validate", "site.yaml", cwd=tmp_path, env={"RECONCILER_TODAY": "soon"})
    assert bad.returncode == EXIT_ERROR and "RECONCILER_TODAY" in bad.stderr, bad.output


def test_expire_removes_exactly_the_expired_entries_and_keeps_everything_else(
    tmp_path: Path,
) -> None:
    path = _manifest(tmp_path)
    listed = run_reconciler("expire", "site.yaml", "--at", "2027-01-01", "--check", cwd=tmp_path)
    assert listed.returncode == EXIT_ERROR and "6 expired entries" in listed.stdout
    assert path.read_text(encoding="utf-8") == MANIFEST  # --check changes nothing

    validated = run_reconciler("validate", "site.yaml", "--at", "2027-01-01", cwd=tmp_path)
    command = validated.stdout.split("from the files: ")[1].splitlines()[0]
    done = run_reconciler(*shlex.split(command)[1:], cwd=tmp_path)  # as printed, --at too
    assert done.returncode == EXIT_OK, done.output
    assert "Removed 6 expired entries from 1 file(s)" in done.stdout
    assert path.read_text(encoding="utf-8") == TIDIED
    again = run_reconciler("validate", "site.yaml", "--at", "2027-01-01", cwd=tmp_path)
    assert again.returncode == EXIT_OK and "warning" not in again.stdout, again.stdout
    nothing = run_reconciler("expire", "site.yaml", "--at", "2027-01-01", "--check", cwd=tmp_path)
    assert nothing.returncode == EXIT_OK and "0 expired entries" in nothing.stdout


def test_an_entry_in_a_list_shared_through_an_anchor_is_named_never_edited(
    tmp_path: Path,
) -> None:
    shared = (
        "version: 1\n"
        "workspaces:\n"
        "  - name: Finance\n"
        "    users: &crew [alice, {user: bob, expires: 2026-12-31}]\n"
        "  - name: Legal\n"
        "    users: *crew\n"
    )
    path = _manifest(tmp_path, shared)
    done = run_reconciler("expire", "site.yaml", "--at", "2027-01-01", cwd=tmp_path)
    assert done.returncode == EXIT_ERROR, done.output
    assert "not removed site.yaml:4:26 (workspaces[0].users[1])" in done.stdout
    assert "shared through the YAML anchor &crew: edit it by hand" in done.stdout
    assert "workspaces[1].users is an alias (*crew) of a list written elsewhere" in done.stdout
    assert path.read_text(encoding="utf-8") == shared


def test_a_date_that_is_no_day_is_an_error_at_its_place(tmp_path: Path) -> None:
    _manifest(
        tmp_path,
        "version: 1\n"
        "users:\n"
        "  - {username: q, email: q@acme.example, expires: 2026-02-30}\n"
        "workspaces:\n"
        "  - name: Finance\n"
        "    users: [{user: bob, expires: 31.12.2026}, {user: eve}]\n",
    )
    checked = run_reconciler("validate", "site.yaml", cwd=tmp_path)
    assert checked.returncode == EXIT_ERROR
    assert "site.yaml:3:42: error: the expiry date '2026-02-30' is no day of the calendar" in (
        checked.stdout
    )
    assert "site.yaml:6:25: error: `expires` '31.12.2026' is not a date" in checked.stdout
    assert "site.yaml:6:47: error: `expires` is missing" in checked.stdout
