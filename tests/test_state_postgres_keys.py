"""The PostgreSQL records' plan keys are kept only where no reader of the records can read
them: a role that reads a key can seal plans that apply accepts.

Against the run's real PostgreSQL server: the writer is the tool's usual role, the readers
are roles made here with the grants a DBA gives a reporting role, a backup user or docs/ci.md's
reviewer. docs/ci.md's own statements are tests/test_ci_database.py's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from reconciler.errors import RefusedForSafety
from reconciler.state.backend import Holder, RecordStore, SaveInfo
from reconciler.state.locate import open_records, parse_location
from reconciler.state.migrate import copy_site
from tests.support.postgres import APP_ROLE, DATABASE, PostgresServer

SITE = "https://acme.example.net"


@dataclass
class Reader:
    """A login role that reads the records' schema, never writes it."""

    name: str
    password: str
    server: PostgresServer

    def keys(self, schema: str) -> int:
        """How many plan keys this role reads (``InsufficientPrivilege`` when it may not)."""
        with psycopg.connect(
            host=self.server.host,
            port=self.server.port,
            user=self.name,
            password=self.password,
            dbname=DATABASE,
            sslmode="disable",
            autocommit=True,
        ) as conn:
            row = conn.execute(f"SELECT count(*) FROM {schema}.plan_keys").fetchone()
        return int(row[0]) if row else 0


@pytest.fixture
def schema(postgres_url: str) -> str:
    return postgres_url.rsplit("schema=", 1)[1]


@pytest.fixture
def records(postgres_url: str) -> Iterator[RecordStore]:
    """The writer's records, their tables made (as the first run on main leaves them)."""
    store = open_records(parse_location(postgres_url, base_dir=Path("/")), SITE)
    store.load()
    yield store
    store.close()


@pytest.fixture
def reader(postgres_server: PostgresServer, schema: str) -> Reader:
    """A login role with the schema's USAGE (the schema made for the writer if need be)."""
    name, password = f"reader_{schema}", uuid.uuid4().hex
    with postgres_server.admin() as admin:
        admin.execute(f"CREATE SCHEMA IF NOT EXISTS {schema} AUTHORIZATION {APP_ROLE}")
        admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{password}'")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {name}")
    return Reader(name, password, postgres_server)


def grant(server: PostgresServer, statement: str) -> None:
    with server.admin() as admin:
        admin.execute(statement)


def test_a_refused_plan_key_is_never_stored_where_a_reader_can_read_it(
    postgres_server: PostgresServer, records: RecordStore, reader: Reader, schema: str
) -> None:
    """Issue 42: a local `plan -o` refused because a reader could read the key had stored
    it first; the reader copied it, and after the REVOKE the message asked for, sealed plans
    with it. The readers are checked before the key is stored, in that transaction."""
    grant(postgres_server, f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {reader.name}")
    with pytest.raises(RefusedForSafety) as refused:
        records.plan_key()
    assert reader.name in refused.value.message
    assert reader.keys(schema) == 0
    with postgres_server.admin() as admin:
        assert admin.execute(f"SELECT count(*) FROM {schema}.plan_keys").fetchone() == (0,)


def test_a_key_a_reader_could_read_is_discarded_and_a_new_one_made_after_the_revoke(
    postgres_server: PostgresServer, records: RecordStore, reader: Reader, schema: str
) -> None:
    """A reporting role granted SELECT on the schema after the key was made could read the
    key and seal plans. It may have copied it: the key is refused and discarded, and once
    the grant is revoked, as the hint says, a new key is made."""
    first = records.plan_key()
    assert first is not None  # only the writer can read it: fine
    grant(postgres_server, f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {reader.name}")
    with pytest.raises(RefusedForSafety) as refused:
        records.plan_key(create=False)
    assert reader.name in refused.value.message
    assert "The key kept there was discarded" in refused.value.message
    assert "RECONCILER_PLAN_KEY" in str(refused.value.hint)
    assert reader.keys(schema) == 0
    revoke = f"REVOKE SELECT ON {schema}.plan_keys FROM {reader.name}"
    assert revoke in str(refused.value.hint)
    grant(postgres_server, revoke)
    assert records.plan_key(create=False) is None  # plans sealed with it: refused
    second = records.plan_key()
    assert second is not None and second != first


@pytest.mark.parametrize(
    "given",
    [
        "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO PUBLIC",
        "CREATE ROLE auditors_{schema}; GRANT auditors_{schema} TO {reader};"
        " GRANT SELECT ON {schema}.plan_keys TO auditors_{schema}",
        "GRANT SELECT (key) ON {schema}.plan_keys TO {reader}",
    ],
    ids=["public", "through-a-group", "the-column"],
)
def test_the_hint_names_the_grant_that_lets_them_read_and_running_it_is_enough(
    postgres_server: PostgresServer, records: RecordStore, reader: Reader, schema: str, given: str
) -> None:
    """A REVOKE from the reader itself changes nothing when it reads through PUBLIC or a
    group, and a grant on the key's column alone is a grant all the same: the hint's
    statement, run as given, is what makes the records' key usable."""
    grant(postgres_server, given.format(schema=schema, reader=reader.name))
    with pytest.raises(RefusedForSafety) as refused:
        records.plan_key()
    assert reader.name in refused.value.message
    assert reader.keys(schema) == 0
    hint = str(refused.value.hint)
    statement = hint[hint.index("REVOKE ") :].rstrip(".")
    grant(postgres_server, statement)
    assert records.plan_key() is not None
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        reader.keys(schema)


def test_a_copy_into_records_a_reader_can_read_leaves_the_plan_key_behind(
    postgres_server: PostgresServer, postgres_url: str, reader: Reader, schema: str, tmp_path: Path
) -> None:
    """`state push` into docs/ci.md's set-up (a reviewer reads every table the writer makes):
    the versions are copied; the key is not, and the summary says why."""
    grant(
        postgres_server,
        f"ALTER DEFAULT PRIVILEGES FOR ROLE {APP_ROLE} IN SCHEMA {schema} "
        f"GRANT SELECT ON TABLES TO {reader.name}",
    )
    runner = open_records(parse_location(str(tmp_path / "state"), base_dir=tmp_path), SITE)
    shared = open_records(parse_location(postgres_url, base_dir=tmp_path), SITE)
    try:
        with runner.lock(Holder.current("apply")) as lease:
            runner.save({"site": SITE}, expected_version=0, info=SaveInfo("bob", "x"), lease=lease)
        summary = copy_site(runner, shared, holder=Holder.current("state push"), force=False)
        assert shared.load().version == 1
        assert reader.keys(schema) == 0
        assert "version 1, saved" in summary and "and its plan key" not in summary
        assert "The plan key was not copied. No plan key can be kept in" in summary
        assert reader.name in summary
    finally:
        shared.close()
