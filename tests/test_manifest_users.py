"""Users as code and ``site.state``: what the planner receives, and what never gets through.

The table-driven bad cases are ``tests/cases/manifest/bad-users.yaml``, ``bad-password.yaml``
and ``bad-site-credentials.yaml``; here is what a valid ``users:`` section becomes.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.manifest import ManifestResult, load_manifest
from reconciler.model import DesiredSite, DesiredUser, Source

USERS = """\
version: 1
users:
  - username: alice
    email: alice@acme.example
    first_name: Alice
    last_name: Arnold
    organization: Acme
    phone: "0041791234567"
    phone_ext: 12
    admin: true
  - {username: bob, email: bob@acme.example, phone: 41791234567, active: false}
workspaces:
  - name: Finance
    users: [alice, bob@acme.example, erin]
groups:
  - {name: finance-team, members: [ALICE, bob]}
teams:
  - {name: Payments, members: [alice@acme.example]}
"""


def _load(tmp_path: Path, text: str) -> ManifestResult:
    path = tmp_path / "site.yaml"
    path.write_text(text, encoding="utf-8")
    return load_manifest([path])


def _desired(tmp_path: Path, text: str) -> DesiredSite:
    result = _load(tmp_path, text)
    assert result.desired is not None, [f.render() for f in result.findings]
    return result.desired


def test_declared_users_get_their_defaults_and_their_place(tmp_path: Path) -> None:
    alice, bob = _desired(tmp_path, USERS).users
    assert alice == DesiredUser(
        username="alice",
        email="alice@acme.example",
        source=Source(str(tmp_path / "site.yaml"), 3, 5, "users[0]"),
        first_name="Alice",
        last_name="Arnold",
        organization="Acme",
        phone="0041791234567",
        phone_ext="12",
        admin=True,
        active=True,
    )
    assert (bob.first_name, bob.last_name, bob.organization) == ("", "", None)
    assert (bob.admin, bob.active, bob.phone_ext) == (False, False, None)


def test_phone_numbers_keep_every_digit(tmp_path: Path) -> None:
    """Quoted, the leading zeros stay; a plain YAML number is taken when it reads as written."""
    alice, bob = _desired(tmp_path, USERS).users
    assert alice.phone == "0041791234567"
    assert bob.phone == "41791234567"
    octal = USERS.replace('phone: "0041791234567"', "phone: 0041")
    (finding,) = _load(tmp_path, octal).findings
    assert finding.message == "the phone number 0041 is read by YAML as the number 33"
    assert finding.hint == "write it in quotes: '0041'"


def test_workspaces_groups_and_teams_may_name_declared_users(tmp_path: Path) -> None:
    result = _load(tmp_path, USERS)
    assert result.findings == []
    desired = result.desired
    assert desired is not None
    assert [ref.text for ref in desired.workspaces[0].users] == [
        "alice",
        "bob@acme.example",
        "erin",
    ]


def test_users_of_several_files_are_joined_and_checked_together(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(USERS, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        "users:\n  - {username: carol, email: carol@acme.example}\n"
        "  - {username: Bob, email: robert@acme.example}\n",
        encoding="utf-8",
    )
    result = load_manifest([tmp_path])
    (finding,) = result.findings
    assert finding.source == Source(str(tmp_path / "b.yaml"), 3, 6, "users[1].username")
    assert finding.message == (
        f"the username 'Bob' is already declared for another user ({tmp_path / 'a.yaml'}:11); "
        "the site compares them without regard to case"
    )
    without = load_manifest([tmp_path / "b.yaml"]).findings  # no version, but no clash
    assert [f.message for f in without] == ["the manifest has no `version`"]


def test_site_state_is_passed_on_as_written(tmp_path: Path) -> None:
    for state in ("postgresql://reconciler@db.acme.example:5432/site?sslmode=require",
                  "/srv/reconciler/state", "records"):  # fmt: skip
        text = f"version: 1\nsite:\n  state: {state}\n"
        assert _desired(tmp_path, text).state == state
    assert _desired(tmp_path, "version: 1\n").state is None


def test_a_password_never_reaches_the_findings_or_the_model(tmp_path: Path) -> None:
    text = USERS.replace("    admin: true\n", "    admin: true\n    password: S3cr3t!pw\n")
    text += "site:\n  state: postgresql://me:S3cr3t!pw@db/site\n"
    result = _load(tmp_path, text)
    assert result.desired is None
    assert [f.source.path for f in result.findings] == ["users[0].password", "site.state"]
    assert all("S3cr3t" not in f.render() for f in result.findings)
