"""The attacks and accidents of the security review, each replayed against the real tool.

Each test here failed on the code before the review's fixes (see docs/reliability.md for the
list and for the tests elsewhere: the client's hostile servers, the manifest's hostile names
and vanishing files, the planner's case tables).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.api.config import check_site_url
from reconciler.core.users import UserDirectory, resolve_references
from reconciler.engine.planning.plan import Plan, canonical
from reconciler.engine.planning.plan_file import MAX_PLAN_BYTES, MAX_PLAN_DEPTH, key_id
from reconciler.engine.records import document as records_document
from reconciler.errors import EXIT_ERROR, EXIT_OK, EXIT_REFUSED, StateError
from reconciler.model import LiveUser
from tests.support.cli_runner import run_reconciler
from tests.support.engine_site import engine_site
from tests.support.hostile_server import Reply, Request, hostile_server, json_reply
from tests.support.loopback import (
    ADMIN_KEY,
    ADMIN_SECRET,
    LoopbackSite,
)
from tests.support.models import desired_site
from tests.support.sandbox_site import example_seed
from tests.support.secret_scan import leaks_in
from tests.support.site_strategies import load_desired

# --- 1. a saved plan is a proposal, not an order -------------------------------------------


def _plan_key(site: LoopbackSite) -> bytes:
    (key,) = (site.workdir / ".reconciler").rglob("plan.key")
    return key.read_bytes()


def _appended_delete(site: LoopbackSite, reseal_with: bytes | None) -> dict[str, Any]:
    """plan.json with a workspace_delete of the protected, unmanaged "Legacy Scans" added,
    its checksum recomputed, and (with the key) its seal too: an attacker with the records."""
    data = json.loads((site.workdir / "plan.json").read_text())
    data.pop("seal")
    data.pop("checksum")
    legacy = site.workspaces()["Legacy Scans"]["id"]
    data["actions"].append(
        {
            "id": f"workspace_delete:{legacy}",
            "phase": "delete",
            "method": "workspace_delete",
            "params": {"workspace_id": legacy, "name": "Legacy Scans", "reason": "prune"},
            "summary": "harmless",
            "depends_on": [],
        }
    )
    data["checksum"] = Plan.from_data(data).checksum
    if reseal_with is not None:
        mac = hmac.new(reseal_with, canonical(data), hashlib.sha256).hexdigest()
        data["seal"] = {"key_id": key_id(reseal_with), "mac": mac}
    return data


def test_an_edited_plan_file_is_refused_before_anything_is_read(site: LoopbackSite) -> None:
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    data = _appended_delete(site, reseal_with=None)
    data["seal"] = json.loads((site.workdir / "plan.json").read_text())["seal"]
    (site.workdir / "plan.json").write_text(json.dumps(data))
    site.control("calls/reset", {})
    refused = site.run("apply", "plan.json", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert "changed after it was saved" in refused.stderr
    assert site.control("calls")["total"] == 0  # refused before a single call
    assert "Legacy Scans" in site.workspaces()


def test_a_resealed_plan_runs_only_what_the_site_needs_as_saved(site: LoopbackSite) -> None:
    """Even with the records' key, an action the manifest does not call for is refused,
    named, and nothing is applied."""
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    data = _appended_delete(site, reseal_with=_plan_key(site))
    (site.workdir / "plan.json").write_text(json.dumps(data))
    refused = site.run("apply", "plan.json", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert 'not needed as saved: delete workspace "Legacy Scans"' in refused.stderr
    assert set(site.workspaces()) == {"Legacy Scans"}


# --- 2. a managed group renamed on the site ------------------------------------------------


def test_a_managed_group_renamed_on_the_site_is_never_deleted(tmp_path: Path) -> None:
    first = {"version": 1, "groups": [{"name": "auditors", "members": ["alice"]}]}
    gone = {"version": 1, "groups": [], "policy": {"prune": True}}

    async def run() -> tuple[Plan, dict[str, Any]]:
        async with engine_site(example_seed(), tmp_path / "state") as site:
            await site.apply(load_desired(first, tmp_path / "site.yaml"))
            group = next(g for g in site.dump()["groups"] if g["name"] == "auditors")
            store = site.app.sandbox.store  # the web app's rename: the API has none
            store._conn.execute(
                "UPDATE user_groups SET name = 'auditors-2026' WHERE id = ?", (group["id"],)
            )
            outcome = await site.apply(load_desired(gone, tmp_path / "site.yaml"))
            return outcome.plan, site.dump()

    plan, dump = asyncio.run(run())
    assert [(c.name, c.action) for c in plan.changes] == [("auditors", "renamed")]
    assert plan.actions == ()
    assert "renamed on the site" in " ".join(plan.warnings)
    assert not any(u.name == "auditors-2026" for u in plan.unmanaged)
    assert "auditors-2026" in {g["name"] for g in dump["groups"]}


# --- 5. a server that echoes the request ---------------------------------------------------


def _echoing_site(request: Request) -> Reply:
    """A minimal site whose refusals quote the request: signature, key and all."""
    answers: dict[str, Any] = {
        "workspace_list": {"workspaceList": {"workspaces": [], "totalWorkspaces": 0}},
        "users_location_access": {
            "usersLocationAccess": [
                {"id": 1001, "username": "alice", "email": "a@x.example", "uType": 1},
                {"id": 7, "username": "team", "uType": 0},
            ]
        },
        "user_list": {"userList": {"users": [{"id": 1001, "username": "alice", "email": "a@x"}]}},
    }
    if request.method in answers:
        return json_reply(answers[request.method])
    message = f"Cannot parse {request.raw}"
    return json_reply({"error": {"title": "Workspace Add Failed", "message": message}}, 400)


def test_an_echoing_site_leaks_no_signature_to_output_records_or_journal(tmp_path: Path) -> None:
    manifest = {"version": 1, "workspaces": [{"name": "Alpha", "users": ["alice"]}]}
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(manifest))
    with hostile_server(_echoing_site) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SITE_", "RECONCILER"))}
        env.update(SITE_URL=server.url, SITE_API_KEY=ADMIN_KEY, SITE_API_SECRET=ADMIN_SECRET)
        outputs = []
        for verbose in ((), ("-vv", "--log-format", "json")):
            result = run_reconciler(
                "apply", "site.yaml", "--auto-approve", *verbose, cwd=tmp_path, env=env
            )
            assert result.returncode == EXIT_ERROR
            outputs += [result.stdout, result.stderr]
        signatures = [r.params["signature"] for r in server.requests if "signature" in r.params]
    assert "Cannot parse" in outputs[1]  # the site's words are shown, cleaned
    texts = "\n".join(outputs).encode()
    files = [p for p in (tmp_path / ".reconciler").rglob("*") if p.is_file()]
    assert any("journal" in p.name or p.parent.name == "versions" for p in files)
    for blob in [texts, *(p.read_bytes() for p in files)]:
        assert leaks_in(blob) == []
        assert not any(sig.encode() in blob for sig in signatures)


# --- 7. a journal entry that cannot be read ------------------------------------------------


def test_an_unreadable_journal_entry_is_reported_and_never_crashes(site: LoopbackSite) -> None:
    assert site.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
    (site_dir,) = (site.workdir / ".reconciler" / "sites").iterdir()
    journal = site_dir / "journal.jsonl"
    bad = {"event": "done", "action": {"method": "workspace_add", "params": {"names": 5}}}
    journal.write_text(json.dumps(bad) + "\n")
    journal.chmod(0o600)
    plan = site.run("plan", "site.yaml", "--detailed-exitcode")
    assert plan.returncode == EXIT_OK, plan.stderr
    assert "journal entry 1 of an interrupted apply could not be read" in plan.stdout
    applied = site.run("apply", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK and "could not be read" in applied.stderr
    assert "could not be read" not in site.run("plan", "site.yaml").stdout  # cleared once


# --- smaller holes -------------------------------------------------------------------------


def _resolve(refs: list[str], users: list[LiveUser]) -> Any:
    desired = desired_site({"workspaces": [{"name": "W", "users": refs}]})
    return resolve_references(desired, UserDirectory.of(users))


def test_a_reference_that_names_two_users_is_an_error_naming_both() -> None:
    users = [
        LiveUser(1002, "bob", "bob@acme.example"),
        LiveUser(3000, "1002", "numbers@acme.example"),
        LiveUser(3001, "carol@acme.example", "c2@acme.example"),
        LiveUser(1003, "carol", "carol@acme.example"),
    ]
    resolution = _resolve(["1002", "carol@acme.example", "²"], users)
    ambiguous = {a.ref.text: {u.id for u in a.users} for a in resolution.ambiguous}
    assert ambiguous == {"1002": {1002, 3000}, "carol@acme.example": {1003, 3001}}
    assert [ref.text for ref in resolution.unknown] == ["²"]  # a username, never int("²")
    assert "could mean user 1002" in resolution.ambiguous[0].describe()


@pytest.mark.parametrize(
    "document",
    [
        None,
        [],
        {"format": 2, "site": "https://a.example", "workspaces": []},
        {"format": 2, "site": "https://a.example", "workspaces": {"W": {"id": 1e999}}},
        {"format": 2, "site": "https://a.example", "groups": {"g": {"id": "7"}}},
        {"format": 2, "site": "https://other.example"},
    ],
    ids=["null", "a list", "a list for workspaces", "an infinite ID", "an ID as text", "other"],
)
def test_damaged_records_are_one_clear_error(document: Any) -> None:
    if document is None:
        assert records_document.from_data(None, site="https://a.example", where="x").empty
        return
    with pytest.raises(StateError, match="are damaged") as raised:
        records_document.from_data(document, site="https://a.example", where="the state directory")
    assert raised.value.hint and "state history" in raised.value.hint


@pytest.mark.parametrize("url", ["https://h:99999", "https://h:abc", "http://[::1"])
def test_a_malformed_site_url_is_one_clear_error(url: str, tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text("version: 1\nworkspaces: []\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SITE_")}
    result = run_reconciler("plan", "site.yaml", "--site", url, cwd=tmp_path, env=env)
    assert result.returncode == EXIT_ERROR
    assert result.stderr.startswith("Error:") and "Internal error" not in result.stderr


def test_site_url_overriding_the_manifest_is_said(site: LoopbackSite) -> None:
    document = yaml.safe_load((site.workdir / "site.yaml").read_text())
    document.setdefault("site", {})["url"] = "https://elsewhere.example"
    site.write_manifest("site.yaml", document)
    result = site.run("plan", "site.yaml")
    assert result.returncode == EXIT_OK
    assert (
        "Note: Using RECONCILER_SITE_URL" in result.stderr and "elsewhere.example" in result.stderr
    )
    assert check_site_url(site.url) in result.stdout


@pytest.mark.parametrize("command", ["apply", "show"])
def test_a_deeply_nested_or_oversized_plan_file_is_one_refusal(
    site: LoopbackSite, command: str
) -> None:
    """A 'plan' nested 100,000 deep ended in "Internal error" (the parser's stack), and one
    of any size was read whole: each is now refused (exit 3) before a call is made."""
    deep = 100_000
    (site.workdir / "deep.json").write_text("[" * deep + "]" * deep, encoding="utf-8")
    with (site.workdir / "huge.json").open("wb") as huge:
        huge.truncate(MAX_PLAN_BYTES + 1)  # sparse: nothing is written
    site.control("calls/reset", {})
    for name, says in (
        ("deep.json", f"deep.json is nested more than {MAX_PLAN_DEPTH} levels deep"),
        ("huge.json", f"huge.json is larger than {MAX_PLAN_BYTES // 2**20} MiB"),
    ):
        extra = ["--auto-approve"] if command == "apply" else []
        refused = site.run(command, name, "site.yaml", *extra)
        assert refused.returncode == EXIT_REFUSED, refused.output
        assert says in refused.stderr and "Internal error" not in refused.stderr
    assert site.control("calls")["total"] == 0
