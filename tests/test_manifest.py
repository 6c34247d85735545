"""The manifest as the planner sees it: the example site, normalisation, merging, the schema.

Bad manifests are table-driven in ``test_manifest_cases.py``; hostile input is in
``test_manifest_hostile.py``; the command line in ``test_manifest_cli.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from reconciler import codec
from reconciler.manifest import ManifestResult, load_manifest
from reconciler.manifest.schema import site_schema
from reconciler.model import DEFAULT_MAX_DELETES, DesiredSite, DesiredWorkspace, Policy, Source
from reconciler.spec import MAX_WORKSPACE_NAME_LENGTH, NOTIFICATION_KEYS, PERMISSION_KEYS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "site.yaml"
SEED = ROOT / "reconciler" / "sandbox" / "seeds" / "example.yaml"


def _load(tmp_path: Path, text: str, name: str = "site.yaml") -> ManifestResult:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_manifest([path])


def _desired(tmp_path: Path, text: str) -> DesiredSite:
    result = _load(tmp_path, text)
    assert result.desired is not None, [f.render() for f in result.findings]
    return result.desired


def _workspace(desired: DesiredSite, name: str) -> DesiredWorkspace:
    return next(workspace for workspace in desired.workspaces if workspace.name == name)


# --- the example site -------------------------------------------------------------------


@pytest.fixture(scope="module")
def example() -> DesiredSite:
    result = load_manifest([EXAMPLE])
    assert result.findings == []
    assert result.desired is not None
    return result.desired


def test_example_is_a_realistic_site(example: DesiredSite) -> None:
    own = [w for w in example.workspaces if w.team is None]
    assert len(own) >= 6
    assert {w.root_access for w in own} == {True, False}
    assert any(w.permissions is None for w in own)  # permissions: null
    assert any(w.notifications for w in own)
    batch_flags = {flag for w in own for flag in w.permissions or () if flag.startswith("batch_")}
    assert len(batch_flags) >= 3
    assert len([g for g in example.groups if g.team is None]) >= 4
    assert len({w.team for w in example.workspaces if w.team}) == 2
    kinds = {ref.kind for w in example.workspaces for ref in w.users}
    assert kinds == {"username", "email", "id"}
    assert example.policy.protect
    assert example.site_url == "https://acme.example.net"


def test_example_refers_only_to_users_of_the_seed(example: DesiredSite) -> None:
    seed = yaml.safe_load(SEED.read_text("utf-8"))
    known = {str(u["id"]) for u in seed["users"]} | {u["username"] for u in seed["users"]}
    known |= {u["email"] for u in seed["users"]}
    refs = [ref for w in example.workspaces for ref in w.users]
    refs += [ref for g in example.groups for ref in g.members]
    assert {ref.text for ref in refs} <= known
    hand_made = {w["name"] for w in seed["workspaces"]} | {g["name"] for g in seed["groups"]}
    declared = {w.name for w in example.workspaces} | {g.name for g in example.groups}
    assert not hand_made & declared


# --- normalisation ----------------------------------------------------------------------

DEFAULTS_MANIFEST = """\
version: 1
defaults:
  root_access: false
  permissions: {upload_files: true, download_files: true}
  notifications: {upload_notifications: true}
workspaces:
  - name: Inherits
  - name: Adds a flag
    permissions: {rename_files: true}
  - name: Switches one off
    root_access: true
    permissions: {upload_files: false}
  - name: No override
    permissions: null
    notifications: null
  - name: Implied
    permissions: {batch_download_files: true, send_files_non_user: true, send_files: true}
teams:
  - name: Payments
    members: [carol, 1004]
    workspace: {permissions: {create_folders: true}}
