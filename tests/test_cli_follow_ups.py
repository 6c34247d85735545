"""The line ``plan -o`` prints is a command apply accepts, as printed (issue 31 item 8).

After a targeted plan it repeated ``--target``, which ``apply PLAN.json`` refuses (the plan
carries its scope); the options the next command needs (``--sandbox``, the records) stay.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from reconciler.errors import EXIT_OK
from tests.support.cli_runner import run_reconciler
from tests.support.loopback import EXAMPLE_SITE

PRINTED = re.compile(r"Apply exactly this plan with: (.+)$", re.MULTILINE)


@pytest.mark.parametrize(
    "scope",
    [["--target", "Finance"], ["--exclude", "group:*", "--changed"]],
    ids=["target", "exclude and changed"],
)
def test_the_apply_line_after_a_scoped_plan_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scope: list[str]
) -> None:
    (tmp_path / "site").mkdir()
    shutil.copy(EXAMPLE_SITE, tmp_path / "site" / "site.yaml")
    monkeypatch.chdir(tmp_path)
    planned = run_reconciler(
        "plan", "site/", "--sandbox", "--state-dir", "records", "-o", "plan.json", *scope
    )
    assert planned.exit_code == EXIT_OK, planned.output
    found = PRINTED.search(planned.stdout)
    assert found is not None, planned.stdout
    words = shlex.split(found.group(1))
    assert words[:4] == ["reconciler", "apply", "plan.json", "site/"]
    assert "--sandbox" in words and "--state-dir" in words  # what apply needs is kept
    assert not {"--target", "--exclude", "--changed"} & set(words)  # the plan carries them
    applied = run_reconciler(*words[1:], "--auto-approve")  # as a pipeline runs it
    assert applied.exit_code == EXIT_OK, applied.output
    assert "Apply complete" in applied.stdout
