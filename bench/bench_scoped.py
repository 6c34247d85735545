"""Benchmark: change-scoped plans (``plan --changed``) on the large site, for k changed objects.

Seeds the large site (latency 20 ms, concurrency 8), adopts it and applies once (untimed: the
records then hold what was last applied), then for k = 3, 30 and 300 changes k workspaces
and one group in the manifest -- each gains a user the manifest already names elsewhere --
and times the real ``plan --changed``, repeated. Every reference of the touched set is
resolved fresh on the site, as a full plan resolves it: each is searched (issue 42: no
partial read proves that a reference names one person -- another account may hold it, in
another case, as username or e-mail), or, past ``MAX_SCOPED_LOOKUPS`` searches, the whole
user list is read instead. The cost is the change's: ``2 + k + look-ups`` read calls, the
look-ups being the touched set's distinct references (or the user list's pages), and for
k = 3 at most 1.0 s from process start to exit (issue 34). A full plan of the same change
is timed beside it.

    .venv/bin/python bench/bench_scoped.py [--repeats 3]
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import NO_WAIT, MeasurementError, QuietGate, sandbox_site
from bench.report import ScenarioResult
from bench.sites import (
    LATENCY_MS,
    SIZES,
    ReadFormula,
    manifest_for,
    site_seed,
    write_manifest,
)
from bench.steps import MANIFEST, adopt, repeat, standalone, tool_args
from reconciler.engine.read.site_read import MAX_SCOPED_LOOKUPS

CHANGED = (3, 30, 300)
CALLS_ALLOWED = 2  # workspace_list and users_location_access (groups deleted by hand)
WALL_TARGET_S = 1.0  # k = 3, from process start to exit


def look_ups_allowed(manifest: dict[str, Any], k: int, users: int) -> int:
    """The searches a scoped plan of ``changed_manifest(base, k)`` makes: one per distinct
    reference of the touched workspaces and group, or the user list's pages when that is
    more than ``MAX_SCOPED_LOOKUPS`` searches (``engine/read/site_read.py``)."""
    touched = [*_touched(manifest["workspaces"], k), manifest["groups"][0]]
    references = {
        str(user) for entry in touched for user in entry.get("users", entry.get("members", []))
    }
    if len(references) > MAX_SCOPED_LOOKUPS:
        return ReadFormula.for_site(users, 0).user_list
    return len(references)


def _touched(workspaces: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """The ``k`` workspaces ``changed_manifest`` changes, spread over the site."""
    return workspaces[:: max(1, len(workspaces) // k)][:k]


def changed_manifest(base: dict[str, Any], k: int) -> dict[str, Any]:
    """``base`` with ``k`` workspaces (spread over the site) and one group given one more
    member each: a user the manifest already names, so every reference is resolved before."""
    manifest = copy.deepcopy(base)
    named = sorted({user for ws in manifest["workspaces"] for user in ws["users"]})
    for workspace in _touched(manifest["workspaces"], k):
        workspace["users"].append(next(u for u in named if u not in workspace["users"]))
    group = manifest["groups"][0]
    group["members"].append(next(u for u in named if u not in group["members"]))
    return manifest


def bench_scoped(
    repeats: int, keep: bool = False, gate: QuietGate = NO_WAIT
) -> list[ScenarioResult]:
    size = SIZES["large"]
    seed = site_seed(size)
    base = manifest_for(seed)
    results = []
    with sandbox_site(seed, "scoped-large", LATENCY_MS, keep, gate) as site:
        write_manifest(site.workdir / MANIFEST, base)
        adopt(site)
        for k in CHANGED:
            write_manifest(site.workdir / MANIFEST, changed_manifest(base, k))
            runs = repeat(site, tool_args("plan", "--changed", "--detailed-exitcode"), repeats, 2)
            if "Scoped to what changed" not in runs[0].stdout:
                raise MeasurementError(f"the plan was not scoped:\n{runs[0].stdout[:2000]}")
            if f"{k + 1} to change" not in runs[0].stdout:
                raise MeasurementError(f"not the expected plan:\n{runs[0].stdout[-2000:]}")
            results.append(ScenarioResult.of(size, f"(e) plan --changed, k={k}", runs))
        full = repeat(site, tool_args("plan", "--detailed-exitcode"), repeats, 2)
        results.append(ScenarioResult.of(size, f"(e) full plan, k={CHANGED[-1]}", full))
    return results


def scoped_targets(results: list[ScenarioResult]) -> list[tuple[str, str, str, bool]]:
    """(what, limit, measured, met) for each k: calls within 2 + k + the look-ups of the
    touched set's references, and the wall for k = 3."""
    size = SIZES["large"]
    base = manifest_for(site_seed(size))
    rows = []
    for result in results:
        if "--changed" not in result.scenario:
            continue
        k = int(result.scenario.rsplit("=", 1)[1])
        look_ups = look_ups_allowed(changed_manifest(base, k), k, size.users)
        limit = CALLS_ALLOWED + k + look_ups
        by_method = ", ".join(f"{m} {n}" for m, n in sorted(result.run.calls.items()))
        rows.append(
            (
                f"scoped plan, k={k}: read calls",
                f"≤ 2 + {k} + {look_ups} = {limit}",
                f"{result.run.reads} ({by_method})",
                result.run.reads <= limit,
            )
        )
        if k == CHANGED[0]:
            rows.append(
                (
                    f"scoped plan, k={k}: wall from process start",
                    f"≤ {WALL_TARGET_S:.1f} s",
                    f"{result.run.wall_s:.2f} s",
                    result.run.wall_s <= WALL_TARGET_S,
                )
            )
    return rows


def main() -> None:
    standalone(__doc__, bench_scoped, scoped_targets)


if __name__ == "__main__":
    main()
