"""``state diff``: what changed in the records between two versions, for auditors.

Three versions of a site's records are saved (a workspace gains a member, a group is
created, a reference comes to mean another account); the command's text, JSON and Markdown
are compared with golden files (``RECONCILER_REGENERATE_GOLDEN=1`` rewrites them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import EXIT_OK
from reconciler.state.backend import Holder, SaveInfo
from reconciler.state.directory import DirectoryRecords
from tests.support.cli_runner import run_reconciler

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("RECONCILER_REGENERATE_GOLDEN") == "1"
SITE = "https://acme.example.net"


def version(members: list[int], groups: dict[str, Any], alice: list[Any]) -> dict[str, Any]:
    return {
        "format": 2,
        "site": SITE,
        "workspaces": {
            "Finance": {"id": 12, "managed": True, "origin": "created", "members": members},
            "Legal": {"id": 13, "managed": True, "origin": "adopted", "members": [1003]},
        },
        "groups": groups,
        "users": {},
        "references": {"alice@acme.example": alice},
        "applied_plans": [],
    }


@pytest.fixture
def records(tmp_path: Path) -> Path:
    store = DirectoryRecords(tmp_path / "state", SITE)
    crew = {"crew": {"id": 7, "managed": True, "origin": "created", "members": [1005]}}
    documents = [
        version([1001, 1002], {}, [1001, "alice"]),
        version([1002, 1043], crew, [1043, "alice2"]),
    ]
    with store.lock(Holder.current("apply")) as lease:
        for number, document in enumerate(documents):
            store.save(document, expected_version=number, info=SaveInfo("ci", "apply"), lease=lease)
    return tmp_path / "state"


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_state_diff_says_what_changed_in_domain_words(records: Path, fmt: str) -> None:
    result = run_reconciler(
        "state", "diff", "1", "2", "--state", str(records), "--site", SITE, "--format", fmt
    )
    assert result.exit_code == EXIT_OK, result.output
    golden = GOLDEN / ("state-diff." + {"text": "txt", "json": "json", "markdown": "md"}[fmt])
    if REGENERATE:
        golden.write_text(result.stdout, encoding="utf-8")
    assert result.stdout == golden.read_text(encoding="utf-8")


def test_one_version_is_compared_with_the_newest(records: Path) -> None:
    one = run_reconciler("state", "diff", "1", "--state", str(records), "--site", SITE)
    two = run_reconciler("state", "diff", "1", "2", "--state", str(records), "--site", SITE)
    assert one.stdout == two.stdout and "version 1 -> version 2" in one.stdout
    same = run_reconciler("state", "diff", "2", "2", "--state", str(records), "--site", SITE)
    assert "No changes." in same.stdout


def test_versions_stored_in_different_formats_are_compared_as_records(tmp_path: Path) -> None:
    """Records saved by an older reconciler (format 2) and the same records saved today
    (format 3) are the same records: an auditor is shown no change that did not happen."""
    store = DirectoryRecords(tmp_path / "state", SITE)
    settings = {"root_access": False, "permissions": ["upload_files"]}
    old = {
        "format": 2,
        "site": SITE,
        "workspaces": {"Finance": {"id": 12, "managed": True, "settings": settings}},
    }
    from reconciler.engine.records import document as records_document

    today = records_document.to_data(records_document.from_data(old, site=SITE, where="test"))
    assert today["format"] == 3 and today["workspaces"]["Finance"]["root_access"] == {
        "value": False
    }
    with store.lock(Holder.current("apply")) as lease:
        for number, document in enumerate([old, today]):
            store.save(document, expected_version=number, info=SaveInfo("ci", "apply"), lease=lease)
    result = run_reconciler(
        "state", "diff", "1", "2", "--state", str(tmp_path / "state"), "--site", SITE
    )
    assert result.exit_code == EXIT_OK, result.output
    assert "No changes." in result.stdout, result.stdout
