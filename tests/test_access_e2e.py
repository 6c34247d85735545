"""End to end: the installed ``reconciler access`` against the sandbox served over loopback,
on a site with a deactivated member and two administrators: the JSON a review keeps, the HTML
a reviewer opens, and the calls the site received (those of a full plan, no more)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import EXIT_OK
from tests.support.loopback import LoopbackSite, loopback_site

SUPPORT = Path(__file__).parent / "support"

pytestmark = pytest.mark.e2e


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    with loopback_site(tmp_path, seed=SUPPORT / "access_seed.yaml") as running:
        manifest = (SUPPORT / "access_site.yaml").read_text(encoding="utf-8")
        running.write_manifest("site.yaml", manifest)
        running.write_manifest("all.yaml", manifest + "  - {name: Archive, users: [erin]}\n")
        yield running


def test_access_over_loopback_reports_the_deactivated_member_and_the_administrators(
    site: LoopbackSite,
) -> None:
    assert site.run("plan", "all.yaml").returncode == EXIT_OK
    plan_calls = site.control("calls")["methods"]
    site.control("calls/reset", {})

    result = site.run("access", "all.yaml", "--format", "json", "-o", "report.json")
    assert result.returncode == EXIT_OK, result.stderr
    assert site.control("calls")["methods"] == plan_calls

    report = json.loads((site.workdir / "report.json").read_text(encoding="utf-8"))
    assert report["site"] == site.url and report["sign_off"]["reviewer"] is None
    entries = {(e["person"], e["workspace"]): e for e in report["entries"]}
    carol = entries["carol", "Finance"]
    assert (carol["active"], carol["member"], carol["manifest"]) == (False, True, "declared")
    assert carol["permissions"] == ["delete_files", "download_files", "upload_files"]
    for workspace in ("Archive", "Finance", "Legal"):
        boss = entries["boss", workspace]
        assert (boss["administrator"], boss["permissions_from"]) == (True, "administrator")
    kinds = {(f["kind"], f["person"]) for f in report["findings"]}
    assert {
        ("deactivated", "carol"),
        ("administrator", "boss"),
        ("administrator", "admin"),
    } <= kinds
    assert ("unusual_domain", "dave") in kinds


def test_the_html_report_over_loopback_is_one_file(site: LoopbackSite) -> None:
    result = site.run("access", "site.yaml", "--format", "html", "-o", "access.html")
    assert result.returncode == EXIT_OK, result.stderr
    html = (site.workdir / "access.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "carol" in html
    assert not re.search(r"\b(src|href)\s*=", html, re.IGNORECASE)
