"""Targeted plans (``--target`` / ``--exclude``): the real CLI against the sandbox on loopback.

A targeted plan reads, resolves and compares only what its patterns select (the scoping of
``--changed``); it lists what it left out, and nothing outside the target is ever acted on --
prune included. A saved targeted plan applies only its own actions.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.records import Records
from reconciler.engine.planning.plan import Plan
from reconciler.engine.planning.plan_file import seal
from reconciler.engine.planning.plan_key import PlanSecret
from reconciler.engine.read.targets import NothingTargeted, Selection, selected
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.loopback import LoopbackSite
from tests.support.readme import ROOT, code_block, document, run
from tests.support.site_strategies import load_desired

SMALL: dict[str, Any] = {
    "version": 1,
    "workspaces": [
        {"name": "Finance", "users": ["alice", "bob"]},
        {"name": "Finance Archive", "users": ["alice"]},
        {"name": "Legal", "users": ["frank"]},
        {"name": "Marketing", "users": ["ivan"]},
    ],
    "groups": [{"name": "finance-team", "members": ["alice"]}],
    "policy": {"prune": True, "max_delete_fraction": 1.0},
}


def plan_json(site: LoopbackSite, *args: str) -> dict[str, Any]:
    result = site.run("plan", "small.yaml", "--format", "json", *args)
    assert result.returncode == EXIT_OK, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def touched(plan: dict[str, Any]) -> set[str]:
    return {change["name"] for change in plan["changes"]}


def test_selection_matches_names_globs_and_kinds() -> None:
    selection = Selection(("Fin*", "group:crew", "user:n?na"), ("*Archive",))
    assert selection.holds("workspace", "Finance")
    assert selection.holds("group", "Finance")  # a bare pattern names every kind
    assert not selection.holds("workspace", "Finance Archive")  # excluded
    assert selection.holds("group", "crew") and not selection.holds("workspace", "crew")
    assert selection.holds("user", "nina") and selection.holds("user", "NINA")  # as the site
    assert selection.holds("group", "finance-team")  # compares names: case aside
    assert Selection((), ("Legal",)).holds("workspace", "Marketing")  # exclude alone


def test_a_target_that_names_nothing_is_one_clear_error(tmp_path: Any) -> None:
    desired = load_desired(SMALL, tmp_path / "small.yaml")
    with pytest.raises(NothingTargeted, match='--target "Fnance" names no workspace'):
        selected(desired, Records("https://x.example"), Selection(("Fnance",)))


def test_a_target_plans_only_what_it_names_and_lists_what_it_left_out(
    site: LoopbackSite,
) -> None:
    site.write_manifest("small.yaml", SMALL)
    plan = plan_json(site, "--target", "Fin*e", "--exclude", "Finance Archive")
    assert touched(plan) == {"Finance"}
    assert [a["id"] for a in plan["actions"]] == ["workspace_add:Finance"]
    assert plan["scope"] == {"workspaces": ["Finance"], "groups": [], "users": []}
    (notice,) = [n for n in plan["notices"] if n.startswith("Targeted")]
    assert "--target Fin*e --exclude Finance Archive" in notice
    assert "planned 1 of 5 objects" in notice
    for left in ('workspace "Finance Archive"', 'workspace "Legal"', 'group "finance-team"'):
        assert left in notice

    text = site.run("plan", "small.yaml", "--target", "group:finance-team")
    assert text.returncode == EXIT_OK, text.stderr
    assert 'Left out (4): workspace "Finance"' in text.stdout
    assert '+ group "finance-team"' in text.stdout
    assert 'workspace "Legal"' not in text.stdout.split("will make these changes")[-1]


def test_a_target_that_names_nothing_exits_1_with_a_hint(site: LoopbackSite) -> None:
    site.write_manifest("small.yaml", SMALL)
    result = site.run("plan", "small.yaml", "--target", "Fnance")
    assert result.returncode == EXIT_ERROR
    assert '--target "Fnance" names no workspace, group or user' in result.stderr
    assert "KIND:PATTERN" in result.stderr


def test_an_exclude_that_names_nothing_is_one_clear_error(tmp_path: Any) -> None:
    desired = load_desired(SMALL, tmp_path / "small.yaml")
    records = Records("https://x.example")
    with pytest.raises(NothingTargeted, match='--exclude "Markting" names no workspace'):
        selected(desired, records, Selection((), ("Markting",)))
    with pytest.raises(NothingTargeted, match='--exclude "Fnance" names no workspace'):
        selected(desired, records, Selection(("Finance",), ("Fnance",)))


WITHOUT_MARKETING = {
    **SMALL,
    "workspaces": [ws for ws in SMALL["workspaces"] if ws["name"] != "Marketing"],
}
"""SMALL once Marketing left the manifest: prune deletes it unless an exclude names it."""


@pytest.mark.parametrize(
    "command",
    [("plan",), ("apply", "--auto-approve"), ("drift",)],
    ids=["plan", "apply", "drift"],
)
def test_an_exclude_with_a_typo_is_refused_and_prunes_nothing(
    site: LoopbackSite, command: tuple[str, ...]
) -> None:
    """Issue 42: `--exclude Markting` meant to keep Marketing from prune; noted and
    otherwise ignored, it let the apply delete Marketing. Every command that takes
    --exclude refuses it, as it refuses a --target that names nothing."""
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    site.write_manifest("small.yaml", WITHOUT_MARKETING)
    result = site.run(command[0], "small.yaml", *command[1:], "--exclude", "Markting")
    assert result.returncode == EXIT_ERROR, result.stdout
    assert result.stderr.splitlines()[0] == (
        'Error: --exclude "Markting" names no workspace, group or user that the manifest '
        "declares or the tool manages."
    )
    assert "KIND:PATTERN" in result.stderr
    assert "Marketing" in site.workspaces()
    # spelt right, it is left out and the rest is planned
    kept = site.run(command[0], "small.yaml", *command[1:], "--exclude", "Marketing")
    assert kept.returncode in (EXIT_OK, EXIT_CHANGES), kept.stderr
    assert "Marketing" in site.workspaces()


def test_a_saved_plan_whose_exclude_names_nothing_is_refused_at_apply(
    site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A saved plan's apply selects again with the plan's own patterns: a plan saved by a
    version that only noted a typo in an exclude (its actions prune what the exclude meant to
    protect) is refused, and deletes nothing."""
    key = "a-plan-key-for-this-test-only-0123456789"
    monkeypatch.setenv("RECONCILER_PLAN_KEY", key)
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    site.write_manifest("small.yaml", WITHOUT_MARKETING)
    assert site.run("plan", "small.yaml", "-o", "plan.json").returncode == EXIT_OK
    body = json.loads((site.workdir / "plan.json").read_text(encoding="utf-8"))
    assert [a["method"] for a in body["actions"]] == ["workspace_delete"]
    for stamp in ("seal", "checksum"):
        del body[stamp]
    body["options"]["excludes"] = ["Markting"]  # as a version that only noted it saved it
    sealed = seal(Plan.from_data(body), PlanSecret(key).key_for(body["site"]))
    (site.workdir / "plan.json").write_text(sealed, encoding="utf-8")

    applied = site.run("apply", "plan.json", "--auto-approve")
    assert applied.returncode == EXIT_ERROR, applied.stdout
    assert '--exclude "Markting" names no workspace, group or user' in applied.stderr
    assert "Marketing" in site.workspaces()


