"""Benchmark (issue 47): the whole plan against the fastest clients' reads alone, side by side.

On one sandbox (latency 20 ms, 8 in flight), adopted once (untimed), each round runs, in
turn and each round in another order:

- ``reconciler plan MANIFEST --detailed-exitcode``, as a user runs it (no change: exit 0),
- ``reconciler access MANIFEST``, the whole site's access report,
- ``bare_aiohttp_reads.py``: the plan's reads and nothing else, bare aiohttp on uvloop,
- ``bare_httpx_reads.py``: the same reads, bare httpx;

every one of them must make exactly the calls the plan makes, method by method. The figures
are medians of ``--repeats`` rounds (5). Targets on the large site: the plan's wall at most
1.10 x the bare aiohttp loop's, its CPU at most 2 x that loop's and below the bare httpx
loop's, ``access`` within 1.15 x the aiohttp loop's wall; on the growth sizes (``--size xl``:
30,000 users and 6,000 workspaces, ``xxl``: 50,000 and 10,000 in a manifest directory of
several files) the plan within 1.15 x and peak RSS at most 300 MB and 400 MB, and ``export``
of the site written as a directory that ``validate`` accepts, no file over the per-file limit.

    .venv/bin/python bench/bench_peers.py [--size large|xl|xxl] [--repeats 5] [--write]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe_load, machine_description
from bench.measure import (
    NO_WAIT,
    CommandRun,
    MeasurementError,
    QuietGate,
    SandboxSite,
    sandbox_site,
)
from bench.peers import (
    BARE_AIOHTTP,
    BARE_HTTPX,
    Contestant,
    Runs,
    interleaved,
    peers,
    peers_table,
    same_calls,
)
from bench.report import Target
from bench.results_file import write_section
from bench.sites import (
    GROWTH_SIZES,
    LATENCY_MS,
    SPLIT_FROM_WORKSPACES,
    Size,
    manifest_for,
    site_seed,
    write_manifest,
    write_manifest_dir,
)
from bench.steps import MANIFEST, adopt, expect_no_changes
from bench.table import render_table
from reconciler.logs import configure_logging
from reconciler.manifest.source import MAX_FILE_BYTES

PLAN, ACCESS = "reconciler plan", "reconciler access"
MANIFEST_DIR = "site/"
WALL_LIMIT = {"large": 1.10}  # the growth sizes: GROWTH_WALL_LIMIT
GROWTH_WALL_LIMIT = 1.15
CPU_LIMIT = 2.0  # x the bare aiohttp loop's, large site
ACCESS_LIMIT = 1.15
RSS_LIMIT_MB = {"xl": 300, "xxl": 400}


@dataclass(frozen=True, slots=True)
class ExportCheck:
    """``export`` of the live site to a directory, then ``validate`` of what it wrote."""

    export: CommandRun
    validate: CommandRun
    files: int
    largest_bytes: int

    @property
    def met(self) -> bool:
        return self.validate.exit_code == 0 and self.largest_bytes <= MAX_FILE_BYTES

    def line(self) -> str:
        return (
            f"`export -o exported/` wrote {self.files:,} files in {self.export.wall_s:.2f} s "
            f"(peak RSS {self.export.peak_rss_mb:.0f} MB), the largest "
            f"{self.largest_bytes / 2**10:,.0f} KiB (the limit: {MAX_FILE_BYTES // 2**20} MiB a "
            f"file); `validate exported/` exited {self.validate.exit_code} in "
            f"{self.validate.wall_s:.2f} s"
        )


@dataclass(frozen=True, slots=True)
class PeersResult:
    size: Size
    results: dict[str, Runs]
    export: ExportCheck | None

    @property
    def plan(self) -> Runs:
        return self.results[PLAN]

    @property
    def aiohttp(self) -> Runs:
        return self.results[BARE_AIOHTTP]


def manifest_path(size: Size) -> str:
    return MANIFEST_DIR if size.workspaces >= SPLIT_FROM_WORKSPACES else MANIFEST


def prepare(site: SandboxSite, size: Size, seed: dict[str, object]) -> str:
    """Write the manifest, adopt the site and learn its groups' members (untimed, without
    the added latency: the learning apply of the largest site sends some 25,000 writes)."""
    manifest = manifest_path(size)
    described = manifest_for(seed)
    if manifest == MANIFEST:
        write_manifest(site.workdir / manifest, described)
    else:
        write_manifest_dir(site.workdir / manifest, described)
    site.control("settings", {"latency_ms": 0})
    adopt(site, manifest)
    site.control("settings", {"latency_ms": LATENCY_MS})
    return manifest


def check_export(site: SandboxSite) -> ExportCheck:
    """Export the site as a directory and validate it as written."""
    exported = site.run("export", "-o", "exported/", "--no-color").expect_exit(0)
    validated = site.run("validate", "exported/")
    files = [path for path in (site.workdir / "exported").rglob("*") if path.is_file()]
    largest = max((path.stat().st_size for path in files), default=0)
    return ExportCheck(exported, validated, len(files), largest)


def bench_peers(
    size: Size,
    repeats: int,
    keep: bool = False,
    gate: QuietGate = NO_WAIT,
    with_access: bool = True,
    with_export: bool = False,
) -> PeersResult:
    seed = site_seed(size)
    with sandbox_site(seed, f"peers-{size.name}", LATENCY_MS, keep, gate) as site:
        manifest = prepare(site, size, seed)
        reference = expect_no_changes(site, manifest).calls  # also warms the caches, untimed
        contestants = [
            Contestant(PLAN, ("plan", manifest, "--detailed-exitcode", "--no-color")),
            *([Contestant(ACCESS, ("access", manifest, "--no-color"))] if with_access else []),
            *peers(),
        ]
        results = interleaved(
            site, contestants, repeats, lambda name, run: same_calls(reference, name, run)
        )
        if "No changes." not in results[PLAN].runs[0].stdout:
            raise MeasurementError(f"the plan is not empty:\n{results[PLAN].runs[0].stdout}")
        export = check_export(site) if with_export else None
    return PeersResult(size, results, export)


def targets(result: PeersResult) -> list[Target]:
    plan, aiohttp = result.plan, result.aiohttp
    name = result.size.name
    wall_limit = WALL_LIMIT.get(name, GROWTH_WALL_LIMIT)
    rows = [
        Target(
            f"{name}: plan's wall, x the bare aiohttp loop's",
            f"≤ {wall_limit:.2f}x",
            f"{plan.wall_s / aiohttp.wall_s:.2f}x ({plan.wall_s:.2f} s / {aiohttp.wall_s:.2f} s)",
            plan.wall_s <= wall_limit * aiohttp.wall_s,
        )
    ]
    if name == "large":
        httpx = result.results[BARE_HTTPX]
        rows += [
            Target(
                "large: plan's CPU, x the bare aiohttp loop's",
                f"≤ {CPU_LIMIT:.1f}x",
                f"{plan.cpu_s / aiohttp.cpu_s:.2f}x ({plan.cpu_s:.2f} s / {aiohttp.cpu_s:.2f} s)",
                plan.cpu_s <= CPU_LIMIT * aiohttp.cpu_s,
            ),
            Target(
                "large: plan's CPU against the bare httpx loop's",
                "below",
                f"{plan.cpu_s:.2f} s against {httpx.cpu_s:.2f} s",
                plan.cpu_s < httpx.cpu_s,
            ),
        ]
    if ACCESS in result.results:
        access = result.results[ACCESS]
        rows.append(
            Target(
                f"{name}: access's wall, x the bare aiohttp loop's",
                f"≤ {ACCESS_LIMIT:.2f}x",
                f"{access.wall_s / aiohttp.wall_s:.2f}x ({access.wall_s:.2f} s)",
                access.wall_s <= ACCESS_LIMIT * aiohttp.wall_s,
            )
        )
    if name in RSS_LIMIT_MB:
        rows.append(
            Target(
                f"{name}: plan's peak RSS",
                f"≤ {RSS_LIMIT_MB[name]} MB",
                f"{plan.rss_mb:.0f} MB",
                plan.rss_mb <= RSS_LIMIT_MB[name],
            )
        )
    if result.export is not None:
        rows.append(
            Target(
                f"{name}: export to a directory, validate as written",
                f"exit 0, no file over {MAX_FILE_BYTES // 2**20} MiB",
                result.export.line(),
                result.export.met,
            )
        )
    return rows


def report(result: PeersResult, machine: list[str], took_s: float) -> str:
    size = result.size
    table = render_table(("target", "limit", "measured", "met"), [t.row() for t in targets(result)])
    return "\n".join(
        [
            f"## Side by side with the bare clients: {size} (issue 47)",
            "",
            f"`.venv/bin/python bench/bench_peers.py --size {size.name} "
            f"--repeats {len(result.plan.runs)}` in {took_s / 60:.1f} minutes; the manifest "
            + (
                "a directory of several files."
                if manifest_path(size) == MANIFEST_DIR
                else "one file."
            ),
            "",
            *machine,
            "",
            peers_table(result.results),
            "",
            table,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(GROWTH_SIZES), default="large")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (medians)")
    parser.add_argument("--keep", action="store_true", help="keep manifests/state in bench/out/")
    parser.add_argument("--no-access", action="store_true", help="leave access out")
    parser.add_argument("--export", action="store_true", help="check export and validate")
    parser.add_argument("--quiet-wait", type=float, default=0.0, help="seconds to wait for idle")
    parser.add_argument("--write", action="store_true", help="write its section of RESULTS.md")
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    started = time.monotonic()
    gate = QuietGate(args.quiet_wait)
    machine = machine_description(describe_load(gate, gate.wait()))
    size = GROWTH_SIZES[args.size]
    result = bench_peers(
        size, args.repeats, args.keep, gate, not args.no_access, args.export or size.name != "large"
    )
    machine.append(f"- waited {gate.waited_s:.0f} s in all for other work to end before runs")
    text = report(result, machine, time.monotonic() - started)
    print(text)
    if args.write:
        write_section(f"peers-{size.name}", text)


if __name__ == "__main__":
    main()
