"""No silent fallbacks in CI (issue 31 item 4) and no weak plan keys (issue 32 item 3).

On a fresh runner, an empty ``RECONCILER_STATE`` (a secret missing from the CI's settings)
used to mean the local ``.reconciler/``: empty, so a plan created everything again, a
duplicate user included. With ``CI`` set, the records' location must be said, and saved plans
are sealed and checked with ``RECONCILER_PLAN_KEY`` only. A plan key of 32 spaces sealed
plans; blank, whitespace and one-character keys are now refused, saying how to make one.

The real CLI in-process, on the embedded sandbox (or before any site is contacted).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reconciler.engine.planning.plan_key import PlanSecret
from reconciler.errors import EXIT_ERROR, EXIT_OK, ConfigError
from tests.support.cli_runner import CliOutcome, run_reconciler
from tests.support.loopback import EXAMPLE_SITE

KEY = "a-plan-key-of-the-pipeline-0123456789-abcdef"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with the example manifest, as the working directory, on a CI runner."""
    (tmp_path / "site").mkdir()
    shutil.copy(EXAMPLE_SITE, tmp_path / "site" / "site.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    return tmp_path


def refused_for_state(outcome: CliOutcome) -> None:
    assert outcome.exit_code == EXIT_ERROR, outcome.output
    assert "RECONCILER_STATE" in outcome.stderr and "CI is set" in outcome.stderr
    assert "--state-dir DIR" in outcome.stderr  # how to choose local records on purpose
    assert "Traceback" not in outcome.output


@pytest.mark.parametrize(
    "command",
    [
        ["plan", "site/"],
        ["drift", "site/"],
        ["apply", "site/", "--auto-approve"],
        ["adopt", "site/"],
        ["state", "show", "site/"],
        ["state", "forget", "workspace", "Finance", "site/"],
    ],
    ids=" ".join,
)
def test_in_ci_local_records_nobody_chose_are_refused(
    work: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("RECONCILER_API_KEY", "key")
    monkeypatch.setenv("RECONCILER_API_SECRET", "secret")
    refused_for_state(run_reconciler(*command))
    assert not (work / "site" / ".reconciler").exists()  # nothing was made on the runner


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_in_ci_a_set_but_empty_state_variable_is_refused_even_with_the_sandbox(
    work: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RECONCILER_STATE", value)
    refused = run_reconciler("plan", "site/", "--sandbox")
    refused_for_state(refused)
    assert "RECONCILER_STATE is set but empty" in refused.stderr


def looked_in(outcome: CliOutcome, where: Path) -> None:
    """``state show`` went to the records at ``where`` (there are none yet)."""
    assert f"No records for https://acme.example.net in {where}." in outcome.stderr, outcome.output


def test_in_ci_records_said_anywhere_are_used(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--state-dir, RECONCILER_STATE, reconciler.toml's state, the manifest's site.state, and
    the embedded sandbox (which lives in its records) all say where the records are."""
    assert run_reconciler("plan", "site/", "--sandbox").exit_code == EXIT_OK
    chosen = run_reconciler("plan", "site/", "--sandbox", "--state-dir", "records")
    assert chosen.exit_code == EXIT_OK and (work / "records" / "sandbox").is_dir()
    monkeypatch.setenv("RECONCILER_STATE", str(work / "shared"))
    looked_in(run_reconciler("state", "show", "site/"), work / "shared")
    monkeypatch.delenv("RECONCILER_STATE")
    (work / "site" / "reconciler.toml").write_text('state = "../from-toml"\n')
    looked_in(run_reconciler("state", "show", "site/"), work / "from-toml")
    (work / "site" / "reconciler.toml").unlink()
    manifest = work / "site" / "site.yaml"
    plain = manifest.read_text()
    manifest.write_text(plain.replace("site:\n", "site:\n  state: ../from-manifest\n", 1))
    looked_in(run_reconciler("state", "show", "site/"), work / "from-manifest")
    manifest.write_text(plain)
    monkeypatch.delenv("CI")
    looked_in(run_reconciler("state", "show", "site/"), work / "site" / ".reconciler")  # as before


def test_in_ci_saved_plans_need_the_plan_key(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealing (plan -o) and checking (apply PLAN, show) need RECONCILER_PLAN_KEY in CI; a
    plan without -o and drift need none."""
    sandbox = ("--sandbox", "--state-dir", "records")
    assert run_reconciler("plan", "site/", *sandbox).exit_code == EXIT_OK
    assert run_reconciler("drift", "site/", *sandbox).exit_code in (0, 2)
    for value in (None, ""):
        if value is not None:
            monkeypatch.setenv("RECONCILER_PLAN_KEY", value)
        refused = run_reconciler("plan", "site/", *sandbox, "-o", "plan.json")
        assert refused.exit_code == EXIT_ERROR, refused.output
        assert (
            "RECONCILER_PLAN_KEY is" in refused.stderr and "secrets.token_urlsafe" in refused.stderr
        )
        assert not (work / "plan.json").exists()
    monkeypatch.setenv("RECONCILER_PLAN_KEY", KEY)
    assert run_reconciler("plan", "site/", *sandbox, "-o", "plan.json").exit_code == EXIT_OK
    monkeypatch.delenv("RECONCILER_PLAN_KEY")
    for command in (
        ["show", "plan.json", "site/"],
        ["apply", "plan.json", "site/", "--auto-approve"],
    ):
        refused = run_reconciler(*command, *sandbox)
        assert refused.exit_code == EXIT_ERROR, (command, refused.output)
        assert "RECONCILER_PLAN_KEY is not set" in refused.stderr
    monkeypatch.setenv("RECONCILER_PLAN_KEY", KEY)
    applied = run_reconciler("apply", "plan.json", "site/", "--auto-approve", *sandbox)
    assert applied.exit_code == EXIT_OK, applied.output
    assert KEY not in applied.output


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (" " * 32, "is only whitespace (32 characters)"),
        ("\t" * 40, "is only whitespace (40 characters)"),
        ("x" * 64, "is one character repeated 64 times"),
        ("0123456789", "is 10 characters long; a plan key needs at least 32"),
    ],
    ids=["32 spaces", "tabs", "one character", "short"],
)
def test_weak_plan_keys_are_refused_saying_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, said: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        PlanSecret(key)
    assert said in refused.value.message
    assert "secrets.token_urlsafe(32)" in str(refused.value.hint)
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    monkeypatch.setenv("RECONCILER_PLAN_KEY", key)
    planned = run_reconciler("plan", str(tmp_path / "site.yaml"), "--sandbox", "-o",
                             str(tmp_path / "plan.json"))  # fmt: skip
    assert planned.exit_code == EXIT_ERROR and said in planned.stderr
    assert not (tmp_path / "plan.json").exists()
    if key.strip():
        assert key not in planned.output  # never echoed


def test_a_strong_plan_key_is_accepted() -> None:
    assert repr(PlanSecret(KEY)) == "PlanSecret(***)"