def test_prune_never_acts_outside_the_target(site: LoopbackSite) -> None:
    """Marketing left the manifest and prune is on: a full plan deletes it; a plan targeted
    at Legal changes Legal and leaves Marketing on the site, in the apply too."""
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    edited = {
        **SMALL,
        "workspaces": [ws for ws in SMALL["workspaces"] if ws["name"] != "Marketing"],
    }
    edited["workspaces"] = [
        {**ws, "users": ["frank", "heidi"]} if ws["name"] == "Legal" else ws
        for ws in edited["workspaces"]
    ]
    site.write_manifest("small.yaml", edited)

    full = plan_json(site)
    assert {"name": "Marketing", "action": "delete"} in [
        {"name": c["name"], "action": c["action"]} for c in full["changes"]
    ]

    targeted = plan_json(site, "--target", "Legal")
    assert touched(targeted) == {"Legal"}
    assert not any(a["method"] == "workspace_delete" for a in targeted["actions"])

    applied = site.run("apply", "small.yaml", "--auto-approve", "--target", "Legal")
    assert applied.returncode == EXIT_OK, applied.stderr
    live = site.workspaces()
    assert "Marketing" in live  # outside the target: not deleted
    assert sorted(live["Legal"]["members"]) == [1006, 1008]  # frank, heidi

    # the rest is still there to do, for a full plan
    rest = site.run("plan", "small.yaml", "--detailed-exitcode")
    assert rest.returncode == EXIT_CHANGES
    assert 'workspace "Marketing"' in rest.stdout


