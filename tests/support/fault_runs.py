"""Fault runs of the real engine against an in-process sandbox: two manifests applied in turn,
each again and again until an apply completes, the site checked after each.

Shared by the fault tests and the tests of the site's undocumented choices (``site_guesses``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from reconciler.api.errors import SiteError
from reconciler.core.planning import PlanOptions
from reconciler.model import DesiredSite
from reconciler.sandbox.settings import SandboxSettings
from tests.support.engine_site import EngineSite, engine_site
from tests.support.invariants import example_site_problems
from tests.support.loopback import EXAMPLE_SITE
from tests.support.sandbox_site import example_seed
from tests.support.site_strategies import Expectation, load_desired
from tests.support.virtual_time import VirtualTime

MAX_APPLIES = 20


def example_document(prune: bool = False) -> dict[str, Any]:
    """The example manifest as data, ``prune`` as asked."""
    document = yaml.safe_load(EXAMPLE_SITE.read_text(encoding="utf-8"))
    document["policy"]["prune"] = prune
    return document  # type: ignore[no-any-return]


def changed_document() -> dict[str, Any]:
    """The example, changed: a workspace and a group leave (prune on), members come and go."""
    document = example_document()
    document["workspaces"] = [ws for ws in document["workspaces"] if ws["name"] != "Marketing"]
    document["workspaces"][0]["users"] = ["alice", "erin", 1042]  # Finance: bob leaves
    document["workspaces"].append({"name": "Research", "users": ["ivan", "judy"]})
    document["groups"] = [g for g in document["groups"] if g["name"] != "managers"]
    auditors = next(g for g in document["groups"] if g["name"] == "auditors")
    auditors["members"] = ["mallory", "heidi"]
    document["policy"]["prune"] = True
    return document


async def apply_until_complete(
    site: EngineSite, desired: DesiredSite, runs: Counter[str], options: PlanOptions | None = None
) -> None:
    """Apply again and again, as an operator would, until one apply completes."""
    for _ in range(MAX_APPLIES):
        runs["applies"] += 1
        try:
            outcome = await site.apply(desired, options)
        except SiteError as exc:  # a read that failed five times: the run ends with an error
            runs[f"applies ended by {type(exc).__name__}"] += 1
            continue
        if outcome.complete:
            return
        runs["incomplete applies"] += 1
        report = outcome.report
        assert report is not None
        runs["actions of unknown outcome"] += report.count("unknown")
        runs["actions failed"] += report.count("failed")
    raise AssertionError(f"no apply completed in {MAX_APPLIES} tries")


async def converge_under_faults(
    faults: dict[str, Any], seed: int, directory: Path, rate_limit: float | None = None
) -> Counter[str]:
    """Both manifests applied in turn under ``faults``; the site checked after each."""
    runs: Counter[str] = Counter()
    settings = SandboxSettings(**faults, random_seed=seed)
    options: dict[str, Any] = {} if rate_limit is None else {"rate_limit": rate_limit}
    if "rate_limit" in faults:  # the site's window and the client's waits on one clock
        options["waits_on"] = VirtualTime()
    async with engine_site(example_seed(), directory / "state", settings, **options) as site:
        initial = site.dump()
        for document in (example_document(), changed_document()):
            desired = load_desired(document, directory / "manifest.yaml")
            site.set_faults(**faults)
            await apply_until_complete(site, desired, runs)
            site.set_faults(fail_rate=0.0, drop_after_commit_rate=0.0, rate_limit=0)
            again = await site.plan(desired, PlanOptions())
            assert again.actions == (), [a.summary() for a in again.actions]
            expectation = Expectation.of(desired, initial["users"])
            assert example_site_problems(initial, site.dump(), expectation) == []
            runs["manifests converged"] += 1
        runs.update(site.tap.seen)
    return runs
