"""The PostgreSQL backend's own promises: its schema, passwords, and a runner cut off from
the network. What both backends promise is in ``test_state_backends.py``."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.state.backend import Holder, LockLost, RecordStore, SaveInfo, Snapshot
from reconciler.state.locate import open_records, parse_location
from tests.support.postgres import (
    APP_ROLE,
    DATABASE,
    PostgresServer,
    libpq_environment,
    running_postgres,
)
from tests.support.tcp_proxy import TcpProxy

SITE = "https://acme.example.net"
INFO = SaveInfo("alice@runner-1", "applied")


@pytest.fixture
def opened() -> Iterator[list[RecordStore]]:
    records: list[RecordStore] = []
    yield records
    for each in records:
        each.close()


def records_at(url: str, opened: list[RecordStore], lease_seconds: float = 30) -> RecordStore:
    records = open_records(
        parse_location(url, base_dir=Path("/")), SITE, lease_seconds=lease_seconds
    )
    opened.append(records)
    return records


def fresh_schema() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


def test_the_schema_is_made_once_when_many_runners_start_together(
    postgres_server: PostgresServer, postgres_url: str, opened: list[RecordStore]
) -> None:
    runners = [records_at(postgres_url, opened) for _ in range(8)]
    start, failures = threading.Barrier(len(runners)), []

    def first_use(records: RecordStore) -> None:
        start.wait()
        try:
            records.load()
        except StateError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=first_use, args=(r,)) for r in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    schema = parse_location(postgres_url, base_dir=Path("/")).schema
    with postgres_server.admin() as admin:
        tables = admin.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            [schema],
        ).fetchall()
        versions = admin.execute(f"SELECT version FROM {schema}.schema_version").fetchall()
    assert sorted(t for (t,) in tables) == [
        "journal", "leases", "plan_keys", "schema_version", "versions",
    ]  # fmt: skip
    assert versions == [(1,)]


def test_a_second_schema_is_independent(
    postgres_server: PostgresServer, postgres_url: str, opened: list[RecordStore]
) -> None:
    team_a = records_at(postgres_url, opened)
    team_b = records_at(postgres_server.url(schema=fresh_schema()), opened)
    with team_a.lock(Holder.current("apply a")) as lease, team_b.lock(Holder.current("apply b")):
        team_a.save({"site": SITE}, expected_version=0, info=INFO, lease=lease)
        team_a.journal_append(lease, {"event": "intent"})
    assert team_b.load() == Snapshot(0, None)
    assert team_b.journal_entries() == []
    assert team_a.plan_key() != team_b.plan_key()


def test_records_changed_behind_the_tools_back_are_refused(
    postgres_server: PostgresServer, postgres_url: str, opened: list[RecordStore]
) -> None:
    records = records_at(postgres_url, opened)
    with records.lock(Holder.current("apply")) as lease:
        records.save({"site": SITE}, expected_version=0, info=INFO, lease=lease)
    schema = parse_location(postgres_url, base_dir=Path("/")).schema
    cases = {
        "'null'": "damaged: a JSON object was expected, found null",
        "'[1]'": "damaged: a JSON object was expected, found list",
        '\'{"site": "https://acme.example.net", "n": 1e5000}\'': "damaged",
        '\'{"site": "https://elsewhere.example"}\'': "belong to 'https://elsewhere.example'",
    }
    for stored, expected in cases.items():
        with postgres_server.admin() as admin:
            admin.execute(f"UPDATE {schema}.versions SET records = {stored}::jsonb")
        with pytest.raises(StateError) as refused:
            records.load()
        assert expected in refused.value.message
        assert "schema " + str(schema) in refused.value.message


def test_the_password_is_used_from_every_usual_source_and_never_shown(
    postgres_server: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    opened: list[RecordStore],
) -> None:
    good, schema = postgres_server.app_password, fresh_schema()
    base = f"{postgres_server.host}:{postgres_server.port}/{DATABASE}?schema={schema}"
    libpq_environment(monkeypatch, good)
    monkeypatch.delenv("PGPASSWORD")
    shown: list[str] = []

    # in the URL: it works, and the location shown and stored has no password
    inline = records_at(f"postgresql://{APP_ROLE}:{good}@{base}", opened)
    assert inline.load() == Snapshot(0, None)
    shown += [inline.location, repr(inline)]
    # a wrong one in the URL, then in PGPASSWORD: refused without repeating it
    for url, env in (
        (f"postgres://{APP_ROLE}:wrong-url-password@{base}", None),
        (f"postgresql://{APP_ROLE}@{base}", "wrong-env-password"),
    ):
        if env:
            monkeypatch.setenv("PGPASSWORD", env)
        with pytest.raises(StateError) as refused:
            records_at(url, opened).load()
        assert f"postgresql://{APP_ROLE}@{base}" in str(refused.value) or (
            f"postgres://{APP_ROLE}@{base}" in str(refused.value)
        )
        assert "password authentication failed" in str(refused.value)
        shown += [str(refused.value), repr(refused.value)]
    # PGPASSWORD and ~/.pgpass (here PGPASSFILE) work
    monkeypatch.setenv("PGPASSWORD", good)
    assert records_at(f"postgresql://{APP_ROLE}@{base}", opened).load() == Snapshot(0, None)
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"{postgres_server.host}:{postgres_server.port}:*:{APP_ROLE}:{good}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert records_at(f"postgresql://{APP_ROLE}@{base}", opened).load() == Snapshot(0, None)
    for text in shown:
        for password in (good, "wrong-url-password", "wrong-env-password"):
            assert password not in text


def test_an_unreachable_server_is_a_clear_error(opened: list[RecordStore]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    url = f"postgresql://someone:s3cret-pw@127.0.0.1:{port}/records"
    with pytest.raises(StateError) as refused:
        records_at(url, opened).load()
    message = str(refused.value)
    assert message.startswith(
        f"Cannot open the records: the PostgreSQL state database "
        f"postgresql://someone@127.0.0.1:{port}/records?schema=reconciler could not be reached"
    )
    assert "PGPASSWORD, ~/.pgpass" in message and "s3cret-pw" not in message


def test_a_holder_cut_off_from_the_database_loses_the_lock_and_its_late_writes_are_refused(
    postgres_server: PostgresServer, postgres_url: str, opened: list[RecordStore]
) -> None:
    schema = parse_location(postgres_url, base_dir=Path("/")).schema
    with TcpProxy(postgres_server.host, postgres_server.port) as proxy:
        cut_off = records_at(
            postgres_server.url(schema=schema, port=proxy.port), opened, lease_seconds=1.0
        )
        lease = cut_off.lock(Holder.current("apply through the proxy"))
        proxy.cut()
        started = time.monotonic()
        taker = records_at(postgres_url, opened)
        with taker.lock(Holder.current("apply"), wait_seconds=10) as taken:
            assert time.monotonic() - started < 1.0 + 1.5
            assert taken.took_over_from == lease.holder
            with pytest.raises(StateError, match="could not be reached"):
                cut_off.save({"site": SITE}, expected_version=0, info=INFO, lease=lease)
            proxy.heal()
            with pytest.raises(LockLost):
                cut_off.save({"site": SITE}, expected_version=0, info=INFO, lease=lease)
            with pytest.raises(LockLost):
                cut_off.journal_append(lease, {"event": "late"})
            assert taker.load() == Snapshot(0, None) and taker.journal_entries() == []
            assert taker.save({"site": SITE}, expected_version=0, info=INFO, lease=taken) == 1
        lease.release()  # a lost lease: released without error
    assert os.getpid() == lease.holder.pid


def test_a_role_that_may_not_create_the_schema_is_told_what_to_ask_for(
    postgres_server: PostgresServer,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[RecordStore],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing was ever saved, so a read finds no records (and says why); the first write
    names what to ask the DBA for."""
    role, password, schema = f"r_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex, fresh_schema()
    with postgres_server.admin() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    libpq_environment(monkeypatch, password)
    url = f"postgresql://{role}@{postgres_server.host}:{postgres_server.port}/{DATABASE}"
    records = records_at(f"{url}?schema={schema}", opened)
    assert records.load() == Snapshot(0, None)
    assert (
        "this database role may not create them: reading them as empty" in capsys.readouterr().err
    )
    with pytest.raises(StateError) as refused:
        records.lock(Holder.current("apply"))
    assert "permission denied for database" in refused.value.message
    assert f"CREATE SCHEMA {schema} AUTHORIZATION <role>" in str(refused.value.hint)


