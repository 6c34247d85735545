"""Secrets and files: no secret or signature in any output, log, plan or state file; private
files are mode 600; plain ``http://`` is refused beyond loopback; a wrong or missing
credential ends in one message naming what to check.

The suite-wide scan (``tests/conftest.py``) searches every file and every CLI output the
whole session leaves behind; here the scanner is shown to find what it looks for, and one
run of every command, verbose and in JSON logs, is scanned on its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from reconciler.sandbox.settings import SandboxSettings
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import (
    ADMIN_KEY,
    ADMIN_SECRET,
    EXAMPLE_SITE,
    LoopbackSite,
    loopback_site,
)
from tests.support.secret_scan import ScanReport, leaks_in


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    settings = SandboxSettings(drop_after_commit_rate=0.2, fail_rate=0.05, random_seed=3)
    with loopback_site(tmp_path, settings=settings) as running:
        yield running


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that lets everyone read new files: private files must not rely on it."""
    previous = os.umask(0)
    yield
    os.umask(previous)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("key sandbox-admin-secret", True),
        ("hmac " + hashlib.sha1(b"sandbox-viewer-secret").hexdigest(), True),
        ("GET /api/user_info?api_key=k&timestamp=1&signature=" + "a1" * 32, True),
        ('{"signature": "' + "0f" * 32 + '"}', True),
        ("signature=****, api_key=sand…-key", False),
        ("sandbox-admin-key", False),
    ],
)
def test_the_scanner_finds_secrets_hmac_keys_and_signatures(text: str, found: bool) -> None:
    assert bool(leaks_in(text.encode())) is found


def test_the_scanner_skips_only_seeds_and_the_sites_database() -> None:
    with tempfile.TemporaryDirectory() as scratch:  # not in the session's scanned tree
        seed = "users:\n  - {username: a, api_key: k, api_secret: sandbox-admin-secret}\n"
        for name in ("big.yaml", "site.db", "site.sqlite-wal", "site.yaml", "plan.json", "a.log"):
            Path(scratch, name).write_text(seed if name == "big.yaml" else "sandbox-admin-secret")
        report = ScanReport().scan_tree(Path(scratch))
    assert report.files == 3 and len(report.leaks) == 3


@pytest.mark.slow
def test_no_secret_in_any_output_plan_state_or_log_of_every_command(
    site: LoopbackSite, open_umask: None
) -> None:
    """Every command, at -vv with JSON logs, on a faulty site, and failures too."""
    verbose = ("-vv", "--log-format", "json")
    assert site.run("plan", "site.yaml", "-o", "plan.json", *verbose).returncode == EXIT_OK
    site.run("apply", "plan.json", "--auto-approve", *verbose)  # complete or not: faults
    site.apply_until_ok("site.yaml", *verbose)
    assert site.run("drift", "site.yaml", *verbose).returncode == EXIT_OK
    assert site.run("export", "-o", "exported/", *verbose).returncode == EXIT_OK
    assert site.run("state", "show", "site.yaml").returncode == EXIT_OK
    assert site.run("plan", "site.yaml", "-vv", "--log-format", "console").returncode == EXIT_OK
    assert site.run("apply", "plan.json", "--auto-approve", *verbose).returncode != EXIT_OK

    report = ScanReport().scan_tree(site.workdir).scan_texts(site.transcript, "output")
    assert report.leaks == []
    assert {"plan or report", "state", "log", "yaml"} <= report.kinds
    assert any('"event": "api_call"' in text for text in site.transcript)  # logs were on
    assert any("sand…-key" in text for text in site.transcript)  # the key, masked


def test_plan_state_and_export_files_are_private(site: LoopbackSite, open_umask: None) -> None:
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    site.apply_until_ok("site.yaml")
    assert site.run("export", "-o", "exported/").returncode == EXIT_OK
    state_dir = site.workdir / ".reconciler"
    records = [p for p in (state_dir / "sites").rglob("*") if p.is_file()]
    assert any(p.parent.name == "versions" for p in records)
    private = [site.workdir / "plan.json", *records]
    private += [p for p in (site.workdir / "exported").iterdir()]
    assert len(private) > 3
    assert {oct(p.stat().st_mode & 0o777) for p in private} == {"0o600"}
    directories = [p for p in (state_dir / "sites").rglob("*") if p.is_dir()]
    assert {oct(p.stat().st_mode & 0o777) for p in directories} == {"0o700"}


# --- where the tool talks to, with which credentials ---------------------------------------


@pytest.fixture
def admin_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("RECONCILER_API_SECRET", ADMIN_SECRET)


@pytest.mark.parametrize(
    "url", ["http://example.com", "http://10.0.0.8:8800", "http://acme.example.net/api"]
)
def test_plain_http_beyond_loopback_is_refused(
    url: str, admin_credentials: None, tmp_path: Path
) -> None:
    manifest = shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    result = run_reconciler("plan", str(manifest), "--site", url)
    assert result.exit_code == EXIT_ERROR
    assert "Refusing plain http://" in result.stderr and "https://" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("environment", "words"),
    [
        (
            {"RECONCILER_API_KEY": ADMIN_KEY, "RECONCILER_API_SECRET": "wrong-secret"},
            "RECONCILER_API_SECRET",
        ),
        (
            {"RECONCILER_API_KEY": "no-such-key", "RECONCILER_API_SECRET": ADMIN_SECRET},
            "RECONCILER_API_KEY",
        ),
        ({"RECONCILER_API_KEY": ADMIN_KEY}, "the API secret (RECONCILER_API_SECRET"),
        ({"RECONCILER_API_SECRET": ADMIN_SECRET}, "the API key (RECONCILER_API_KEY"),
        ({}, "credentials file"),
        (
            {
                "RECONCILER_API_KEY": "sandbox-viewer-key",
                "RECONCILER_API_SECRET": "sandbox-viewer-secret",
            },
            "API key of a site administrator",
        ),
    ],
    ids=["wrong secret", "unknown key", "no secret", "no key", "nothing", "not an admin"],
)
def test_a_wrong_or_missing_credential_names_what_to_check(
    environment: dict[str, str], words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    manifest = shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path) as site:
        result = run_reconciler("plan", str(manifest), "--site", site.url)
        site.transcript += [result.stdout, result.stderr]
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.count("Error: ") == 1 and words in result.stderr
    assert "Traceback" not in result.output and "wrong-secret" not in result.output


def test_a_credentials_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    credentials = tmp_path / "credentials.yaml"
    credentials.write_text(f"api_key: {ADMIN_KEY}\napi_secret: {ADMIN_SECRET}\n")
    credentials.chmod(0o644)
    with loopback_site(tmp_path) as site:
        manifest = shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
        args = ("plan", str(manifest), "--site", site.url, "--credentials", str(credentials))
        refused = run_reconciler(*args)
        credentials.chmod(0o600)
        accepted = run_reconciler(*args, "--detailed-exitcode")
        site.transcript += [refused.output, accepted.output]
    assert refused.exit_code == EXIT_ERROR
    assert "can be read by others" in refused.stderr and "chmod 600" in refused.stderr
    assert accepted.exit_code == EXIT_CHANGES, accepted.stderr
    credentials.unlink()  # the one file of the session that holds a secret on purpose
