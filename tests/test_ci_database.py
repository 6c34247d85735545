"""docs/ci.md's database set-up, run exactly as the doc writes it, against a real PostgreSQL:
the writer's role starts the records, the reviewer's only reads them.

The statements, the roles' passwords (the doc's placeholder) and the ``RECONCILER_STATE`` URLs
are read from the doc, never copied here; the one thing filled in is what the doc leaves to
its reader: the server's address and database in the URLs. The statements create the roles
``reconciler`` and ``reconciler_review``, which belong to the whole cluster, so each test has
a server of its own. The commands are the real CLI against the sandbox on loopback.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from tests.support.ci_pipelines import database_setup, state_urls
from tests.support.cli_runner import CliOutcome
from tests.support.loopback import LoopbackSite
from tests.support.postgres import (
    DATABASE,
    PostgresServer,
    libpq_environment,
    running_postgres,
)

ROLES = ("reviewer", "writer")


@dataclass
class DocDatabase:
    """A server set up as docs/ci.md says, and the site, run as either role."""

    server: PostgresServer
    site: LoopbackSite
    monkeypatch: pytest.MonkeyPatch
    urls: dict[str, str]
    passwords: dict[str, str]

    def run(self, role: str, *args: str) -> CliOutcome:
        """``reconciler ARGS`` with ``role``'s ``RECONCILER_STATE`` and ``PGPASSWORD``."""
        libpq_environment(self.monkeypatch, self.passwords[role])
        self.monkeypatch.setenv("RECONCILER_STATE", self.urls[role])
        return self.site.run(*args)

    def keys_the_reviewer_reads(self) -> int:
        user = re.search(r"postgresql://(\w+)@", self.urls["reviewer"])
        assert user is not None
        with psycopg.connect(
            host=self.server.host,
            port=self.server.port,
            user=user[1],
            password=self.passwords["reviewer"],
            dbname=DATABASE,
            sslmode="disable",
            autocommit=True,
        ) as conn:
            schema = self.urls["reviewer"].rsplit("schema=", 1)[1]
            row = conn.execute(f"SELECT count(*) FROM {schema}.plan_keys").fetchone()
        return int(row[0]) if row else 0


@pytest.fixture
def doc_database(site: LoopbackSite, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocDatabase]:
    statements = database_setup()
    passwords = dict(re.findall(r"CREATE ROLE (\w+) LOGIN PASSWORD '([^']*)'", statements))
    with running_postgres() as server:
        with server.admin() as admin:
            admin.execute(statements)  # as the DBA pastes them: one script
        urls: dict[str, str] = {}
        secrets_of: dict[str, str] = {}
        for role, url in zip(ROLES, state_urls(), strict=True):
            user = re.search(r"postgresql://(\w+)@", url)
            assert user is not None and user[1] in passwords, url
            urls[role] = url.replace("@HOST:5432/DB?", f"@{server.host}:{server.port}/{DATABASE}?")
            secrets_of[role] = passwords[user[1]]
        yield DocDatabase(server, site, monkeypatch, urls, secrets_of)


def test_the_writer_starts_the_records_and_the_reviewer_only_reads(
    doc_database: DocDatabase, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: with the doc's statements as written, the writer's first apply failed
    "permission denied for database" (the tool asked to create the schema the DBA had
    made), and the hint said to make it."""
    monkeypatch.delenv("RECONCILER_PLAN_KEY", raising=False)
    early = doc_database.run("reviewer", "plan", "site.yaml", "--detailed-exitcode")
    assert early.returncode == EXIT_CHANGES, early.stderr  # before the first run on main
    assert "reading them as empty" in early.stderr

    first = doc_database.run("writer", "apply", "site.yaml", "--auto-approve")
    assert first.returncode == EXIT_OK, first.stderr
    assert "Payments" in site.workspaces()

    review = doc_database.run("reviewer", "plan", "site.yaml", "--detailed-exitcode")
    assert review.returncode == EXIT_OK, review.stdout + review.stderr  # it reads the records

    sealed = doc_database.run("reviewer", "plan", "site.yaml", "-o", "plan.json")
    assert sealed.returncode == EXIT_REFUSED, sealed.stdout + sealed.stderr
    assert "reconciler_review" in sealed.stderr
    assert not (site.workdir / "plan.json").exists()
    assert doc_database.keys_the_reviewer_reads() == 0

    text = (site.workdir / "site.yaml").read_text(encoding="utf-8")
    site.write_manifest("site.yaml", text.replace("  - name: Payments\n", "  - name: Pay\n"))
    before = site.state()
    for write in (("apply", "site.yaml", "--auto-approve"), ("state", "forget", "workspace",
                  "Payments", "site.yaml")):  # fmt: skip
        refused = doc_database.run("reviewer", *write)
        assert refused.returncode == EXIT_ERROR, refused.stdout + refused.stderr
        assert "permission denied for table" in refused.stderr
        assert "run the command with the writer's role" in refused.stderr
        assert "CREATE SCHEMA" not in refused.stderr
    assert site.state() == before

    monkeypatch.setenv("RECONCILER_PLAN_KEY", secrets.token_urlsafe(32))  # as the CI gives it
    planned = doc_database.run("writer", "plan", "site.yaml", "-o", "plan.json")
    assert planned.returncode == EXIT_OK, planned.stderr
    applied = doc_database.run("writer", "apply", "plan.json", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert "Pay" in site.workspaces()


def test_a_writers_refused_local_plan_leaves_the_reviewer_no_key(
    doc_database: DocDatabase, site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42: a local `plan -o` without RECONCILER_PLAN_KEY, refused because the reviewer
    can read the records' keys, stored the key first; the reviewer copied it, and after the
    REVOKE the message asked for, sealed a plan with it. Nothing is stored now, and the
    REVOKE the hint gives, run as given, is what lets the writer seal locally."""
    monkeypatch.delenv("RECONCILER_PLAN_KEY", raising=False)
    assert doc_database.run("writer", "apply", "site.yaml", "--auto-approve").returncode == 0
    local = doc_database.run("writer", "plan", "site.yaml", "-o", "plan.json")
    assert local.returncode == EXIT_REFUSED, local.stdout + local.stderr
    assert "reconciler_review" in local.stderr
    assert doc_database.keys_the_reviewer_reads() == 0
    revoke = re.search(r"REVOKE SELECT ON \S+ FROM [\w, ]+", local.stderr)
    assert revoke is not None, local.stderr
    with doc_database.server.admin() as admin:
        admin.execute(revoke[0])
    again = doc_database.run("writer", "plan", "site.yaml", "-o", "plan.json")
    assert again.returncode == EXIT_OK, again.stderr
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        doc_database.keys_the_reviewer_reads()
