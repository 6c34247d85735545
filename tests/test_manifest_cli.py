"""``reconciler validate``: exit codes, text and JSON output, ``--show``, the real script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

import reconciler.cli.commands  # noqa: F401  (registers the sub-commands)
from reconciler.cli import cli

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases" / "manifest"


@pytest.fixture(autouse=True)
def _in_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # so that paths in the output read examples/site.yaml


def _validate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["validate", *args])


def test_a_valid_manifest_exits_0_with_a_summary() -> None:
    result = _validate("examples/site.yaml")
    assert result.exit_code == 0, result.output
    assert result.output == "examples/site.yaml: valid (8 workspaces, 6 groups)\n"


def test_an_invalid_manifest_exits_1_and_lists_every_finding() -> None:
    result = _validate("tests/cases/manifest/bad-batch-without-base.yaml")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 6
    assert lines[0].startswith(
        "tests/cases/manifest/bad-batch-without-base.yaml:12:7: error: `batch_upload_files` is "
        "on but `upload_files` is off (at workspaces[0].permissions.batch_upload_files) — add "
    )
    assert lines[-1] == "tests/cases/manifest/bad-batch-without-base.yaml: invalid (5 errors)"
    assert "Traceback" not in result.output


def test_warnings_alone_leave_the_manifest_valid() -> None:
    result = _validate("tests/cases/manifest/warn-duplicate-refs.yaml")
    assert result.exit_code == 0
    assert result.output.splitlines()[-1].endswith("valid (2 workspaces, 2 groups) with 4 warnings")


def test_json_output_is_only_the_list_of_findings() -> None:
    result = _validate("tests/cases/manifest/bad-site.yaml", "--format", "json")
    assert result.exit_code == 1
    findings = json.loads(result.output)
    assert findings[0] == {
        "severity": "error",
        "file": "tests/cases/manifest/bad-site.yaml",
        "line": 5,
        "column": 3,
        "path": "site.url",
        "message": "`url` 'ftp://acme.example.net' is not an http(s) address",
        "hint": "write the site's address, e.g. https://acme.example.net",
    }
    assert json.loads(_validate("examples/site.yaml", "--format", "json").output) == []


def test_show_prints_the_expanded_model_as_yaml() -> None:
    result = _validate("examples/site.yaml", "--show")
    assert result.exit_code == 0
    *model, summary = result.output.splitlines()
    shown = yaml.safe_load("\n".join(model))
    assert summary == "examples/site.yaml: valid (8 workspaces, 6 groups)"
    finance = shown["workspaces"][0]
    assert finance["name"] == "Finance" and finance["root_access"] is False
    assert finance["users"] == ["alice", "bob@acme.example", "erin", "1042"]
    assert finance["permissions"] == sorted(finance["permissions"])
    assert "upload_files" in finance["permissions"]  # from defaults
    assert finance["declared_at"].startswith("examples/site.yaml:")
    share = next(w for w in shown["workspaces"] if w["name"] == "Company Share")
    assert share["permissions"] is None
    assert [w["team"] for w in shown["workspaces"] if w["team"] is not None] == [
        "Payments",
        "Data Platform",
    ]
    assert shown["policy"]["protect"] == ["Archive*"]


def test_show_with_json_prints_findings_and_desired() -> None:
    result = _validate("examples/site.yaml", "--show", "--format", "json")
    data = json.loads(result.output)
    assert data["findings"] == [] and len(data["desired"]["workspaces"]) == 8
    bad = str(CASES / "bad-names.yaml")
    invalid = json.loads(_validate(bad, "--show", "--format", "json").output)
    assert invalid["desired"] is None and len(invalid["findings"]) == 5


def test_a_missing_path_is_a_finding_not_a_traceback() -> None:
    result = _validate("no/such/site.yaml")
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[0] == (
        "no/such/site.yaml: error: no such file or directory — give a manifest file or a "
        "directory of *.yaml files"
    )


def test_help_says_what_a_path_may_be_and_the_exit_codes() -> None:
    text = _validate("--help").output
    for words in ("*.yaml and *.yml", "subdirectories", "sorted", "Exit codes", "0  the manifest"):
        assert words in text


@pytest.mark.e2e
def test_the_installed_console_script_validates_the_example() -> None:
    script = shutil.which("reconciler", path=str(Path(sys.executable).parent))
    assert script is not None, "the package is not installed in this environment"
    completed = subprocess.run(
        [script, "validate", "examples/site.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "examples/site.yaml: valid (8 workspaces, 6 groups)\n"
    assert completed.stderr == ""


def test_show_prints_declared_users_state_and_the_whole_policy(tmp_path: Path) -> None:
    manifest = tmp_path / "site.yaml"
    manifest.write_text(
        "version: 1\nsite: {state: postgresql://reconciler@db/site}\n"
        "users:\n  - {username: alice, email: alice@acme.example, phone: '0041791234567'}\n"
        "workspaces:\n  - {name: Finance, users: [alice]}\n"
        "policy: {prune_users: true, protect_users: [admin*], min_admins: 2}\n",
        encoding="utf-8",
    )
    result = _validate(str(manifest), "--show")
    assert result.exit_code == 0, result.output
    *model, summary = result.output.splitlines()
    assert summary == f"{manifest}: valid (1 workspace, 0 groups, 1 user)"
    shown = yaml.safe_load("\n".join(model))
    assert shown["state"] == "postgresql://reconciler@db/site"
    (alice,) = shown["users"]
    assert alice["phone"] == "0041791234567" and alice["active"] is True
    assert alice["declared_at"] == f"{manifest}:4:5 (users[0])"
    assert shown["policy"]["protect_users"] == ["admin*"]
    assert (shown["policy"]["max_deletes"], shown["policy"]["min_admins"]) == (10, 2)


@pytest.mark.parametrize(
    "case",
    [
        "bad-password.yaml",
        "bad-site-credentials.yaml",
        "bad-state-query-password.yaml",
        "bad-site-not-a-mapping.yaml",
    ],
)
@pytest.mark.parametrize("options", [[], ["--format", "json"], ["--show", "--format", "json"]])
def test_no_output_repeats_a_password(case: str, options: list[str]) -> None:
    result = _validate(str(CASES / case), *options)
    assert result.exit_code == 1  # the messages themselves are checked by test_manifest_cases
    assert "hunter2" not in result.output
