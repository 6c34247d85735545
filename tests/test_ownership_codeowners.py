"""``reconciler codeowners`` and the drift check of ``validate`` (issue 46, item 3): the block
of both forges (golden files), written among hand-written lines and kept there, and a warning
at the file's place when the repository's CODEOWNERS no longer says what the manifest does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reconciler.errors import EXIT_ERROR, EXIT_OK
from tests.support.cli_runner import run_reconciler
from tests.support.golden import assert_golden
from tests.support.loopback import REPO

HAND_WRITTEN_BEFORE = "# Hand-written\n*.py @acme/developers\n"
HAND_WRITTEN_AFTER = "/docs/ @acme/writers\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (its ``.git`` is all the tool looks for) holding the example
    directory as ``site/``."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(REPO / "examples" / "teams", tmp_path / "site")
    return tmp_path


@pytest.mark.parametrize(
    ("forge", "where"), [("github", ".github/CODEOWNERS"), ("gitlab", ".gitlab/CODEOWNERS")]
)
def test_the_block_of_each_forge(repo: Path, forge: str, where: str) -> None:
    written = run_reconciler("codeowners", "site/", "-o", where, cwd=repo)
    assert written.exit_code == EXIT_OK, written.output
    assert f"Wrote the ownership block ({forge}) to {where}." in written.stdout
    assert_golden(f"codeowners.{forge}", (repo / where).read_text("utf-8"))
    printed = run_reconciler("codeowners", "site/", cwd=repo)  # the repository's file's
    assert printed.stdout == (repo / where).read_text("utf-8")


def test_hand_written_lines_around_the_block_are_kept(repo: Path) -> None:
    codeowners = repo / "CODEOWNERS"
    first = run_reconciler("codeowners", "site/", cwd=repo).stdout
    stale = first.replace("@acme/finance-leads", "@acme/somebody-else")
    codeowners.write_text(HAND_WRITTEN_BEFORE + "\n" + stale + HAND_WRITTEN_AFTER, "utf-8")

    for _ in range(2):  # writing it again changes nothing
        assert run_reconciler("codeowners", "site/", "-o", "CODEOWNERS", cwd=repo).exit_code == 0
        text = codeowners.read_text("utf-8")
        assert text.startswith(HAND_WRITTEN_BEFORE + "\n# BEGIN site-reconciler ownership\n")
        assert text.endswith("# END site-reconciler ownership\n" + HAND_WRITTEN_AFTER)
        assert "/site/teams/finance.yaml @acme/finance-leads\n" in text
        assert "somebody-else" not in text


def test_validate_says_when_codeowners_drifted(repo: Path) -> None:
    codeowners = repo / ".github" / "CODEOWNERS"
    codeowners.parent.mkdir()
    assert (
        run_reconciler("validate", "site/", cwd=repo).stdout
        == "site/: valid (4 workspaces, 1 group)\n"
    )

    codeowners.write_text(HAND_WRITTEN_BEFORE, "utf-8")  # no block
    missing = run_reconciler("validate", "site/", cwd=repo)
    assert missing.exit_code == EXIT_OK  # a warning: the manifest itself is valid
    assert missing.stdout.startswith(
        ".github/CODEOWNERS:1:1: warning: the repository's CODEOWNERS has no block of the "
        "manifest's ownership"
    )

    run_reconciler("codeowners", "site/", "-o", ".github/CODEOWNERS", cwd=repo)
    assert "warning" not in run_reconciler("validate", "site/", cwd=repo).stdout

    team = repo / "site" / "site.yaml"  # a new owner in the manifest, not in CODEOWNERS
    team.write_text(team.read_text().replace('["@acme/finance-leads"]', '["@acme/cfo"]'))
    drifted = run_reconciler("validate", "site/", cwd=repo)
    assert drifted.exit_code == EXIT_OK
    assert (
        ".github/CODEOWNERS:4:1: warning: the repository's CODEOWNERS has drifted from the "
        "manifest's ownership: the forge would ask other owners than the plan names — run "
        "`reconciler codeowners site/ -o .github/CODEOWNERS` and commit it"
    ) in drifted.stdout


def test_codeowners_of_a_manifest_without_ownership_is_an_error(tmp_path: Path) -> None:
    shutil.copy(REPO / "examples" / "site.yaml", tmp_path / "site.yaml")
    result = run_reconciler("codeowners", "site.yaml", cwd=tmp_path)
    assert result.exit_code == EXIT_ERROR
    assert "site.yaml declares no ownership, so there is nothing to write." in result.stderr
    assert "Traceback" not in result.stderr


def test_a_manifest_at_the_repositorys_root_is_owned_as_a_whole(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    shutil.copytree(REPO / "examples" / "teams", tmp_path, dirs_exist_ok=True)
    lines = run_reconciler("codeowners", cwd=tmp_path).stdout.splitlines()
    assert lines[2:5] == [
        "* @acme/it",
        "/teams/finance.yaml @acme/finance-leads",
        "/teams/marketing.yaml @acme/marketing-leads mona@acme.example",
    ]