def test_a_read_only_role_before_the_first_save_reads_no_records(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch, opened: list[RecordStore]
) -> None:
    """docs/ci.md's reviewer role on a schema the writer has not used yet (the first pull
    request, before any run on main): a plan reads no records rather than failing; every
    write is refused, and the schema is left as the DBA made it."""
    reader, password, schema = f"r_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex, fresh_schema()
    with postgres_server.admin() as admin:
        admin.execute(f"CREATE ROLE {reader} LOGIN PASSWORD '{password}'")
        admin.execute(f"CREATE SCHEMA {schema} AUTHORIZATION {APP_ROLE}")
        admin.execute(f"GRANT USAGE ON SCHEMA {schema} TO {reader}")
    libpq_environment(monkeypatch, password)
    url = f"postgresql://{reader}@{postgres_server.host}:{postgres_server.port}/{DATABASE}"
    records = records_at(f"{url}?schema={schema}", opened)
    assert records.load() == Snapshot(0, None)
    assert (records.history(), records.journal_entries()) == ([], [])
    assert records.plan_key(create=False) is None
    with pytest.raises(StateError) as refused:
        records.lock(Holder.current("apply"))
    assert "Cannot create the records' tables" in refused.value.message
    # the schema is there: the hint says whose it is, never to create it again
    assert refused.value.hint == (
        f"The schema {schema!r} belongs to {APP_ROLE}, and {reader} may not create tables in "
        f"it: the first run with {APP_ROLE}'s credentials creates them (docs/ci.md: the "
        f"writer's role), or the DBA lets {reader} do it: GRANT CREATE ON SCHEMA {schema} TO "
        f"{reader}."
    )
    with postgres_server.admin() as admin:
        tables = admin.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = %s", [schema]
        ).fetchone()
    assert tables == (0,)


