"""Seeds: clear errors for bad files, references resolved, applied once, fast when big."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from reconciler.sandbox.app import create_app
from reconciler.sandbox.control import dump_state
from reconciler.sandbox.errors import SeedError
from reconciler.sandbox.rows import NewUserRow
from reconciler.sandbox.seed import load_seed_file
from reconciler.sandbox.synthetic import synthetic_seed
from tests.support.sandbox_site import EXAMPLE_SEED

BAD_SEEDS = sorted((Path(__file__).parent / "support" / "sandbox_seeds").glob("bad-*.yaml"))


def _expected(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), path
    return first.removeprefix("# expect: ")


@pytest.mark.parametrize("path", BAD_SEEDS, ids=[path.stem for path in BAD_SEEDS])
def test_a_bad_seed_file_says_what_and_where(path: Path) -> None:
    with pytest.raises(SeedError) as caught:
        load_seed_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert _expected(path) in message


def test_there_are_bad_seed_cases() -> None:
    assert len(BAD_SEEDS) >= 15


def test_a_missing_or_unreadable_seed_file(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="no such seed file"):
        load_seed_file(tmp_path / "absent.yaml")
    with pytest.raises(SeedError, match="cannot read the seed file"):
        load_seed_file(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00users")
    with pytest.raises(SeedError, match="cannot read the seed file"):
        load_seed_file(binary)


def test_the_example_seed_loads_with_its_legacy_workspace_and_group() -> None:
    state = dump_state(create_app(seed=load_seed_file(EXAMPLE_SEED)).sandbox)
    assert len(state["users"]) == 22
    assert state["workspaces"] == [{
        "id": 1, "name": "Legacy Scans", "path": "/Legacy_Scans_workspace/", "root_access": True,
        "override_permissions": False, "override_notifications": False, "permissions": [],
        "notifications": [], "members": [1019, 1042],
    }]  # fmt: skip
    assert state["groups"] == [{"id": 1, "name": "old-contractors", "members": [1011]}]


def test_references_by_username_email_or_id_and_automatic_ids() -> None:
    seed = {
        "users": [
            {"username": "first", "email": "first@x.example"},
            {"id": 50, "username": "fifty", "email": "Fifty@X.example"},
            {"username": "next", "email": "next@x.example"},
        ],
        "workspaces": [
            {"id": 900, "name": "Refs", "users": ["first", "fifty@x.example", 51, "50"],
             "root_access": False, "notifications": {"upload_notifications": True}},
        ],
        "groups": [{"id": 30, "name": "crew", "members": ["next", "next"]}],
    }  # fmt: skip
    app = create_app(seed=seed)
    state = dump_state(app.sandbox)
    # users without an ID are numbered after the highest explicit one
    assert [(user["id"], user["username"]) for user in state["users"]] == [
        (50, "fifty"),
        (51, "first"),
        (52, "next"),
    ]
    workspace = state["workspaces"][0]
    assert (workspace["id"], workspace["members"], workspace["root_access"]) == (
        900,
        [50, 51],
        False,
    )
    assert (workspace["override_notifications"], workspace["notifications"]) == (
        True,
        ["upload_notifications"],
    )
    assert state["groups"] == [{"id": 30, "name": "crew", "members": [52]}]


def test_seed_workspace_overrides_follow_the_api_rules() -> None:
    seed = {
        "users": [{"username": "a", "email": "a@x.example"}],
        "workspaces": [
            {"name": "W", "permissions": {"batch_move_copy_files": True, "rename_files": None}}
        ],
    }
    workspace = dump_state(create_app(seed=seed).sandbox)["workspaces"][0]
    assert workspace["override_permissions"] is True
    assert workspace["permissions"] == ["batch_move_copy_files", "move_copy_files"]


def test_duplicate_workspace_names_in_a_seed_need_the_profile() -> None:
    seed = {
        "users": [{"username": "a", "email": "a@x.example"}],
        "workspaces": [{"name": "Twin"}, {"name": "Twin"}],
    }
    with pytest.raises(SeedError, match="already used by workspaces"):
        create_app(seed=seed)
    seed["settings"] = {"allow_duplicate_workspace_names": True}
    assert len(dump_state(create_app(seed=seed).sandbox)["workspaces"]) == 2


def test_the_duplicates_switch_beside_a_seed_file_overrides_its_settings(tmp_path: Path) -> None:
    """``sandbox serve --seed FILE --allow-duplicate-workspace-names`` must accept a seed
    with two workspaces of one name, as the switch overrides the seed's settings."""
    path = tmp_path / "twins.yaml"
    path.write_text(
        "users: [{username: a, email: a@x.example}]\nworkspaces: [{name: Twin}, {name: Twin}]\n"
    )
    with pytest.raises(SeedError, match="already used by workspaces"):
        load_seed_file(path)
    assert len(load_seed_file(path, allow_duplicate_workspace_names=True)["workspaces"]) == 2


def test_a_seed_applies_only_to_a_new_database(tmp_path: Path) -> None:
    db = str(tmp_path / "site.sqlite")
    first = {"users": [{"username": "a", "email": "a@x.example"}]}
    second = {
        "users": [{"username": "b", "email": "b@x.example"}],
        "workspaces": [{"name": "Late"}],
    }
    app = create_app(seed=first, db_path=db)
    app.sandbox.store.close()
    state = dump_state(create_app(seed=second, db_path=db).sandbox)
    assert [user["username"] for user in state["users"]] == ["a"] and state["workspaces"] == []


@pytest.mark.slow
def test_a_benchmark_sized_seed_loads_whole(tmp_path: Path) -> None:
    """How long it takes is the benchmarks' to say (``bench/bench_sandbox.py``): a stopwatch
    here fails on a busy machine, not on a slow loader."""
    path = tmp_path / "big.yaml"
    path.write_text(
        yaml.dump(synthetic_seed(5000, 1000, 200), Dumper=yaml.CSafeDumper), encoding="utf-8"
    )
    app = create_app(seed=load_seed_file(path), db_path=str(tmp_path / "big.sqlite"))
    counts = app.sandbox.store.counts()
    assert counts == {"users": 5000, "workspaces": 1000, "groups": 200}
    members = app.sandbox.store.workspace_member_ids()
    assert all(5 <= len(ids) <= 20 for ids in members.values()) and len(members) == 1000


def test_a_database_from_before_phone_ext_is_upgraded_in_place(tmp_path: Path) -> None:
    db = str(tmp_path / "site.sqlite")
    create_app(seed={"users": [{"username": "a", "email": "a@x.example"}]}, db_path=db)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("ALTER TABLE users DROP COLUMN phone_ext")  # as the first release wrote it
        conn.execute("ALTER TABLE users DROP COLUMN reset_password")
    store = create_app(db_path=db).sandbox.store
    new_id = store.add_user(
        NewUserRow(
            id=None, username="b", email="b@x.example", first_name="B", last_name="B",
            organization=None, phone="", phone_ext="7", admin=False, active=True,
            reset_password=True, permissions=frozenset(), notifications=frozenset(),
            api_key=None, signing_key=None,
        ),
        now=0,
    )  # fmt: skip
    old, new = store.users()
    assert (old.username, old.phone_ext, old.reset_password) == ("a", None, False)
    assert (new.id, new.phone_ext, new.reset_password) == (new_id, "7", True)