"""


def test_defaults_merge_key_by_key(tmp_path: Path) -> None:
    desired = _desired(tmp_path, DEFAULTS_MANIFEST)
    base = frozenset({"upload_files", "download_files"})

    assert _workspace(desired, "Inherits").permissions == base
    assert _workspace(desired, "Inherits").root_access is False
    assert _workspace(desired, "Inherits").notifications == frozenset({"upload_notifications"})
    assert _workspace(desired, "Adds a flag").permissions == base | {"rename_files"}
    assert _workspace(desired, "Switches one off").permissions == frozenset({"download_files"})
    assert _workspace(desired, "Switches one off").root_access is True
    assert _workspace(desired, "No override").permissions is None
    assert _workspace(desired, "No override").notifications is None
    assert _workspace(desired, "Payments").permissions == base | {"create_folders"}


def test_permissions_carry_the_flags_the_site_forces_on(tmp_path: Path) -> None:
    implied = _workspace(_desired(tmp_path, DEFAULTS_MANIFEST), "Implied")
    assert implied.permissions == frozenset(
        {
            "upload_files",
            "download_files",
            "batch_download_files",
            "send_files",
            "send_files_non_user",
        }
    )


def test_an_empty_defaults_block_is_fine_when_every_workspace_extends_it(tmp_path: Path) -> None:
    text = """\
version: 1
defaults: {permissions: {}}
workspaces:
  - {name: A, permissions: {upload_files: true}}
  - {name: B, permissions: null}
"""
    desired = _desired(tmp_path, text)
    assert [w.permissions for w in desired.workspaces] == [frozenset({"upload_files"}), None]
    text += "  - {name: C}\n"
    (finding,) = _load(tmp_path, text).findings
    assert finding.source.path == "defaults.permissions"
    assert finding.message == (
        "the permission override turns no permission on (inherited by workspace 'C')"
    )


def test_without_defaults_a_workspace_has_no_override_and_root_access(tmp_path: Path) -> None:
    desired = _desired(tmp_path, "version: 1\nworkspaces:\n  - name: Plain\n")
    (plain,) = desired.workspaces
    assert (plain.root_access, plain.permissions, plain.notifications) == (True, None, None)
    assert plain.users == ()
    assert desired.policy == Policy()
    assert desired.site_url is None


def test_a_notification_block_may_turn_everything_off(tmp_path: Path) -> None:
    text = "version: 1\nworkspaces:\n  - {name: Quiet, notifications: {}}\n"
    assert _desired(tmp_path, text).workspaces[0].notifications == frozenset()


def test_a_team_is_a_workspace_and_a_group(tmp_path: Path) -> None:
    desired = _desired(tmp_path, DEFAULTS_MANIFEST)
    workspace = _workspace(desired, "Payments")
    (group,) = desired.groups
    assert workspace.team == group.team == group.name == "Payments"
    assert [ref.text for ref in workspace.users] == [ref.text for ref in group.members]
    assert workspace.source == group.source
    assert (workspace.source.path, workspace.source.line) == ("teams[0]", 19)


def test_user_refs_keep_their_text_and_place(tmp_path: Path) -> None:
    text = "version: 1\nworkspaces:\n  - name: A\n"
    text += "    users: [alice, bob@acme.example, 1042, '1043']\n"
    (workspace,) = _desired(tmp_path, text).workspaces
    refs = workspace.users
    assert [(ref.text, ref.kind) for ref in refs] == [
        ("alice", "username"),
        ("bob@acme.example", "email"),
        ("1042", "id"),
        ("1043", "id"),
    ]
    assert refs[2].source == Source(str(tmp_path / "site.yaml"), 4, 38, "workspaces[0].users[2]")


def test_policy_is_read_with_defaults_for_what_is_left_out(tmp_path: Path) -> None:
    text = "version: 1\npolicy: {prune: true, max_delete_fraction: 1, protect: ['Arch*']}\n"
    policy = _desired(tmp_path, text).policy
    assert policy == Policy(prune=True, max_delete_fraction=1.0, protect=("Arch*",))
    assert isinstance(policy.max_delete_fraction, float)
    assert (policy.max_deletes, policy.min_admins) == (DEFAULT_MAX_DELETES, 1)
    assert (policy.prune_users, policy.protect_users) == (False, ())


def test_the_user_policy_keys_are_read(tmp_path: Path) -> None:
    text = """\
