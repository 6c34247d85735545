"""``sandbox serve --tls`` and the client's ``--ca-file``: the exact ``https://`` signing the
service requires, tried against a local site whose certificate a throw-away authority signed."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR
from reconciler.sandbox.server import running_sandbox
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import EXAMPLE_SEED, EXAMPLE_SITE, LoopbackSite, serving_in_thread


@pytest.fixture
def https_site(tmp_path: Path) -> Iterator[LoopbackSite]:
    """The sandbox served over HTTPS as ``sandbox serve --tls`` serves it (in a thread)."""
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    log = tmp_path / "sandbox-server.log"
    with serving_in_thread(EXAMPLE_SEED, None, log_path=log, tls_dir=tmp_path / "tls") as url:
        yield LoopbackSite(url, tmp_path)


@pytest.mark.e2e
def test_an_https_sandbox_is_trusted_through_its_ca_file(tmp_path: Path) -> None:
    """The command itself: ``sandbox serve --tls`` writes the authority and a private key."""
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with running_sandbox(EXAMPLE_SEED, tls_dir=tmp_path / "tls") as url:
        https_site = LoopbackSite(url, tmp_path)
        ca_file = https_site.workdir / "tls" / "ca.pem"
        assert https_site.url.startswith("https://127.0.0.1:")
        planned = https_site.run(
            "plan", "site.yaml", "--ca-file", str(ca_file), "--detailed-exitcode"
        )
    assert planned.returncode == EXIT_CHANGES, planned.stderr
    assert "Plan: 14 to create" in planned.stdout
    server_key = https_site.workdir / "tls" / "server.pem"
    assert stat.S_IMODE(server_key.stat().st_mode) == 0o600


def test_the_ca_file_can_come_from_the_environment(https_site: LoopbackSite) -> None:
    env = {**https_site.env, "RECONCILER_CA_FILE": str(https_site.workdir / "tls" / "ca.pem")}
    planned = run_reconciler(
        "plan", "site.yaml", "--detailed-exitcode", cwd=https_site.workdir, env=env
    )
    https_site.transcript += [planned.stdout, planned.stderr]
    assert planned.returncode == EXIT_CHANGES, planned.stderr


@pytest.mark.slow
def test_without_the_ca_file_the_certificate_is_refused_in_one_message(
    https_site: LoopbackSite,
) -> None:
    refused = https_site.run("plan", "site.yaml")
    assert refused.returncode == EXIT_ERROR
    assert "certificate verify failed" in refused.stderr.lower()
    assert "give its authority's certificate with --ca-file" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("content", [None, "not a certificate\n"], ids=["missing", "garbage"])
def test_an_unusable_ca_file_is_one_clear_error(
    https_site: LoopbackSite, content: str | None
) -> None:
    ca_file = https_site.workdir / "bad-ca.pem"
    if content is not None:
        ca_file.write_text(content, encoding="utf-8")
    refused = https_site.run("plan", "site.yaml", "--ca-file", str(ca_file))
    assert refused.returncode == EXIT_ERROR
    assert f"The CA file {ca_file}" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert os.fspath(ca_file) in refused.stderr
