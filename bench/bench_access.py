"""Benchmark: ``reconciler access`` on the large site, beside a full plan of the same site.

Seeds the large site (latency 20 ms, concurrency 8), adopts it and applies once (untimed, as
for the plans), then times, repeated: a full plan (the reference), the whole-site access
report in text and in JSON, and the reports narrowed to one workspace and to one person.
Targets: the whole-site report makes no more API calls than the full plan, method by method;
it exits within 1.0 s of the last answer; a narrowed report reads a handful of calls.

    .venv/bin/python bench/bench_access.py [--repeats 3] [--keep]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import NO_WAIT, QuietGate, sandbox_site
from bench.report import ScenarioResult
from bench.sites import LATENCY_MS, SIZES, manifest_for, site_seed, write_manifest
from bench.steps import MANIFEST, adopt, repeat, standalone, tool_args

RENDER_TARGET_S = 1.0  # from the last answer to exit
NARROW_TARGET_CALLS = 30


def narrow_targets(seed: dict[str, Any]) -> tuple[str, str]:
    """A workspace of the site and a member of it (not an administrator)."""
    workspace = seed["workspaces"][1]
    names = {user["id"]: user["username"] for user in seed["users"]}
    return workspace["name"], names[workspace["users"][0]]


def bench_access(
    repeats: int, keep: bool = False, gate: QuietGate = NO_WAIT
) -> list[ScenarioResult]:
    size = SIZES["large"]
    seed = site_seed(size)
    workspace, person = narrow_targets(seed)
    scenarios = [
        ("(f) full plan", tool_args("plan", "--detailed-exitcode")),
        ("(f) access, text", tool_args("access")),
        ("(f) access, json", tool_args("access", "--format", "json")),
        ("(f) access --workspace", tool_args("access", "--workspace", workspace)),
        ("(f) access --user", tool_args("access", "--user", person)),
    ]
    results = []
    with sandbox_site(seed, "access-large", LATENCY_MS, keep, gate) as site:
        write_manifest(site.workdir / MANIFEST, manifest_for(seed))
        adopt(site)
        for name, args in scenarios:
            results.append(ScenarioResult.of(size, name, repeat(site, args, repeats, 0)))
    return results


def access_targets(results: list[ScenarioResult]) -> list[tuple[str, str, str, bool]]:
    """(what, limit, measured, met)."""
    plan = next(r for r in results if r.scenario == "(f) full plan")
    rows = []
    if plan.after_last_answer_s is not None:
        rows.append(
            (
                "(f) full plan: last answer to exit (for reference, under the same load)",
                "-",
                f"{plan.after_last_answer_s:.2f} s",
                True,
            )
        )
    for result in results:
        if "access" not in result.scenario:
            continue
        by_method = ", ".join(f"{m} {n}" for m, n in sorted(result.run.calls.items()))
        if "--" in result.scenario:
            limit, met = f"≤ {NARROW_TARGET_CALLS}", result.run.reads <= NARROW_TARGET_CALLS
        else:
            within = all(n <= plan.run.calls.get(m, 0) for m, n in result.run.calls.items())
            limit, met = f"≤ the full plan's {plan.run.reads}, by method", within
        rows.append(
            (f"{result.scenario}: read calls", limit, f"{result.run.reads} ({by_method})", met)
        )
        after = result.after_last_answer_s
        if after is not None and "--" not in result.scenario:
            rows.append(
                (
                    f"{result.scenario}: last answer to exit",
                    f"≤ {RENDER_TARGET_S:.1f} s",
                    f"{after:.2f} s",
                    after <= RENDER_TARGET_S,
                )
            )
    return rows


def main() -> None:
    standalone(__doc__, bench_access, access_targets)


if __name__ == "__main__":
    main()