def test_a_managed_workspace_outside_the_target_deleted_by_hand_is_not_recreated(
    site: LoopbackSite,
) -> None:
    """Widening (a managed workspace gone from the site) stays within the target."""
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    marketing = site.workspaces()["Marketing"]["id"]
    site.api(lambda client: client.workspace_delete(marketing))

    targeted = plan_json(site, "--target", "Legal")
    assert targeted["actions"] == []
    full = plan_json(site)
    assert "workspace_add:Marketing" in {a["id"] for a in full["actions"]}


def test_a_saved_targeted_plan_applies_only_its_actions(site: LoopbackSite) -> None:
    site.write_manifest("small.yaml", SMALL)
    saved = site.run("plan", "small.yaml", "--target", "workspace:Legal", "-o", "plan.json")
    assert saved.returncode == EXIT_OK, saved.stderr
    applied = site.run("apply", "plan.json", "small.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    live = site.workspaces()
    assert "Legal" in live
    assert not {"Finance", "Finance Archive", "Marketing"} & set(live)
    assert "finance-team" not in site.groups()

    again = site.run("apply", "plan.json", "small.yaml", "--target", "Finance")
    assert again.returncode != EXIT_OK
    assert "belong to the plan" in again.stderr


def test_drift_can_be_targeted(site: LoopbackSite) -> None:
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    finance = site.workspaces()["Finance"]["id"]
    site.api(lambda client: client.add_to_workspace(1011, [finance]))  # by hand

    legal = site.run("drift", "small.yaml", "--target", "Legal", "--format", "json")
    assert legal.returncode == EXIT_OK, legal.stdout
    report = json.loads(legal.stdout)
    assert report["in_sync"] is True
    assert any("Left out" in notice for notice in report["notices"])

    fin = site.run("drift", "small.yaml", "--target", "Finance")
    assert fin.returncode == EXIT_CHANGES
    assert "extra members: mallory" in fin.stdout  # named as workspace_info lists her


def test_exclude_leaves_a_kind_out_of_apply(site: LoopbackSite) -> None:
    site.write_manifest("small.yaml", SMALL)
    applied = site.run("apply", "small.yaml", "--auto-approve", "--exclude", "group:*")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "finance-team" not in site.groups()
    assert set(site.workspaces()) >= {"Finance", "Finance Archive", "Legal", "Marketing"}
    rest = site.run("plan", "small.yaml", "--format", "json")
    assert [a["id"] for a in json.loads(rest.stdout)["actions"]] == ["user_group_add:finance-team"]


def test_changed_and_target_together_plan_what_changed_within_the_target(
    site: LoopbackSite,
) -> None:
    site.write_manifest("small.yaml", SMALL)
    assert site.run("apply", "small.yaml", "--auto-approve").returncode == EXIT_OK
    edited = {
        **SMALL,
        "workspaces": [
            {**ws, "users": [*ws["users"], "heidi"]}
            if ws["name"] in ("Legal", "Finance", "Marketing")
            else ws
            for ws in SMALL["workspaces"]
        ],
    }
    site.write_manifest("small.yaml", edited)
    plan = plan_json(site, "--changed", "--target", "Fin*", "--target", "Legal")
    assert touched(plan) == {"Finance", "Legal"}  # Finance Archive is unchanged
    assert plan["scope"]["workspaces"] == ["Finance", "Legal"]
    assert any("what changed since the last apply" in n for n in plan["notices"])


def test_the_documented_commands_run_as_written(tmp_path: Path) -> None:
    """docs/pipelines.md's targeted commands, on the example manifest, against the embedded
    sandbox."""
    (tmp_path / "site").mkdir()
    shutil.copy(ROOT / "examples" / "site.yaml", tmp_path / "site" / "site.yaml")
    commands = code_block(
        "## Choosing what to plan: `--target` and `--exclude`", document("docs/pipelines.md")
    )
    assert len(commands) == 3
    outputs = []
    for command in commands:
        result = run([*shlex.split(command), "--sandbox"], tmp_path)
        assert result.returncode == EXIT_OK, result.stderr
        outputs.append(result.stdout)
    assert "Targeted (--target Finance* --exclude group:finance-team)" in outputs[0]
    assert (tmp_path / "plan.json").exists()
    assert "Targeted (--exclude group:*)" in outputs[1]
    assert "Targeted (--target workspace:Legal): planned 1 of 14 objects" in outputs[2]


def test_drift_notify_and_since_last_refuse_a_target(site: LoopbackSite) -> None:
    """The report kept for --notify/--since-last is the whole site's: a targeted one would
    call everything outside the target resolved."""
    site.write_manifest("small.yaml", SMALL)
    result = site.run("drift", "small.yaml", "--since-last", "--target", "Legal")
    assert result.returncode != EXIT_OK
    assert "do not combine with --target/--exclude" in result.stderr
