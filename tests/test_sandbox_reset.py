"""``reconciler sandbox reset`` and ``export MANIFEST --sandbox``: the README's newcomer finds
the sandbox the tour used, and can start it afresh (issue 31 item 8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import EXAMPLE_SITE


@pytest.fixture
def applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example applied to the embedded sandbox beside it (the README's main job)."""
    (tmp_path / "examples").mkdir()
    shutil.copy(EXAMPLE_SITE, tmp_path / "examples" / "site.yaml")
    monkeypatch.chdir(tmp_path)
    done = run_reconciler("apply", "examples/site.yaml", "--sandbox", "--auto-approve")
    assert done.exit_code == EXIT_OK, done.output
    return tmp_path


def test_reset_starts_the_sandbox_afresh_and_keeps_other_sites_records(applied: Path) -> None:
    records = applied / "examples" / ".reconciler"
    other = records / "sites" / "acme.example.net-0000"
    other.mkdir(mode=0o700)
    (other / "kept").write_text("a real site's records")
    assert run_reconciler("plan", "examples/", "--sandbox", "--detailed-exitcode").exit_code == 0

    reset = run_reconciler("sandbox", "reset", "examples/")
    assert reset.exit_code == EXIT_OK, reset.output
    assert "its site is the seed again, its records are empty" in reset.stdout
    assert (other / "kept").read_text() == "a real site's records"
    planned = json.loads(
        run_reconciler("plan", "examples/", "--sandbox", "--format", "json").stdout
    )
    assert planned["summary"]["create"] == 14  # the seed again, and no records of the last run
    assert planned["notices"] == [] and planned["record_changes"] == []
    again = run_reconciler("sandbox", "reset", "examples/")
    assert again.exit_code == EXIT_OK and "Reset the embedded sandbox" in again.stdout
    empty = run_reconciler("sandbox", "reset", "examples/", "--state-dir", "elsewhere")
    assert empty.exit_code == EXIT_OK and "Nothing to reset" in empty.stdout


def test_reset_refuses_records_it_cannot_clear(applied: Path) -> None:
    refused = run_reconciler(
        "sandbox", "reset", "examples/", "--state", "postgresql://r@db.invalid/records"
    )
    assert refused.exit_code == EXIT_ERROR
    assert "not in a directory" in refused.stderr and "Traceback" not in refused.output


def test_export_with_the_manifest_reads_the_sandbox_its_commands_used(applied: Path) -> None:
    exported = run_reconciler("export", "examples/", "--sandbox", "-o", "live.yaml")
    assert exported.exit_code == EXIT_OK, exported.output
    text = (applied / "live.yaml").read_text(encoding="utf-8")
    assert "name: Finance" in text and "name: Payments" in text  # what the apply created
    assert not (applied / ".reconciler").exists()  # no other sandbox was made
    both = run_reconciler("export", "examples/", "--sandbox", "-o", "x/", "--adopt")
    assert both.exit_code == EXIT_ERROR and "give a MANIFEST or --adopt" in both.stderr
