"""An apply sends the site's two lists as soon as it holds the site's lock, so that they
travel while its records are read, as a plan's do (issue 47); never before the lock is held,
since a read sent before it could miss the writes of the apply that holds it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.core.planning import PlanOptions
from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite
from reconciler.state.backend import Holder, LockHeld
from tests.support.engine_site import engine_site

pytestmark = pytest.mark.anyio

SUPPORT = Path(__file__).parent / "support"
SEED: dict[str, Any] = yaml.safe_load((SUPPORT / "access_seed.yaml").read_text(encoding="utf-8"))


def _manifest(tmp_path: Path, **more: Any) -> DesiredSite:
    document = yaml.safe_load((SUPPORT / "access_site.yaml").read_text(encoding="utf-8"))
    document["workspaces"].append({"name": "Newcomers", "users": ["erin"], **more})
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    desired = load_manifest([str(path)]).desired
    assert desired is not None
    return desired


async def test_an_apply_reads_each_list_once_and_applies(tmp_path: Path) -> None:
    """The lists sent ahead are the very calls the plan reads: none is sent twice."""
    desired = _manifest(tmp_path)
    async with engine_site(SEED, tmp_path) as site:
        site.app.sandbox.calls.clear()
        await site.plan(desired, PlanOptions())
        planned = Counter(site.app.sandbox.calls)
        site.app.sandbox.calls.clear()
        outcome = await site.apply(desired)
        applied = Counter(site.app.sandbox.calls)
    assert outcome.complete and "Newcomers" in {w.name for w in outcome.plan.changes}
    assert {method: applied[method] for method in planned} == planned
    assert applied["workspace_list"] == 1 and applied["users_location_access"] == 1


async def test_an_apply_that_cannot_take_the_lock_sends_nothing(tmp_path: Path) -> None:
    desired = _manifest(tmp_path)
    async with engine_site(SEED, tmp_path) as site:
        site.app.sandbox.calls.clear()
        with site.store.lock(Holder.current("apply (another runner)")), pytest.raises(LockHeld):
            await site.apply(desired)
        assert not site.app.sandbox.calls