@pytest.mark.slow
def test_a_journal_entry_survives_a_database_crash_right_after_it_was_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server running with ``synchronous_commit = off`` (as this test server does, and some
    production ones) acknowledges a commit before it is on disk: a crash a moment later loses
    it. The journal says which writes may have reached the site; it must never be lost."""
    with running_postgres() as server:
        libpq_environment(monkeypatch, server.app_password)
        lost = 0
        for attempt in range(5):
            location = parse_location(server.url(schema=f"crash{attempt}"), base_dir=Path("/"))
            records = open_records(location, SITE)
            lease = records.lock(Holder.current("apply (test)"))
            records.journal_append(lease, {"event": "intent", "n": attempt})
            server.stop()  # at once: a crash, a failover
            server.start()
            with open_records(location, SITE) as fresh:
                lost += not any(e.get("n") == attempt for e in fresh.journal_entries())
            with contextlib.suppress(StateError):
                records.close()
        assert lost == 0, f"{lost} of 5 journal entries lost in a crash"


def test_a_lease_token_at_the_end_of_bigint_is_one_clear_error(
    postgres_server: PostgresServer, postgres_url: str, opened: list[RecordStore]
) -> None:
    records = records_at(postgres_url, opened)
    with records.lock(Holder.current("apply")):
        pass
    schema = postgres_url.rsplit("schema=", 1)[1]
    with postgres_server.admin() as admin:
        admin.execute(f"UPDATE {schema}.leases SET token = 9223372036854775807")
    with pytest.raises(StateError) as refused:
        records.lock(Holder.current("apply"))
    assert "Cannot lock the records" in refused.value.message
    assert "bigint out of range" in refused.value.message
    assert "Traceback" not in str(refused.value) and len(str(refused.value)) < 1_000
