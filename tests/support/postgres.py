"""A real PostgreSQL server for the tests, started once per session in a temporary directory.

The server binaries come from the Debian ``postgresql`` package (``/usr/lib/postgresql/*/bin``).
PostgreSQL refuses to run as root, so under root (as CI runs here) ``initdb`` and the server run
as the unprivileged ``postgres`` system user, in a directory it owns. The server listens on a
free 127.0.0.1 port only (no Unix socket) and asks for passwords (scram-sha-256), so tests see
the password travel through ``PGPASSWORD`` as a user's would. Durability settings are off:
the tests exercise behaviour, not the disk.

Without the binaries the PostgreSQL tests skip with one line saying how to enable them, except
under ``CI=true``, where they fail: CI must never pass by skipping them.

Each test gets a fresh schema (``postgres_url``), so tests never see each other's rows
and nobody pays for a new database.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

SERVER_PACKAGE_HINT = (
    "PostgreSQL state tests need the PostgreSQL server binaries: "
    "install the Debian package `postgresql` (apt-get install postgresql)."
)
SUPERUSER = "reconciler_admin"
APP_ROLE = "reconciler_app"
DATABASE = "reconciler_records"


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    admin_password: str
    app_password: str  # the password of APP_ROLE, owner of DATABASE: what the tool uses
    data_dir: str = ""  # for ``stop``/``start``: a test that restarts its own server
    log_file: str = ""
    options: str = ""

    def stop(self) -> None:
        """Stop the server at once (connections are cut, as in a crash or a failover)."""
        bindir = server_binaries()
        assert bindir is not None and self.data_dir
        _run([str(bindir / "pg_ctl"), "-D", self.data_dir, "-m", "immediate", "stop"])

    def start(self) -> None:
        bindir = server_binaries()
        assert bindir is not None and self.data_dir
        _run(
            [str(bindir / "pg_ctl"), "-D", self.data_dir, "-l", self.log_file, "-w", "-t", "30",
             "-o", self.options, "start"]
        )  # fmt: skip

    def url(self, *, schema: str | None = None, port: int | None = None) -> str:
        """The tool's URL for the records database, without the password (it comes from
        ``PGPASSWORD``), optionally through another ``port`` (a proxy)."""
        query = f"?schema={schema}" if schema else ""
        return f"postgresql://{APP_ROLE}@{self.host}:{port or self.port}/{DATABASE}{query}"

    def admin(self) -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection, for tests to look at what the tool left."""
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=SUPERUSER,
            password=self.admin_password,
            dbname=DATABASE,
            sslmode="disable",
            autocommit=True,
        )


def server_binaries() -> Path | None:
    """The newest installed PostgreSQL's ``bin`` directory, or ``None``."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def as_server_user(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` system user when we are root (the server refuses root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str]) -> None:
    done = subprocess.run(as_server_user(command), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


@contextmanager
def running_postgres(*, durable: bool = False) -> Iterator[PostgresServer]:
    """A new server in a temporary directory, with ``DATABASE`` owned by ``APP_ROLE``;
    stopped and removed on leaving. ``PostgresUnavailable`` without the binaries. Tests run
    it without fsync; benchmarks ask for a ``durable`` one, as a production server is."""
    bindir = server_binaries()
    if bindir is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        raise PostgresUnavailable(SERVER_PACKAGE_HINT)
    base = Path(tempfile.mkdtemp(prefix="reconciler-pg-"))
    data = base / "data"
    admin_password, app_password = secrets.token_hex(12), secrets.token_hex(12)
    (base / "pwfile").write_text(admin_password + "\n")
    if os.geteuid() == 0:
        server_user = pwd.getpwnam("postgres")
        for path in (base, base / "pwfile"):
            os.chown(path, server_user.pw_uid, server_user.pw_gid)
    port = free_port()
    settings = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories='' "
        "-c max_connections=200"
    )
    if not durable:
        settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    try:
        _run(
            [str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--pwfile",
             str(base / "pwfile"), "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"]
        )  # fmt: skip
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-w",
             "-t", "30", "-o", settings, "start"]
        )  # fmt: skip
        server = PostgresServer(
            "127.0.0.1",
            port,
            admin_password,
            app_password,
            str(data),
            str(base / "server.log"),
            settings,
        )
        with psycopg.connect(
            host=server.host, port=port, user=SUPERUSER, password=admin_password,
            dbname="postgres", sslmode="disable", autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN PASSWORD '{app_password}'")
            conn.execute(f"CREATE DATABASE {DATABASE} OWNER {APP_ROLE}")
        yield server
    finally:
        if (data / "postmaster.pid").exists():
            _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"])
        shutil.rmtree(base, ignore_errors=True)


IN_CI = os.environ.get("CI") == "true"
"""Read once, when the test session imports this module: every test runs with ``CI`` removed
from its environment (``tests/conftest.py``), since the tool itself reads it."""


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server for the whole session; skipped without binaries, failed under CI=true."""
    try:
        with running_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        if IN_CI:
            pytest.fail(f"{exc} (CI=true: these tests must run, not skip)")
        pytest.skip(str(exc))


def libpq_environment(monkeypatch: pytest.MonkeyPatch, password: str) -> None:
    """Only ``PGPASSWORD`` of libpq's variables: a developer's ``PGSSLMODE``, ``PGSERVICE``
    or ``PGHOST`` must not change what the tests connect to."""
    for name in [name for name in os.environ if name.startswith("PG")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PGPASSWORD", password)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """The URL of a fresh schema of the records database, as a user writes it (``--state``);
    the password is in ``PGPASSWORD`` as a CI job would give it (child processes inherit it)."""
    libpq_environment(monkeypatch, postgres_server.app_password)
    return postgres_server.url(schema=f"t_{uuid.uuid4().hex[:12]}")
