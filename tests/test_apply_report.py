"""``apply --format json`` and ``apply --detailed-exitcode`` (issue 23, item 3), end to end:
the real ``reconciler`` command against the sandbox on loopback.

A pipeline reads the report of every action (done, failed with the reason, skipped and why)
from stdout alone, and tells "changed" (2) from "nothing to do" (0) by the exit code.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite


def report(stdout: str) -> dict[str, Any]:
    """stdout is the JSON report and nothing else (the plan went to stderr)."""
    data: dict[str, Any] = json.loads(stdout)
    return data


def test_a_json_report_lists_every_action_and_the_exit_code_says_it_changed(
    site: LoopbackSite,
) -> None:
    applied = site.run(
        "apply", "site.yaml", "--auto-approve", "--format", "json", "--detailed-exitcode"
    )
    assert applied.returncode == EXIT_CHANGES, applied.stderr
    data = report(applied.stdout)
    assert "Plan:" in applied.stderr  # the plan is still shown, to people, on stderr
    assert data["format"] == 1 and data["site"] == site.url
    assert data["changed"] is True and data["complete"] is True
    assert data["counts"] == {"done": 14, "failed": 0, "skipped": 0, "unknown": 0}
    assert len(data["actions"]) == 14
    assert {a["status"] for a in data["actions"]} == {"done"}
    created = {a["summary"] for a in data["actions"] if a["method"] == "workspace_add"}
    assert any("Engineering" in summary for summary in created), created
    assert set(data["api_calls"]["writes"]) >= {"workspace_add"}
    assert data["api_calls"]["total"] == data["api_calls"]["reads"] + sum(
        data["api_calls"]["writes"].values()
    )

    again = site.run(
        "apply", "site.yaml", "--auto-approve", "--format", "json", "--detailed-exitcode"
    )
    assert again.returncode == EXIT_OK, again.stderr
    nothing = report(again.stdout)
    assert nothing["changed"] is False and nothing["complete"] is True
    assert nothing["actions"] == [] and nothing["counts"]["done"] == 0


def test_without_detailed_exitcode_a_change_still_ends_with_0(site: LoopbackSite) -> None:
    applied = site.run("apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "Apply complete: 14 done" in applied.stdout


def test_a_failed_action_is_reported_with_its_reason_and_what_it_held_back(
    site: LoopbackSite,
) -> None:
    """One user the site refuses: it fails with the site's reason, the workspace naming it is
    skipped because of it, an unrelated workspace is done; an error stays exit 1 even under
    --detailed-exitcode."""
    site.write_manifest(
        "team.yaml",
        {
            "version": 1,
            "users": [  # the site refuses the e-mail: it is alice's
                {"username": "zed", "email": "alice@acme.example", "first_name": "Zed"}
            ],
            "workspaces": [
                {"name": "Onboarding", "users": ["zed", "alice"]},
                {"name": "Unrelated", "users": ["bob"]},
            ],
            "policy": {"prune": False},
        },
    )
    applied = site.run(
        "apply", "team.yaml", "--auto-approve", "--format", "json", "--detailed-exitcode"
    )
    assert applied.returncode == EXIT_ERROR, applied.stderr
    data = report(applied.stdout)
    assert data["complete"] is False and data["changed"] is True
    failed = {a["id"]: a for a in data["actions"]}["user_add:zed"]
    assert failed["status"] == "failed", failed
    assert "HTTP 4" in failed["detail"], failed  # the site's reason, as it gave it
    skipped = [a for a in data["actions"] if a["status"] == "skipped"]
    assert any("Onboarding" in a["summary"] for a in skipped), skipped
    assert all("user_add:zed did not complete" in a["detail"] for a in skipped), skipped
    done = [a["summary"] for a in data["actions"] if a["status"] == "done"]
    assert any("Unrelated" in summary for summary in done), done
    assert data["counts"]["failed"] == 1 and data["counts"]["skipped"] == len(skipped)
    assert 'failed: create user "zed"' in applied.stderr  # people still read it on stderr
