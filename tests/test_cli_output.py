"""What the commands print around a plan: follow-up commands that run as printed, failures
as one message, unmanaged objects counted, and no terminal codes off a terminal."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite, loopback_site

FOLLOW_UP = re.compile(r"Apply exactly this plan with: (.+)$", re.MULTILINE)


def run(*args: str, cwd: Path) -> CliOutcome:
    result = run_reconciler(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_the_saved_plans_apply_command_runs_as_printed(tmp_path: Path) -> None:
    """After ``plan --sandbox --state-dir "…" -o "my plan.json"`` the printed command carries
    --sandbox and the records, and quotes the paths with spaces."""
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    records = "records here"
    planned = run(
        "plan", "site.yaml", "--sandbox", "--state-dir", records, "-o", "my plan.json",
        "--concurrency", "4", "--no-color", cwd=tmp_path,
    )  # fmt: skip
    assert planned.returncode == EXIT_OK, planned.stderr
    found = FOLLOW_UP.search(planned.stdout)
    assert found, planned.stdout
    assert found.group(1) == (
        "reconciler apply 'my plan.json' site.yaml --sandbox --concurrency 4 "
        "--state-dir 'records here'"
    )
    command = shlex.split(found.group(1))
    applied = run(*command[1:], "--auto-approve", cwd=tmp_path)
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "Apply complete: 14 done" in applied.stdout
    again = run("plan", "site.yaml", "--sandbox", "--state-dir", records, cwd=tmp_path)
    assert "No changes. The site matches the manifest." in again.stdout


def test_a_json_plan_keeps_stdout_for_the_json(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    planned = run(
        "plan", "site.yaml", "--sandbox", "--format", "json", "-o", "plan.json", cwd=tmp_path
    )
    assert planned.returncode == EXIT_OK
    assert json.loads(planned.stdout)["summary"]["create"] == 14
    assert FOLLOW_UP.search(planned.stderr)


def test_unmanaged_objects_are_counted_unless_listing_is_asked_for(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    manifest = str(tmp_path / "site.yaml")
    summary = "2 objects not managed by the manifest (1 group, 1 workspace): left alone"
    listed = 'workspace "Legacy Scans" (id 1): not managed; left alone'
    for args, expect_listed in (
        ((), False),
        (("--show-unmanaged",), True),
        (("-v",), True),
    ):
        plan = run_reconciler("plan", manifest, "--sandbox", *args)
        assert plan.exit_code == EXIT_OK, plan.stderr
        assert (listed in plan.stdout) is expect_listed, args
        assert (summary in plan.stdout) is not expect_listed, args
    drift = run_reconciler("drift", manifest, "--sandbox")
    assert summary in drift.stdout and "Legacy Scans" not in drift.stdout
    assert (
        "Legacy Scans" in run_reconciler("drift", manifest, "--sandbox", "--show-unmanaged").stdout
    )
    applied = run_reconciler("apply", manifest, "--sandbox", "--auto-approve")
    assert summary in applied.stdout and "Legacy Scans" not in applied.stdout


def test_off_a_terminal_the_output_has_no_terminal_codes(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    for command in (("plan",), ("apply", "--auto-approve"), ("drift",)):
        result = run(command[0], "site.yaml", "--sandbox", *command[1:], cwd=tmp_path)
        assert "\x1b" not in result.stdout + result.stderr, command


def expected_failure_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines of stderr: one ``Error:`` message and its hint, and nothing else (after the
    note saying which site was used, when RECONCILER_SITE_URL overrides the manifest's)."""
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("Note:")]
    assert lines and lines[0].startswith("Error: "), result.stderr
    assert not any(re.search(r"\[(warning|info)\s*\]|\d\d:\d\d:\d\d", line) for line in lines)
    return lines


def test_a_wrong_secret_is_one_message_and_its_retries_show_only_with_v(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path) as site:
        env = {**site.env, "RECONCILER_API_SECRET": "not-the-secret"}
        quiet = run_reconciler("plan", "site.yaml", cwd=tmp_path, env=env)
        site.transcript += [quiet.stdout, quiet.stderr]
        assert quiet.returncode == EXIT_ERROR
        lines = expected_failure_lines(quiet)
        assert len(lines) <= 3, lines
        verbose = run_reconciler("plan", "site.yaml", "-v", cwd=tmp_path, env=env)
        site.transcript += [verbose.stdout, verbose.stderr]
        assert "api_call" in verbose.stderr  # the calls are there for who asks


def test_an_unreachable_site_is_one_message_naming_a_real_option(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with socket.socket() as probe:  # a loopback port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    site = LoopbackSite(f"http://127.0.0.1:{port}", tmp_path)
    result = site.run("plan", "site.yaml", "--timeout", "2")
    assert result.returncode == EXIT_ERROR
    lines = expected_failure_lines(result)
    assert len(lines) <= 3, lines
