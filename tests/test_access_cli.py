"""``reconciler access`` in-process against the embedded sandbox: what a reviewer runs, its
files, its errors (one message, exit 1), and a plan's access changes shown before apply."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import CliOutcome, run_reconciler

SUPPORT = Path(__file__).parent / "support"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(SUPPORT / "access_site.yaml", tmp_path / "site.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def reconciler(*args: str) -> CliOutcome:
    outcome = run_reconciler(
        *args, "--sandbox", "--sandbox-seed", str(SUPPORT / "access_seed.yaml")
    )
    assert "Traceback" not in outcome.output and "Internal error" not in outcome.output
    return outcome


def test_the_report_puts_findings_first(work: Path) -> None:
    result = reconciler("access", "site.yaml")
    assert result.exit_code == EXIT_OK, result.output
    out = result.stdout
    for line in (
        "  deactivated     carol: deactivated, yet still a member of Finance",
        "  administrator   boss: reaches every workspace (3 workspaces) as an administrator",
        "  unmanaged user  dave: never named in the manifest, yet reaches Legal",
        "  unusual domain  dave: e-mail domain gmail.example is not one of the site's usual "
        "domains (acme.example)",
    ):
        assert line in out
    assert out.index("Findings (") < out.index("By workspace:") < out.index("By person:")


def test_without_a_manifest_nothing_is_judged_against_one(work: Path) -> None:
    result = reconciler("access", "--state-dir", ".reconciler", "--workspace", "Legal")
    assert result.exit_code == EXIT_OK, result.output
    assert "no manifest given" in result.stdout
    assert "unmanaged user" not in result.stdout


def test_a_json_report_is_written_private_and_compared_with_next_quarter(work: Path) -> None:
    first = reconciler("access", "site.yaml", "--format", "json", "-o", "q3.json")
    assert first.exit_code == EXIT_OK, first.output
    assert first.stdout == "" and "Wrote the access report (json) to q3.json." in first.stderr
    assert stat.S_IMODE((work / "q3.json").stat().st_mode) == 0o600
    report = json.loads((work / "q3.json").read_text(encoding="utf-8"))
    assert report["format"] == "site-reconciler-access" and report["format_version"] == 1
    assert report["sign_off"] == {"reviewer": None, "date": None, "notes": None}
    report["sign_off"] = {"reviewer": "Rita", "date": "2026-08-21", "notes": "Q3"}
    (work / "q3.json").write_text(json.dumps(report), encoding="utf-8")

    applied = reconciler("apply", "site.yaml", "--auto-approve")  # dave leaves Legal
    assert applied.exit_code == EXIT_OK, applied.output
    assert "Who gains or loses access:\n  - dave loses access to " in applied.stdout
    assert '"Legal" (id ' in applied.stdout and ") (member removed)" in applied.stdout

    later = reconciler("access", "site.yaml", "--since", "q3.json")
    assert later.exit_code == EXIT_OK, later.output
    assert "(signed off by Rita on 2026-08-21)" in later.stdout
    assert "0 gained, 1 lost, 0 changed." in later.stdout
    assert '  - dave lost "Legal" (member)' in later.stdout


def test_a_saved_plan_shows_its_access_changes_when_applied(work: Path) -> None:
    planned = reconciler("plan", "site.yaml", "-o", "plan.json", "--format", "json")
    assert planned.exit_code == EXIT_OK, planned.output
    (access,) = json.loads(planned.stdout)["access"]
    legal = access.pop("workspace_id")
    assert access == {
        "person": "dave",
        "workspace": "Legal",
        "effect": "loses",
        "what": "access",
        "via": "member",
        "cause": "member removed",
        "user_id": 1004,
    }
    applied = reconciler("apply", "plan.json", "site.yaml", "--auto-approve")
    assert applied.exit_code == EXIT_OK, applied.output
    assert f'  - dave loses access to "Legal" (id {legal}) (member removed)' in applied.stdout


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "Cannot read an access report missing.json"),
        ("{not json", "missing.json is not JSON"),
        ('{"format": "site-reconciler-access", "format_version": 99}', "format version 99"),
    ],
)
def test_a_bad_since_file_is_one_message_before_the_site_is_read(
    work: Path, content: str | None, says: str
) -> None:
    if content is not None:
        (work / "missing.json").write_text(content, encoding="utf-8")
    result = reconciler("access", "site.yaml", "--since", "missing.json")
    assert result.exit_code == EXIT_ERROR
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and says in result.stderr
    assert not (work / ".reconciler" / "sandbox").exists()  # nothing was read


def test_a_name_that_names_nothing_is_one_message(work: Path) -> None:
    result = reconciler("access", "site.yaml", "--user", "nobody")
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.splitlines()[0] == 'Error: --user "nobody" names no user on the site.'


def test_an_unwritable_out_file_is_one_message(work: Path) -> None:
    (work / "taken").write_text("", encoding="utf-8")
    result = reconciler("access", "site.yaml", "-o", "taken/report.txt")
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.startswith("Error: Cannot write the access report to taken/report.txt")


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json", "html"])
def test_every_format_renders_from_the_command(work: Path, fmt: str) -> None:
    result = reconciler("access", "site.yaml", "--format", fmt, "--user", "carol")
    assert result.exit_code == EXIT_OK, result.output
    assert "carol" in result.stdout
