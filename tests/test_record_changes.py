"""Changes to the tool's records alone (issue 31): a ``previously`` move, a dead member
dropped, an object gone from the site and the manifest forgotten.

They make no API call, yet each is a change: ``plan --detailed-exitcode`` and ``drift`` say 2,
a saved plan carries it and ``apply plan.json`` saves it exactly as an apply of the manifest
does. The pipeline of the issue: a plan of a rename alone said "No changes", the template
skipped its apply, and the next pull request removing ``previously`` deleted the workspace.

The real CLI in-process, against the sandbox on loopback, with the records in a directory
and in PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from reconciler.errors import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import ADMIN_KEY, ADMIN_SECRET, LoopbackSite

Reconciler = Callable[..., CliOutcome]

BEFORE: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Legal", "users": ["frank"]},
        {"name": "Marketing", "users": ["ivan"]},
    ],
    "groups": [{"name": "crew", "members": ["alice", "bob"]}],
    "users": [
        {"username": "nina", "email": "nina@acme.example", "first_name": "N", "last_name": "N"}
    ],
    "policy": {"prune": True, "max_delete_fraction": 1.0},
}


@pytest.fixture(params=["directory", "postgresql"])
def reconciler(
    request: pytest.FixtureRequest, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Reconciler]:
    """``reconciler ARGS`` in this process against the loopback site, in its workdir, with
    the records beside the manifest or in a PostgreSQL schema of their own."""
    monkeypatch.setenv("RECONCILER_SITE_URL", site.url)
    monkeypatch.setenv("RECONCILER_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("RECONCILER_API_SECRET", ADMIN_SECRET)
    if request.param == "postgresql":
        monkeypatch.setenv("RECONCILER_STATE", request.getfixturevalue("postgres_url"))
    monkeypatch.chdir(site.workdir)

    def run(*args: str) -> CliOutcome:
        outcome = run_reconciler(*args)
        site.transcript += [outcome.stdout, outcome.stderr]
        assert "Traceback" not in outcome.stderr, outcome.stderr
        return outcome

    yield run


def write(site: LoopbackSite, manifest: dict[str, Any]) -> None:
    site.write_manifest("site.yaml", yaml.safe_load(yaml.safe_dump(manifest)))


def records(reconciler: Reconciler) -> dict[str, Any]:
    shown = reconciler("state", "show", "site.yaml")
    assert shown.exit_code == EXIT_OK, shown.stderr
    data: dict[str, Any] = json.loads(shown.stdout)
    return data


def user_id(site: LoopbackSite, username: str) -> int:
    return next(int(u["id"]) for u in site.state()["users"] if u["username"] == username)


def applied(reconciler: Reconciler, site: LoopbackSite, manifest: dict[str, Any]) -> None:
    write(site, manifest)
    done = reconciler("apply", "site.yaml", "--auto-approve")
    assert done.exit_code == EXIT_OK, done.output


def test_a_rename_alone_is_planned_saved_and_applied_and_previously_can_then_go(
    reconciler: Reconciler, site: LoopbackSite
) -> None:
    applied(reconciler, site, BEFORE)
    legal = site.workspaces()["Legal"]["id"]
    renamed = {**BEFORE, "workspaces": [
        {"name": "Counsel", "users": ["frank"], "previously": ["Legal"]}, BEFORE["workspaces"][1]
    ]}  # fmt: skip
    write(site, renamed)

    planned = reconciler("plan", "site.yaml", "-o", "plan.json", "--detailed-exitcode")
    assert planned.exit_code == EXIT_CHANGES, planned.output  # no API call, but a change
    said = f'workspace "Counsel" (id {legal}): move the record from "Legal" (previously:)'
    assert said in planned.stdout
    assert "Plan: 1 record change (the tool's records only): no API calls" in planned.stdout
    data = json.loads(reconciler("plan", "site.yaml", "--format", "json").stdout)
    assert data["actions"] == [] and data["summary"]["records"] == 1
    assert data["record_changes"] == [
        {"kind": "workspace", "name": "Counsel", "action": "move", "id": legal,
         "old_name": "Legal"}
    ]  # fmt: skip
    comment = reconciler("plan", "site.yaml", "--format", "markdown").stdout
    assert "Records only, the site is not changed (1)" in comment and said in comment
    drift = reconciler("drift", "site.yaml")
    assert drift.exit_code == EXIT_CHANGES and "1 record change" in drift.stdout

    # the apply job applies exactly the saved plan: the move is saved
    shown = reconciler("show", "plan.json", "site.yaml")
    assert shown.exit_code == EXIT_OK and said in shown.stdout
    saved = reconciler("apply", "plan.json", "site.yaml", "--auto-approve", "--detailed-exitcode")
    assert saved.exit_code == EXIT_CHANGES, saved.output
    assert "Records saved: 1 record change" in saved.stdout
    kept = records(reconciler)["workspaces"]
    assert kept["Counsel"]["id"] == legal and "Legal" not in kept
    again = reconciler("apply", "plan.json", "site.yaml", "--auto-approve")
    assert again.exit_code == EXIT_REFUSED and "changed only the tool's records" in again.stderr

    # a later pull request drops `previously`: nothing is deleted or created
    write(site, {**renamed, "workspaces": [{"name": "Counsel", "users": ["frank"]},
                                          BEFORE["workspaces"][1]]})  # fmt: skip
    after = json.loads(reconciler("plan", "site.yaml", "--format", "json").stdout)
    assert after["actions"] == [] and after["record_changes"] == []
    # the site still calls it "Legal" (the API cannot rename): reported, left alone
    assert [(c["name"], c["action"]) for c in after["changes"]] == [("Counsel", "renamed")]
    assert reconciler("plan", "site.yaml", "--detailed-exitcode").exit_code == EXIT_OK
    assert reconciler("apply", "site.yaml", "--auto-approve").exit_code == EXIT_OK
    assert site.workspaces()["Legal"]["id"] == legal  # the same workspace, files and all


def test_a_user_and_a_workspace_gone_from_the_site_and_the_manifest_are_forgotten(
    reconciler: Reconciler, site: LoopbackSite
) -> None:
    """Removed from the manifest and deleted by hand: nightly drift says so until an apply
    forgets them, then it is clean; nobody runs `state forget`."""
    applied(reconciler, site, BEFORE)
    nina, marketing = user_id(site, "nina"), site.workspaces()["Marketing"]["id"]
    write(site, {**BEFORE, "users": [], "workspaces": BEFORE["workspaces"][:1]})
    site.api(lambda client: client.user_delete(nina))
    site.api(lambda client: client.workspace_delete(marketing))

    drift = reconciler("drift", "site.yaml", "--format", "json")
    assert drift.exit_code == EXIT_CHANGES, drift.output
    report = json.loads(drift.stdout)
    assert report["missing"] == [] and report["extra"] == []
    assert {(item["kind"], item["name"]) for item in report["records"]} == {
        ("user", "nina"), ("workspace", "Marketing")
    }  # fmt: skip
    planned = reconciler("plan", "site.yaml", "-o", "plan.json", "--detailed-exitcode")
    assert planned.exit_code == EXIT_CHANGES, planned.output
    assert (
        f'user "nina" (id {nina}): forget the record (gone from the site and the manifest)'
        in planned.stdout
    )
    assert "state forget" not in planned.stdout
    saved = reconciler("apply", "plan.json", "site.yaml", "--auto-approve")
    assert saved.exit_code == EXIT_OK, saved.output
    kept = records(reconciler)
    assert "nina" not in kept["users"] and "Marketing" not in kept["workspaces"]
    assert reconciler("drift", "site.yaml").exit_code == EXIT_OK
    assert reconciler("plan", "site.yaml", "--detailed-exitcode").exit_code == EXIT_OK


def test_a_declared_object_gone_from_the_site_is_created_again_never_forgotten(
    reconciler: Reconciler, site: LoopbackSite
) -> None:
    applied(reconciler, site, BEFORE)
    marketing = site.workspaces()["Marketing"]["id"]
    site.api(lambda client: client.workspace_delete(marketing))
    data = json.loads(reconciler("plan", "site.yaml", "--format", "json").stdout)
    assert data["record_changes"] == []
    (create,) = [c for c in data["changes"] if c["name"] == "Marketing"]
    assert create["action"] == "create" and f"recorded as ID {marketing}" in create["note"]


def test_a_dead_member_dropped_from_the_records_is_saved_by_the_planned_apply(
    reconciler: Reconciler, site: LoopbackSite
) -> None:
    applied(reconciler, site, BEFORE)
    bob = user_id(site, "bob")
    write(site, {**BEFORE, "groups": [{"name": "crew", "members": ["alice"]}]})
    site.api(lambda client: client.user_delete(bob))  # bob's account, deleted by hand

    planned = reconciler("plan", "site.yaml", "-o", "plan.json", "--detailed-exitcode")
    assert planned.exit_code == EXIT_CHANGES, planned.output
    assert f"drop users #{bob} from the record (gone from the site)" in planned.stdout
    assert reconciler("apply", "plan.json", "site.yaml", "--auto-approve").exit_code == EXIT_OK
    assert bob not in records(reconciler)["groups"]["crew"]["members"]
    assert reconciler("plan", "site.yaml", "--detailed-exitcode").exit_code == EXIT_OK
    assert reconciler("drift", "site.yaml").exit_code == EXIT_OK


def test_a_plan_file_of_record_changes_alone_reads_back_the_same() -> None:
    """The plan file keeps its record changes through the codec (what `show` and `apply`
    read), and a plan file of an earlier release, without them, reads back with the very
    checksum it was sealed with (unseal compares them)."""
    from reconciler.core.planning import PlanOptions, RecordChange
    from reconciler.engine.planning.plan import Plan, PlanContext

    changes = (
        RecordChange("workspace", "Counsel", "move", id=3, old_name="Legal"),
        RecordChange("group", "crew", "drop-members", id=7, user_ids=(1002, 1003)),
        RecordChange("user", "nina", "forget", id=1010),
    )
    context = PlanContext("https://x.example", "now", "test")
    plan = Plan(context, PlanOptions(), (), record_changes=changes)
    assert plan.has_changes and plan.summary["records"] == 3
    assert Plan.from_data(plan.data).record_changes == changes
    assert Plan.from_data(plan.data).checksum == plan.checksum
    earlier = Plan(context, PlanOptions(), ())  # as an earlier release wrote it
    assert "record_changes" not in earlier.data and "records" not in earlier.data["summary"]
    again = Plan.from_data(earlier.data)
    assert again.checksum == earlier.checksum and not again.has_changes
