"""A real PostgreSQL server for the tests: one per test run, shared by every worker.

The server binaries come from the Debian ``postgresql`` package (``/usr/lib/postgresql/*/bin``).
PostgreSQL refuses to run as root, so under root (as CI runs here) ``initdb`` and the server run
as the unprivileged ``postgres`` system user, in a directory it owns. The server listens on a
free 127.0.0.1 port only (no Unix socket) and asks for passwords (scram-sha-256), so tests see
the password travel through ``PGPASSWORD`` as a user's would. Durability settings are off:
the tests exercise behaviour, not the disk.

``initdb`` runs once per test run, into a template cluster (roles and database made); every
server of the run is a copy of it, started on its own port. The first worker that needs the
shared server starts it, under a lock in the run's directory (``RUN_DIRECTORY``, made by the
controller, see ``tests/conftest.py``); the others read where it is; the controller stops it
when the run ends, and a later run stops a server whose run was killed before it could.
A test that crashes its server on purpose starts its own copy (``running_postgres``).

Without the binaries the PostgreSQL tests skip with one line saying how to enable them, except
under ``CI=true``, where they fail: CI must never pass by skipping them.

Each test gets a fresh schema (``postgres_url``), so tests never see each other's rows
and nobody pays for a new database.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
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
RUN_DIRECTORY = "RECONCILER_TEST_RUN"
"""The environment variable naming the test run's shared directory (workers inherit it)."""


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    admin_password: str
    app_password: str  # the password of APP_ROLE, owner of DATABASE: what the tool uses
    data_dir: str = ""  # for ``stop``/``start``: a test that restarts its own server
    log_file: str = ""
    options: str = ""

    def stop(self, mode: str = "immediate") -> None:
        """Stop the server, by default at once (connections are cut, as in a crash or a
        failover); ``fast`` shuts it down cleanly."""
        bindir = server_binaries()
        assert bindir is not None and self.data_dir
        _run([str(bindir / "pg_ctl"), "-D", self.data_dir, "-m", mode, "stop"])

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

    def admin(self, dbname: str = DATABASE) -> psycopg.Connection[tuple[object, ...]]:
        """A superuser connection, for tests to look at what the tool left."""
        return psycopg.connect(
            host=self.host,
            port=self.port,
            user=SUPERUSER,
            password=self.admin_password,
            dbname=dbname,
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


@dataclass(frozen=True)
class ClusterTemplate:
    """A stopped cluster, its roles and database made: copied, it is a new server in
    a fraction of ``initdb``'s time."""

    data_dir: Path
    admin_password: str
    app_password: str


def make_cluster_template(base: Path) -> ClusterTemplate:
    """``initdb`` into ``base/data`` (a new directory), make the app role and database, stop."""
    bindir = _binaries()
    base.mkdir()
    admin_password, app_password = secrets.token_hex(12), secrets.token_hex(12)
    (base / "pwfile").write_text(admin_password + "\n")
    _give_to_server_user(base, base / "pwfile")
    data = base / "data"
    _run(
        [str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--pwfile",
         str(base / "pwfile"), "--auth=scram-sha-256", "-E", "UTF8", "--no-sync"]
    )  # fmt: skip
    template = ClusterTemplate(data, admin_password, app_password)
    started = _started(template, base, durable=False, stop="fast")
    with started as server, server.admin("postgres") as conn:
        conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN PASSWORD '{app_password}'")
        conn.execute(f"CREATE DATABASE {DATABASE} OWNER {APP_ROLE}")
    return template


@contextmanager
def running_postgres(
    *, durable: bool = False, template: ClusterTemplate | None = None
) -> Iterator[PostgresServer]:
    """A new server in a temporary directory, with ``DATABASE`` owned by ``APP_ROLE``;
    stopped and removed on leaving. ``PostgresUnavailable`` without the binaries. Tests run
    it without fsync; benchmarks ask for a ``durable`` one, as a production server is.
    From ``template`` (else the run's, made on first use; else a fresh ``initdb``)."""
    base = Path(tempfile.mkdtemp(prefix="reconciler-pg-"))
    try:
        _give_to_server_user(base)
        template = template or run_cluster_template() or make_cluster_template(base / "template")
        with _started(template, base, durable=durable) as server:
            yield server
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextmanager
def _started(
    template: ClusterTemplate, base: Path, *, durable: bool, stop: str = "immediate"
) -> Iterator[PostgresServer]:
    """A copy of ``template`` (or the template itself, when it lives in ``base``) started on a
    free port; stopped on leaving."""
    server = start_server(template, base, durable=durable)
    try:
        yield server
    finally:
        server.stop(stop)


def start_server(template: ClusterTemplate, base: Path, *, durable: bool) -> PostgresServer:
    """Start a copy of ``template`` in ``base/data`` (the template itself when it is there)."""
    bindir = _binaries()
    base.mkdir(exist_ok=True)
    _give_to_server_user(base)
    data = base / "data"
    if data != template.data_dir:
        _run(["cp", "-a", str(template.data_dir), str(data)])
    port = free_port()
    settings = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories='' "
        "-c max_connections=200"
    )
    if not durable:
        settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    log = base / "server.log"
    _run(
        [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "30", "-o",
         settings, "start"]
    )  # fmt: skip
    return PostgresServer(
        "127.0.0.1", port, template.admin_password, template.app_password, str(data), str(log),
        settings,
    )  # fmt: skip


