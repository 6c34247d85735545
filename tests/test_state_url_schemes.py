"""The docs, ``validate`` and every command agree on the records' URL schemes (issue 31 item 8).

docs/manifest.md said ``postgres://`` in ``site.state`` was an error; ``validate`` (and every
command) accepted it, as libpq does. Both now say the same, and this holds them together: each
scheme docs/manifest.md names as accepted is accepted, the one it names as refused is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.manifest import load_manifest
from tests.support.readme import ROOT

SECTION = (ROOT / "docs" / "manifest.md").read_text(encoding="utf-8")
SECTION = SECTION[SECTION.index("## Where the records live") :]
SECTION = SECTION[: SECTION.index("\n## ", 3)]


def state_findings(tmp_path: Path, state: str) -> list[str]:
    manifest = tmp_path / "site.yaml"
    manifest.write_text(
        f"version: 1\nsite:\n  url: https://acme.example.net\n  state: '{state}'\n",
        encoding="utf-8",
    )
    result = load_manifest([str(manifest)])
    return [f.message for f in result.findings if f.severity == "error"]


@pytest.mark.parametrize(
    "state",
    [
        "postgresql://reconciler@db.acme.example/site",
        "postgres://reconciler@db.acme.example/site?schema=team_a",
        "file:///srv/reconciler-records",
        "records/",
    ],
)
def test_what_the_docs_accept_validate_accepts(tmp_path: Path, state: str) -> None:
    scheme = state.split("://")[0] if "://" in state else None
    if scheme is not None:
        assert f"`{scheme}://" in SECTION, f"docs/manifest.md does not name {scheme}://"
    assert state_findings(tmp_path, state) == []


def test_what_the_docs_refuse_validate_refuses(tmp_path: Path) -> None:
    refused = re.findall(r"such as `([a-z]+)://`, is an error", SECTION)
    assert refused == ["mysql"], SECTION
    assert "`postgres://`" in SECTION and "is the same" in SECTION
    (finding,) = state_findings(tmp_path, "mysql://reconciler@db/site")
    assert "mysql" in finding