version: 1
policy:
  max_deletes: 0
  prune_users: true
  protect_users: ["admin*", "svc-?"]
  min_admins: 2
  max_user_removal_fraction: 0
"""
    policy = _desired(tmp_path, text).policy
    assert policy == Policy(
        max_deletes=0,
        prune_users=True,
        protect_users=("admin*", "svc-?"),
        min_admins=2,
        max_user_removal_fraction=0.0,
    )
    assert isinstance(policy.max_user_removal_fraction, float)


def test_the_schema_defaults_are_the_model_defaults() -> None:
    """Editors show the schema's defaults; the tool applies the model's: they must agree."""
    keys = site_schema()["properties"]["policy"]["properties"]
    fallback = Policy()
    for key, prop in keys.items():
        assert prop["default"] == codec.to_data(getattr(fallback, key)), key


def test_anchors_aliases_and_merge_keys_are_allowed(tmp_path: Path) -> None:
    text = """\
version: 1
workspaces:
  - name: Finance
    users: &finance [alice, bob]
    permissions: &standard {upload_files: true, download_files: true}
  - name: Audit
    users: *finance
    permissions: {<<: *standard, download_files: false, rename_files: true}
"""
    audit = _workspace(_desired(tmp_path, text), "Audit")
    assert [ref.text for ref in audit.users] == ["alice", "bob"]
    assert audit.permissions == frozenset({"upload_files", "rename_files"})
    assert audit.users[1].source.path == "workspaces[1].users[1]"


def test_a_date_like_name_stays_text(tmp_path: Path) -> None:
    text = "version: 1\nworkspaces:\n  - name: 2024-01-01\n"
    assert _desired(tmp_path, text).workspaces[0].name == "2024-01-01"


# --- files and directories --------------------------------------------------------------


def _write(directory: Path, files: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")


def test_a_directory_is_merged_in_sorted_order(tmp_path: Path) -> None:
    _write(
        tmp_path / "site",
        {
            "b-payments.yml": "teams:\n  - {name: Payments, members: [carol]}\n",
            "a-base.yaml": "version: 1\nworkspaces:\n  - name: Finance\n",
            "c-data.yaml": "teams:\n  - {name: Data Platform, members: [sybil]}\n",
            "notes.txt": "not a manifest",
            ".draft.yaml": "version: [",
        },
    )
    _write(tmp_path / "site" / "old", {"x.yaml": "version: ["})
    result = load_manifest([tmp_path / "site"])
    base = str(tmp_path / "site")
    assert [(f.severity, f.source.file) for f in result.findings] == [
        ("warning", f"{base}/.draft.yaml")  # skipped, but not without a word
    ]
    assert result.desired is not None
    assert [w.name for w in result.desired.workspaces] == ["Finance", "Payments", "Data Platform"]
    assert [g.name for g in result.desired.groups] == ["Payments", "Data Platform"]
    assert result.desired.files == (
        f"{base}/a-base.yaml",
        f"{base}/b-payments.yml",
        f"{base}/c-data.yaml",
    )
    assert result.desired.groups[1].source.file == f"{base}/c-data.yaml"


def test_several_paths_are_merged_like_a_directory(tmp_path: Path) -> None:
    _write(tmp_path, {"a.yaml": "version: 1\npolicy: {prune: true}\n", "b.yaml": "policy: {}\n"})
    result = load_manifest([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    (finding,) = result.findings
    assert finding.source == Source(str(tmp_path / "b.yaml"), 1, 1, "policy")
    assert f"first at {tmp_path / 'a.yaml'}:2" in finding.message
    assert result.desired is None


def test_a_file_given_twice_is_read_once(tmp_path: Path) -> None:
    _write(tmp_path, {"site.yaml": "version: 1\nworkspaces:\n  - name: Finance\n"})
    result = load_manifest([tmp_path / "site.yaml", tmp_path])
    assert result.desired is not None and len(result.desired.workspaces) == 1
    (finding,) = result.findings
    assert finding.severity == "warning" and "read once" in finding.message


def test_unusable_paths_are_errors_not_exceptions(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = load_manifest([tmp_path / "missing.yaml", tmp_path / "empty"])
    assert [(f.source.file, f.message) for f in result.findings] == [
        (str(tmp_path / "missing.yaml"), "no such file or directory"),
        (str(tmp_path / "empty"), "the directory holds no *.yaml or *.yml files"),
    ]
    assert result.desired is None


def test_an_unreadable_file_does_not_also_report_a_missing_version(tmp_path: Path) -> None:
    _write(tmp_path, {"a.yaml": "version: [1\n", "b.yaml": "workspaces: []\n"})
    result = load_manifest([tmp_path])
    assert [f.source.file for f in result.findings] == [str(tmp_path / "a.yaml")]


# --- the schema -------------------------------------------------------------------------


def _object_schemas(schema: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(schema, dict):
        if "properties" in schema:
            found.append(schema)
        for value in schema.values():
            found += _object_schemas(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _object_schemas(value)
    return found


def test_the_schema_is_valid_draft_2020_12_and_self_describing() -> None:
    schema = site_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] and schema["$schema"].endswith("/2020-12/schema")
    for object_schema in _object_schemas(schema):
        assert object_schema["additionalProperties"] is False
        for name, prop in object_schema["properties"].items():
            target = prop
            if "$ref" in prop:
                target = {**schema["$defs"][prop["$ref"].removeprefix("#/$defs/")], **prop}
            assert target.get("title") and target.get("description"), name


def test_the_schema_names_the_flags_and_limits_of_the_api() -> None:
    defs = site_schema()["$defs"]
    assert set(defs["permissions"]["properties"]) == PERMISSION_KEYS
    assert set(defs["notifications"]["properties"]) == NOTIFICATION_KEYS
    assert defs["name"]["maxLength"] == MAX_WORKSPACE_NAME_LENGTH


def test_the_example_validates_against_the_schema_file_itself() -> None:
    schema = json.loads((ROOT / "schemas" / "site.schema.json").read_text("utf-8"))
    Draft202012Validator(schema).validate(yaml.safe_load(EXAMPLE.read_text("utf-8")))


# --- speed ------------------------------------------------------------------------------


def _large_manifest(workspaces: int) -> str:
    users = ["alice", "bob", "carol@acme.example", "1042", "dave", "erin", "frank@acme.example"]
    lines = ["version: 1", "defaults: {permissions: {upload_files: true}}", "workspaces:"]
    for index in range(workspaces):
        refs = (users * 3)[index % 7 : index % 7 + 5 + index % 16]
        lines += [f"  - name: Workspace {index:04d}", f"    users: [{', '.join(refs)}]"]
        if index % 3 == 0:
            lines.append("    permissions: {batch_upload_files: true, rename_files: true}")
    return "\n".join(lines) + "\n"


def test_a_thousand_workspaces_load(tmp_path: Path) -> None:
    """A site of the benchmark's size loads whole (its time is bench/bench_manifest.py's)."""
    path = tmp_path / "large.yaml"
    path.write_text(_large_manifest(1000), encoding="utf-8")
    result = load_manifest([path])
    assert result.desired is not None and len(result.desired.workspaces) == 1000
    workspaces = result.desired.workspaces
    assert [ws.name for ws in workspaces] == [f"Workspace {i:04d}" for i in range(1000)]
    assert all(ws.permissions and "upload_files" in ws.permissions for ws in workspaces)
    assert [i for i, ws in enumerate(workspaces) if "rename_files" in (ws.permissions or ())] == [
        *range(0, 1000, 3)
    ]


@pytest.mark.parametrize(
    "state", ["postgres://ci@db.acme.example/site", "POSTGRESQL://db/site", "file:///srv/state"]
)
def test_every_state_form_the_commands_accept_is_valid_in_the_manifest(
    tmp_path: Path, state: str
) -> None:
    desired = _desired(tmp_path, f"version: 1\nsite: {{state: '{state}'}}\n")
    assert desired.state == state
