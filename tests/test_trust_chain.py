"""A saved plan's trust chain: it never chooses its records, a reader of the records cannot
seal one, and the policy it runs under is never weaker than the pipeline's.

Each test replays an attack of the review against the real CLI over loopback.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.engine.planning.plan import canonical
from reconciler.engine.planning.plan_file import key_id
from reconciler.errors import EXIT_ERROR, EXIT_OK, EXIT_REFUSED
from tests.support.loopback import EXAMPLE_SITE, LoopbackSite, loopback_site

PLAN_KEY = "correct-horse-battery-staple-plan-key-0123456789"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LoopbackSite]:
    shutil.copy(EXAMPLE_SITE, tmp_path / "site.yaml")
    with loopback_site(tmp_path) as running:
        assert running.run("apply", "site.yaml", "--auto-approve").returncode == EXIT_OK
        yield running


def example() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE_SITE.read_text(encoding="utf-8"))


def everything_gone(protect: list[str] | None = None) -> dict[str, Any]:
    """The example with every workspace dropped, prune on and (by default) no protection."""
    document = example()
    document["workspaces"], document["teams"] = [], []
    document["policy"] = {"prune": True, "max_delete_fraction": 1.0, "max_deletes": 100}
    if protect is not None:
        document["policy"]["protect"] = protect
    return document


def test_a_plan_made_against_other_records_is_refused_naming_both(site: LoopbackSite) -> None:
    """The attacker adopts the site into records of their own and plans deletions there;
    the plan names those records. Applied in the pipeline, it is refused before any call."""
    assert site.run("adopt", "site.yaml", "--state", "evil-records").returncode == EXIT_OK
    site.write_manifest("evil.yaml", everything_gone())
    planned = site.run("plan", "evil.yaml", "--state", "evil-records", "-o", "evil.json")
    assert planned.returncode == EXIT_OK and "DELETED" in planned.stdout
    before = set(site.workspaces())
    site.control("calls/reset", {})
    refused = site.run("apply", "evil.json", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stderr
    assert "made against other records" in refused.stderr
    assert str(site.workdir / "evil-records") in refused.stderr  # both locations named
    assert str(site.workdir / ".reconciler") in refused.stderr
    assert site.control("calls")["total"] == 0
    assert set(site.workspaces()) == before


def test_an_untrusted_plan_creates_no_records_before_it_is_refused(site: LoopbackSite) -> None:
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    fresh = site.workdir / "fresh-records"
    refused = site.run("apply", "plan.json", "--state", str(fresh), "--auto-approve")
    assert refused.returncode == EXIT_REFUSED
    assert not fresh.exists()  # no directory, no key


def test_with_a_plan_key_a_reader_of_the_records_cannot_seal_a_plan(
    site: LoopbackSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is the pipeline's secret: the records hold nothing a reader could seal with."""
    monkeypatch.setenv("RECONCILER_PLAN_KEY", PLAN_KEY)
    (site.workdir / ".reconciler").rename(site.workdir / "old-records")  # records with no key
    assert site.run("adopt", "site.yaml").returncode == EXIT_OK
    site.write_manifest("site.yaml", {**example(), "policy": {"prune": True}})
    assert site.run("plan", "site.yaml", "-o", "plan.json").returncode == EXIT_OK
    assert not list((site.workdir / ".reconciler").rglob("plan.key"))
    # a reader of the records holds no key: whatever key they seal with is not the pipeline's
    forged = json.loads((site.workdir / "plan.json").read_text())
    forged.pop("seal")
    reader_key = os.urandom(32)
    mac = hmac.new(reader_key, canonical(forged), hashlib.sha256).hexdigest()
    forged["seal"] = {"key_id": key_id(reader_key), "mac": mac}
    (site.workdir / "forged.json").write_text(json.dumps(forged))
    refused = site.run("apply", "forged.json", "--auto-approve")
    assert refused.returncode == EXIT_REFUSED and "another key" in refused.stderr
    applied = site.run("apply", "plan.json", "site.yaml", "--auto-approve")
    assert applied.returncode == EXIT_OK, applied.stderr
    monkeypatch.setenv("RECONCILER_PLAN_KEY", "short")
    weak = site.run("plan", "site.yaml", "-o", "plan.json")
    assert weak.returncode == EXIT_ERROR and "at least 32" in weak.stderr
    assert "short" not in weak.stdout + weak.stderr.replace("too short", "")


@pytest.mark.parametrize("job_manifest", [False, True], ids=["records' policy", "job's manifest"])
def test_a_sealed_plan_cannot_weaken_the_policy(site: LoopbackSite, job_manifest: bool) -> None:
    """Someone who can seal plans drops `protect` from the manifest the plan carries: the
    protected archive is still never deleted, by the records' last policy or the job's."""
    site.write_manifest("evil.yaml", everything_gone(protect=[]))
    planned = site.run("plan", "evil.yaml", "-o", "evil.json")
    assert 'workspace "Archive 2023"' in planned.stdout and "DELETED" in planned.stdout
    merged = ["site.yaml"] if job_manifest else []
    refused = site.run("apply", "evil.json", *merged, "--auto-approve")
    assert refused.returncode == EXIT_REFUSED, refused.stdout + refused.stderr
    assert "cannot weaken it" in refused.stderr
    assert "Archive 2023" in site.workspaces()