def _binaries() -> Path:
    bindir = server_binaries()
    if bindir is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        raise PostgresUnavailable(SERVER_PACKAGE_HINT)
    return bindir


def _give_to_server_user(*paths: Path) -> None:
    if os.geteuid() == 0:
        server_user = pwd.getpwnam("postgres")
        for path in paths:
            os.chown(path, server_user.pw_uid, server_user.pw_gid)


# --- one server per test run ----------------------------------------------------------------


RUN_PREFIX = "reconciler-test-run-"


@contextmanager
def shared_run_directory() -> Iterator[Path]:
    """The run's shared directory, in ``RUN_DIRECTORY`` for the workers the run starts; on
    leaving, the run's server is stopped and the directory removed. A run killed before it
    could stop its server leaves it to the next run, which stops it first."""
    _stop_servers_of_dead_runs()
    run_dir = Path(tempfile.mkdtemp(prefix=RUN_PREFIX))
    run_dir.chmod(0o711)  # the server user reaches its own directories inside
    (run_dir / "owner").write_text(str(os.getpid()))
    os.environ[RUN_DIRECTORY] = str(run_dir)
    try:
        yield run_dir
    finally:
        os.environ.pop(RUN_DIRECTORY, None)
        stop_shared_server(run_dir)
        shutil.rmtree(run_dir, ignore_errors=True)


def _stop_servers_of_dead_runs() -> None:
    for run_dir in Path(tempfile.gettempdir()).glob(RUN_PREFIX + "*"):
        try:
            os.kill(int((run_dir / "owner").read_text()), 0)
        except ProcessLookupError:  # its run is gone
            stop_shared_server(run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
        except (OSError, ValueError):  # being made, or not ours to judge
            continue


def run_directory() -> Path | None:
    """The test run's shared directory, when the run made one (``tests/conftest.py``)."""
    given = os.environ.get(RUN_DIRECTORY)
    return Path(given) if given else None


@contextmanager
def _run_lock(run_dir: Path) -> Iterator[None]:
    """One worker at a time makes or reads the run's PostgreSQL files."""
    with open(run_dir / "postgres.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run_cluster_template() -> ClusterTemplate | None:
    """The run's template cluster, made by the first worker that asks; None outside a run."""
    run_dir = run_directory()
    if run_dir is None:
        return None
    with _run_lock(run_dir):
        return _cluster_template(run_dir)


def _cluster_template(run_dir: Path) -> ClusterTemplate:
    described = run_dir / "postgres-template.json"
    if described.exists():
        fields = json.loads(described.read_text())
        return ClusterTemplate(Path(fields.pop("data_dir")), **fields)
    template = make_cluster_template(run_dir / "postgres-template")
    fields = {**dataclasses.asdict(template), "data_dir": str(template.data_dir)}
    _write_private(described, fields)
    return template


def shared_server() -> PostgresServer:
    """The run's one server, started by the first worker that asks (without a run directory,
    as under ``-p no:xdist`` from another conftest, the caller owns a server of its own)."""
    run_dir = run_directory()
    assert run_dir is not None, f"{RUN_DIRECTORY} is set by tests/conftest.py"
    with _run_lock(run_dir):
        described = run_dir / "postgres-server.json"
        if described.exists():
            return PostgresServer(**json.loads(described.read_text()))
        server = start_server(_cluster_template(run_dir), run_dir / "shared", durable=False)
        _write_private(described, dataclasses.asdict(server))
        return server


def _write_private(path: Path, fields: dict[str, object]) -> None:
    """Passwords inside: readable by this user only."""
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        json.dump(fields, file)


def stop_shared_server(run_dir: Path) -> None:
    """At the end of a run (or after a run that was killed): stop its server if it runs."""
    described = run_dir / "postgres-server.json"
    if described.exists():
        server = PostgresServer(**json.loads(described.read_text()))
        if _postmaster_alive(Path(server.data_dir)):
            server.stop()


def _postmaster_alive(data_dir: Path) -> bool:
    """Whether the server of ``data_dir`` still runs: a machine restarted under a killed run
    leaves its ``postmaster.pid`` naming a process that is gone (and ``pg_ctl stop`` fails)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return False  # no file, no such process, or a file cut short
    return True


IN_CI = os.environ.get("CI") == "true"
"""Read once, when the test session imports this module: every test runs with ``CI`` removed
from its environment (``tests/conftest.py``), since the tool itself reads it."""


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    """The run's one server; skipped without binaries, failed under CI=true."""
    try:
        return shared_server()
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
