"""PgBouncer in transaction mode in front of the test server: the pooler many teams put
between their CI jobs and PostgreSQL, which keeps no session state between transactions.

Its pool is two server connections, so the records' connection, the lease heartbeat and other
runners keep landing on each other's server sessions: anything the backend left in a session
(a prepared statement, a ``SET``, a session advisory lock) would show. Started once per
session with the Debian ``pgbouncer`` binary, as the ``postgres`` user when we are root; the
pooled tests skip with one line when it is not installed.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.postgres import (
    APP_ROLE,
    DATABASE,
    PostgresServer,
    free_port,
    libpq_environment,
)

PGBOUNCER_HINT = (
    "Tests through a transaction pooler need PgBouncer: install the Debian package "
    "`pgbouncer` (apt-get install pgbouncer)."
)


@pytest.fixture(scope="session")
def pgbouncer_port(postgres_server: PostgresServer) -> Iterator[int]:
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(binary).exists():
        pytest.skip(PGBOUNCER_HINT)
    base = Path(tempfile.mkdtemp(prefix="reconciler-pgbouncer-"))
    port = free_port()
    (base / "users.txt").write_text(f'"{APP_ROLE}" "{postgres_server.app_password}"\n')
    (base / "pgbouncer.ini").write_text(
        f"[databases]\n{DATABASE} = host={postgres_server.host} port={postgres_server.port} "
        f"dbname={DATABASE}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = scram-sha-256\nauth_file = {base / 'users.txt'}\n"
        "pool_mode = transaction\ndefault_pool_size = 2\nmax_client_conn = 200\n"
        f"logfile = {base / 'pgbouncer.log'}\npidfile = {base / 'pgbouncer.pid'}\n"
    )
    as_server: dict[str, Any] = {}
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        for path in (base, base / "users.txt", base / "pgbouncer.ini"):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        # the process is PgBouncer itself, not ``runuser``: that one, sent SIGTERM, passes
        # it on and waits two seconds before it kills its child, at the end of every worker
        as_server = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}
    process = subprocess.Popen(
        [binary, str(base / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **as_server,
    )
    try:
        _wait_until_it_answers(port, postgres_server.app_password)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(base, ignore_errors=True)


def _wait_until_it_answers(port: int, password: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            psycopg.connect(
                host="127.0.0.1",
                port=port,
                user=APP_ROLE,
                password=password,
                dbname=DATABASE,
                sslmode="disable",
            ).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture
def pooled_postgres_url(
    postgres_server: PostgresServer, pgbouncer_port: int, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Like ``postgres_url``, through PgBouncer in transaction mode."""
    libpq_environment(monkeypatch, postgres_server.app_password)
    schema = f"t_{os.urandom(6).hex()}"
    return postgres_server.url(schema=schema, port=pgbouncer_port)
