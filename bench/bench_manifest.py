"""Benchmark: loading the 1,000-workspace manifest (the large site's), and the schema check.

Prints the median of ``--repeats`` runs of ``load_manifest`` (read, compose, build, schema,
rules, normalise) and, for the same document, the valid-case schema check by the generated
code (``fastjsonschema``) beside jsonschema's full walk.

    .venv/bin/python bench/bench_manifest.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sites import SIZES, manifest_for, site_seed, write_manifest
from reconciler.engine.planning.manifest_snapshot import desired_from_data, desired_to_data
from reconciler.manifest import load_manifest
from reconciler.manifest.schema import _validator, is_valid
from reconciler.manifest.source import read_document


def median_seconds(
    work: object, repeats: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    timings = []
    for _ in range(repeats):
        started = clock()
        work()  # type: ignore[operator]
        timings.append(clock() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    seed = site_seed(SIZES["large"])
    with tempfile.TemporaryDirectory() as scratch:
        path = write_manifest(Path(scratch) / "site.yaml", manifest_for(seed))
        result = load_manifest([str(path)])
        assert result.desired is not None, [f.render() for f in result.findings]
        workspaces = len(result.desired.workspaces)
        load = median_seconds(lambda: load_manifest([str(path)]), args.repeats)
        load_cpu = median_seconds(
            lambda: load_manifest([str(path)]), args.repeats, time.process_time
        )
        document, _ = read_document(path, "site.yaml")
        assert document is not None
        check, walk = is_valid(), _validator()
        generated = median_seconds(lambda: check(document.data), args.repeats)
        jsonschema = median_seconds(lambda: list(walk.iter_errors(document.data)), args.repeats)
        desired = result.desired
        snapshot = desired_to_data(desired)
        size = len(json.dumps(snapshot, separators=(",", ":")))
        write = median_seconds(lambda: desired_to_data(desired), args.repeats)
        read = median_seconds(lambda: desired_from_data(snapshot), args.repeats)
    print(f"manifest of {workspaces:,} workspaces, median of {args.repeats} runs")
    print(f"  load_manifest (read, compose, build, schema, rules): {load * 1000:8.1f} ms")
    print(f"  load_manifest, CPU time (steadier on a shared host): {load_cpu * 1000:8.1f} ms")
    print(f"  schema check, fastjsonschema (generated code):      {generated * 1000:8.1f} ms")
    print(f"  schema check, jsonschema (its full walk):            {jsonschema * 1000:8.1f} ms")
    print(f"  plan's manifest snapshot, written by the codec:      {write * 1000:8.1f} ms")
    print(f"  plan's manifest snapshot, read by the codec:         {read * 1000:8.1f} ms")
    print(f"  plan's manifest snapshot, size (compact JSON):       {size / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
