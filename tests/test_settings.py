"""Settings without repetition: reconciler.toml, RECONCILER_ variables, the old SITE_* names.

Precedence for every setting: flag > environment > file > default. The options layer is probed
through a command built with the real ``site_options`` (what every site command uses); the
file's place, the records' location and the old names are checked with the real CLI against
the sandbox over loopback.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from reconciler import environment
from reconciler.cli.options import SiteOptions, locking_site_options, site_options
from reconciler.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import (
    ADMIN_KEY,
    ADMIN_SECRET,
    EXAMPLE_SITE,
    REPO,
    LoopbackSite,
)


def _probe(options: Callable[[Any], Any]) -> click.Command:
    @click.command()
    @click.argument("paths", nargs=-1)
    @options
    def probe(paths: tuple[str, ...], site_opts: SiteOptions) -> None:
        click.echo(json.dumps(asdict(site_opts), default=str))

    return probe


def settled(
    *args: str, env: dict[str, str] | None = None, options: Callable[[Any], Any] = site_options
) -> dict[str, Any]:
    """The ``SiteOptions`` a site command receives for these arguments and environment."""
    result = CliRunner().invoke(_probe(options), list(args), env=env or {})
    assert result.exit_code == 0, (result.output, result.exception)
    return dict(json.loads(result.stdout))


@pytest.fixture
def manifest_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("RECONCILER_STATE", raising=False)
    site = tmp_path / "repo" / "site"
    site.mkdir(parents=True)
    shutil.copy(EXAMPLE_SITE, site / "site.yaml")
    return site


def _toml(directory: Path, text: str, name: str = "reconciler.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


SETTINGS = """
concurrency = 3
rate_limit = 2.5
timeout = 30
api_format = "xml"
lock_timeout = 120
lock_lease = 45
state = "../records"
ca_file = "tls/ca.pem"
"""


def test_the_file_beside_the_manifest_sets_what_no_flag_or_variable_set(
    manifest_dir: Path,
) -> None:
    _toml(manifest_dir, SETTINGS)
    for given in (str(manifest_dir), str(manifest_dir / "site.yaml")):  # directory or file
        opts = settled(given, options=locking_site_options)
        assert (opts["concurrency"], opts["rate_limit"], opts["timeout"]) == (3, 2.5, 30.0)
        assert (opts["api_format"], opts["lock_timeout"], opts["lock_lease"]) == ("xml", 120, 45)
        # a relative directory of records is relative to the file, not to where one runs
        assert opts["state"] == str(manifest_dir.parent / "records")
        assert opts["ca_file"] == str(manifest_dir / "tls" / "ca.pem")


def test_without_a_file_the_defaults_hold(manifest_dir: Path) -> None:
    opts = settled(str(manifest_dir))
    defaults = asdict(SiteOptions())
    assert {k: opts[k] for k in ("concurrency", "rate_limit", "timeout", "state")} == {
        k: defaults[k] for k in ("concurrency", "rate_limit", "timeout", "state")
    }


def test_the_environment_beats_the_file_and_a_flag_beats_both(manifest_dir: Path) -> None:
    _toml(manifest_dir, SETTINGS)
    env = {"RECONCILER_CONCURRENCY": "5", "RECONCILER_TIMEOUT": "12", "RECONCILER_STATE": "/r"}
    opts = settled(str(manifest_dir), env=env)
    assert (opts["concurrency"], opts["timeout"], opts["rate_limit"]) == (5, 12.0, 2.5)
    assert opts["state"] is None  # RECONCILER_STATE is read where the records are located
    opts = settled(str(manifest_dir), "--concurrency", "7", "--state-dir", "x", env=env)
    assert (opts["concurrency"], opts["timeout"], opts["state"]) == (7, 12.0, None)
    # a flag equal to the default is still a flag: the file does not override it
    assert settled(str(manifest_dir), "--concurrency", "8")["concurrency"] == 8


def test_every_site_option_has_a_reconciler_variable(manifest_dir: Path) -> None:
    env = {
        "RECONCILER_API_FORMAT": "xml",
        "RECONCILER_CONCURRENCY": "2",
        "RECONCILER_RATE_LIMIT": "4",
        "RECONCILER_TIMEOUT": "9",
        "RECONCILER_LOCK_TIMEOUT": "60",
        "RECONCILER_LOCK_LEASE": "20",
        "RECONCILER_CREDENTIALS_FILE": "/secrets/site.yaml",
        "RECONCILER_CA_FILE": "/tls/ca.pem",
    }
    opts = settled(str(manifest_dir), env=env, options=locking_site_options)
    assert (opts["api_format"], opts["concurrency"], opts["rate_limit"]) == ("xml", 2, 4.0)
    assert (opts["timeout"], opts["lock_timeout"], opts["lock_lease"]) == (9.0, 60.0, 20.0)
    assert (opts["credentials"], opts["ca_file"]) == ("/secrets/site.yaml", "/tls/ca.pem")


def test_every_old_name_is_still_read_and_named_in_the_note(manifest_dir: Path) -> None:
    env = {"SITE_CA_FILE": "/old/ca.pem", "SITE_CREDENTIALS_FILE": "/old/site.yaml"}
    result = CliRunner().invoke(_probe(site_options), [str(manifest_dir)], env=env)
    opts = json.loads(result.stdout)
    assert (opts["ca_file"], opts["credentials"]) == ("/old/ca.pem", "/old/site.yaml")
    assert result.stderr.splitlines() == [
        "Note: the SITE_* environment names are deprecated: set SITE_CREDENTIALS_FILE as "
        "RECONCILER_CREDENTIALS_FILE, SITE_CA_FILE as RECONCILER_CA_FILE (a RECONCILER_ name "
        "wins when both are set)."
    ]
    assert environment.deprecation_note({"RECONCILER_CA_FILE": "/new"}) is None


def test_config_or_its_variable_names_a_file_anywhere(manifest_dir: Path, tmp_path: Path) -> None:
    elsewhere = _toml(tmp_path, "concurrency = 2\n", "ci.toml")
    _toml(manifest_dir, "concurrency = 3\n")
    assert settled(str(manifest_dir), "--config", str(elsewhere))["concurrency"] == 2
    env = {"RECONCILER_CONFIG": str(elsewhere)}
    assert settled(str(manifest_dir), env=env)["concurrency"] == 2
    assert settled(str(manifest_dir))["concurrency"] == 3


def test_a_saved_plan_is_not_where_the_file_is_looked_for(
    manifest_dir: Path, tmp_path: Path
) -> None:
    _toml(manifest_dir, "concurrency = 3\n")
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    assert settled(str(plan), str(manifest_dir))["concurrency"] == 3


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("concurrency = 100\n", "concurrency = 100: 100 is not in the range 1<=x<=64"),
        ("concurency = 4\n", "Unknown setting 'concurency'"),
        ('api_secret = "s3cr3t-value"\n', "secrets never go in reconciler.toml"),
        ('site_url = "https://a.example"\n', "the manifest declares it"),
        ('api_format = "yaml"\n', "api_format = 'yaml'"),
        ("timeout = true\n", "timeout = True is not a single value"),
        ("state = 5\n", "state must be a quoted location"),
        ("concurrency = [\n", "is not valid TOML"),
    ],
)
def test_a_bad_file_is_one_clear_error(manifest_dir: Path, text: str, words: str) -> None:
    path = _toml(manifest_dir, text)
    result = run_reconciler("plan", str(manifest_dir), "--sandbox")
    assert result.exit_code == EXIT_ERROR
    assert words in result.stderr and str(path) in result.stderr, result.stderr
    assert "Traceback" not in result.output and "Internal error" not in result.output
    assert "s3cr3t-value" not in result.output


def test_validate_checks_the_settings_file_beside_the_manifest(manifest_dir: Path) -> None:
    _toml(manifest_dir, SETTINGS)
    valid = run_reconciler("validate", str(manifest_dir))
    assert valid.exit_code == EXIT_OK, valid.output
    path = _toml(manifest_dir, "lock_lease = 9000\n")
    invalid = run_reconciler("validate", str(manifest_dir / "site.yaml"))
    assert invalid.exit_code == EXIT_ERROR
    assert f"{path}: lock_lease = 9000" in invalid.stderr and "Traceback" not in invalid.output


def test_a_named_file_that_is_missing_is_an_error(manifest_dir: Path) -> None:
    result = run_reconciler("plan", str(manifest_dir), "--sandbox", "--config", "nope.toml")
    assert result.exit_code == EXIT_ERROR
    assert "Cannot read the settings file nope.toml" in result.stderr


def test_a_bad_variable_is_named(manifest_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_CONCURRENCY", "many")
    result = run_reconciler("plan", str(manifest_dir), "--sandbox")
    assert result.exit_code == EXIT_ERROR
    assert "RECONCILER_CONCURRENCY" in result.stderr and "'many'" in result.stderr


# --- the real CLI against the sandbox over loopback -----------------------------------------


def _run(site: LoopbackSite, env: dict[str, str], *args: str) -> CliOutcome:
    result = run_reconciler(*args, cwd=site.workdir, env=env)
    site.transcript += [result.stdout, result.stderr]
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_the_records_go_where_the_file_says(site: LoopbackSite) -> None:
    (site.workdir / "site").mkdir()
    shutil.move(site.workdir / "site.yaml", site.workdir / "site" / "site.yaml")
    _toml(site.workdir / "site", 'state = "../shared-records"\nconcurrency = 2\n')
    applied = _run(site, site.env, "apply", "site/", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    assert (site.workdir / "shared-records").is_dir()
    assert not (site.workdir / "site" / ".reconciler").exists()
    again = _run(site, site.env, "plan", "site/", "--detailed-exitcode")
    assert again.returncode == EXIT_OK, again.stdout  # the same records were found
    # a flag still wins: other (empty) records know nothing of the site
    elsewhere = _run(site, site.env, "plan", "site/", "--state-dir", "other")
    assert "The tool has no records for this site in" in elsewhere.stdout, elsewhere.stdout
    assert "The tool has no records" not in again.stdout


def _old_environment(site: LoopbackSite) -> dict[str, str]:
    env = {k: v for k, v in site.env.items() if not k.startswith("RECONCILER_")}
    env.update(SITE_URL=site.url, SITE_API_KEY=ADMIN_KEY, SITE_API_SECRET=ADMIN_SECRET)
    return env


def test_the_old_site_names_still_work_with_one_line_saying_so(site: LoopbackSite) -> None:
    result = _run(site, _old_environment(site), "plan", "site.yaml", "--detailed-exitcode")
    assert result.returncode == EXIT_CHANGES, result.stderr
    notes = [line for line in result.stderr.splitlines() if "deprecated" in line]
    assert notes == [
        "Note: the SITE_* environment names are deprecated: set SITE_URL as RECONCILER_SITE_URL, "
        "SITE_API_KEY as RECONCILER_API_KEY, SITE_API_SECRET as RECONCILER_API_SECRET "
        "(a RECONCILER_ name wins when both are set)."
    ]
    modern = _run(site, site.env, "plan", "site.yaml", "--detailed-exitcode")
    assert modern.returncode == EXIT_CHANGES and "deprecated" not in modern.stderr


def test_a_reconciler_name_wins_over_the_old_one(site: LoopbackSite) -> None:
    env = {**site.env, "SITE_API_SECRET": "an-old-wrong-secret", "SITE_URL": "https://old.invalid"}
    result = _run(site, env, "plan", "site.yaml", "--detailed-exitcode")
    assert result.returncode == EXIT_CHANGES, result.stderr
    assert "SITE_API_SECRET as RECONCILER_API_SECRET" in result.stderr
    assert "an-old-wrong-secret" not in result.stdout + result.stderr


def test_the_old_credentials_file_variable_is_still_read(
    site: LoopbackSite, tmp_path: Path
) -> None:
    credentials = tmp_path / "credentials.yaml"
    credentials.write_text(f"api_key: {ADMIN_KEY}\napi_secret: {ADMIN_SECRET}\n")
    os.chmod(credentials, 0o600)
    env = {k: v for k, v in site.env.items() if not k.startswith("RECONCILER_API")}
    env["SITE_CREDENTIALS_FILE"] = str(credentials)
    result = _run(site, env, "plan", "site.yaml", "--detailed-exitcode")
    assert result.returncode == EXIT_CHANGES, result.stderr
    assert "SITE_CREDENTIALS_FILE as RECONCILER_CREDENTIALS_FILE" in result.stderr
    credentials.unlink()  # the sandbox's secret stays out of the files the suite scans


def test_the_documented_settings_file_works_as_written(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Settings: reconciler.toml") :]
    block = section[section.index("```toml\n") + 8 :]
    block = block[: block.index("```")]
    assert block.startswith("# site/reconciler.toml\n")
    shutil.copytree(REPO / "examples", tmp_path / "site", ignore=shutil.ignore_patterns(".*"))
    _toml(tmp_path / "site", block)
    opts = settled(str(tmp_path / "site"), options=locking_site_options)
    assert (opts["concurrency"], opts["rate_limit"], opts["timeout"]) == (4, 5.0, 30.0)
    assert opts["lock_timeout"] == 300 and opts["state"].startswith("postgresql://")
    # the documented order: a flag beats the file's PostgreSQL records
    planned = run_reconciler(
        "plan", str(tmp_path / "site"), "--sandbox", "--state-dir", str(tmp_path / "records")
    )
    assert planned.exit_code == EXIT_OK, planned.stderr
    table = section[section.index("| | example |") :].split("\n\n")[0].splitlines()[2:]
    assert [row.split("|")[1].strip() for row in table] == [
        "the command's flag",
        "its environment variable",
        "the settings file, `reconciler.toml`",
        "the default (for the records: the manifest's `site.state`, else `.reconciler/`)",
    ]
