"""``ownership:`` in the manifest: what it reads, joins and refuses (issue 46). The refusals'
messages and places are cases in tests/cases/manifest (``bad-dir-ownership-*``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.manifest import load_manifest
from reconciler.ownership.model import Ownership, TeamGrant, file_matches

CENTRAL = """\
version: 1
ownership:
  central: ["@acme/it"]
  teams:
    - files: ["teams/finance.yaml"]
      owners: ["@acme/finance-leads"]
      workspaces: ["Finance*"]
      groups: ["finance-*"]
      may_set: [users, members]
workspaces:
  - name: Finance
    root_access: false
    permissions: {upload_files: true}
groups:
  - name: finance-team
"""

TEAM = """\
workspaces:
  - name: finance
    users: [alice, bob]
groups:
  - name: FINANCE-team
    members: [alice]
"""


def _site(tmp_path: Path, central: str = CENTRAL, team: str = TEAM) -> Path:
    (tmp_path / "teams").mkdir()
    (tmp_path / "site.yaml").write_text(central, "utf-8")
    (tmp_path / "teams" / "finance.yaml").write_text(team, "utf-8")
    return tmp_path


def test_a_workspace_declared_across_files_is_one_with_each_files_fields(tmp_path: Path) -> None:
    result = load_manifest([_site(tmp_path)])
    assert result.findings == []
    assert result.desired is not None
    [finance] = result.desired.workspaces
    assert finance.name == "Finance"  # the first file's spelling
    assert finance.root_access is False and finance.permissions == frozenset({"upload_files"})
    assert [ref.text for ref in finance.users] == ["alice", "bob"]
    assert finance.users[0].source.file.endswith("teams/finance.yaml")  # where it was written
    [group] = result.desired.groups
    assert [ref.text for ref in group.members] == ["alice"]


def test_the_team_file_in_a_subdirectory_is_read_because_ownership_names_it(
    tmp_path: Path,
) -> None:
    site = _site(tmp_path)
    (site / "teams" / "draft.yaml").write_text("workspaces: [{name: Draft}]\n", "utf-8")
    result = load_manifest([site])
    assert result.desired is not None
    assert result.desired.files == (str(site / "site.yaml"), str(site / "teams" / "finance.yaml"))


def test_the_declarations_are_in_the_desired_site(tmp_path: Path) -> None:
    result = load_manifest([_site(tmp_path)])
    assert result.desired is not None
    ownership = result.desired.ownership
    assert ownership is not None
    assert ownership.central == ("@acme/it",)
    assert ownership.teams == (
        TeamGrant(
            ("teams/finance.yaml",),
            ("@acme/finance-leads",),
            ("Finance*",),
            ("finance-*",),
            ("users", "members"),
        ),
    )
    assert ownership.team_of(str(tmp_path / "teams" / "finance.yaml")) == ownership.teams[0]
    assert ownership.team_of(str(tmp_path / "site.yaml")) is None
    assert ownership.origin("workspace", "Finance", "users") == str(
        tmp_path / "teams" / "finance.yaml"
    )


def test_without_ownership_a_name_in_two_files_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("version: 1\nworkspaces: [{name: Finance}]\n", "utf-8")
    (tmp_path / "b.yaml").write_text("workspaces: [{name: Finance, users: [a]}]\n", "utf-8")
    result = load_manifest([tmp_path])
    assert not result.ok
    assert "has the same name as workspace 'Finance'" in result.findings[0].message


def test_a_team_names_glob_matches_names_as_the_site_compares_them(tmp_path: Path) -> None:
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in "FINANCE")
    team = f"workspaces:\n  - name: {fullwidth} EU\n    users: [alice]\n"
    result = load_manifest([_site(tmp_path, team=team)])
    assert result.findings == []


def test_the_default_grant_is_users_only(tmp_path: Path) -> None:
    central = CENTRAL.replace("      may_set: [users, members]\n", "")
    result = load_manifest([_site(tmp_path, central=central)])
    [finding] = result.findings
    assert finding.source.path == "groups[0].members"
    assert "(ownership.teams[0].may_set: users)" in finding.message


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("teams/finance.yaml", "teams/finance.yaml", True),
        ("teams/*.yaml", "teams/finance.yaml", True),
        ("teams/*.yaml", "teams/eu/finance.yaml", False),  # * stays in one directory
        ("teams/**/*.yaml", "teams/eu/finance.yaml", True),
        ("teams/**/*.yaml", "teams/finance.yaml", True),
        ("**/finance.yaml", "finance.yaml", True),
        ("teams/?.yaml", "teams/a.yaml", True),
        ("teams/finance.yaml", "teams/Finance.yaml", False),  # file names keep their case
    ],
)
def test_file_globs_read_as_codeowners_reads_them(glob: str, path: str, matches: bool) -> None:
    assert file_matches(glob, path) is matches


def test_a_file_is_named_relative_to_the_manifest_directory() -> None:
    ownership = Ownership(("@acme/it",), base="site")
    assert ownership.relative("site/teams/finance.yaml") == "teams/finance.yaml"
    assert Ownership(("@acme/it",)).relative("teams/x.yaml") == "teams/x.yaml"


def test_the_schema_accepts_exactly_the_rights_the_tool_knows() -> None:
    """``may_set`` words are checked by the schema and granted by the tool: one list each,
    held to each other (a word only one of them knew would be refused or silently ignored)."""
    import json

    from reconciler.ownership.model import RIGHTS
    from tests.support.loopback import REPO

    schema = json.loads((REPO / "schemas" / "site.schema.json").read_text(encoding="utf-8"))
    found = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "may_set" in node.get("properties", {}):
                found.append(node["properties"]["may_set"]["items"]["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found == [list(RIGHTS)]
