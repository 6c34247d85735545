"""Benchmark: what each command imports before it does anything, by ``python -X importtime``.

Start-up is part of every run, and on the large plan it was a quarter of the wall time. Each
command imports only what it uses (issue 34): rich only to draw colours and progress bars,
deepdiff for ``state diff``, psycopg for PostgreSQL records, trustme for ``sandbox serve
--tls``, jsonschema to explain a schema error, starlette and uvicorn for the sandbox, aiohttp
when the network is used. This runs each command as a user would (``plan`` against a sandbox
server on loopback) with ``-X importtime``, and prints, per command, the time its imports
took (the median of ``--repeats`` runs) and which of those libraries it loaded.

    .venv/bin/python bench/bench_imports.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import REPO, compile_bytecode, sandbox_site
from bench.table import render_table

LIBRARIES = (
    "rich",
    "deepdiff",
    "psycopg",
    "trustme",
    "jsonschema",
    "starlette",
    "uvicorn",
    "aiohttp",
    "httpx",
    "yaml",
    "fastjsonschema",
    "structlog",
    "cattrs",
)
"""The libraries worth naming: the lazy ones first, then what most commands need."""

COMMANDS: dict[str, tuple[str, ...]] = {
    "--help": ("--help",),
    "validate": ("validate", "site.yaml"),
    "schema": ("schema",),
    "plan (network)": ("plan", "site.yaml"),
    "state history": ("state", "history", "site.yaml"),
}


def import_times(stderr: str) -> dict[str, float]:
    """Milliseconds spent importing each library's own modules (its dependencies not
    counted), and ``total``: every import of the command."""
    times: dict[str, float] = {"total": 0.0}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = (part.strip() for part in line[12:].split("|"))
        if not own.isdigit():
            continue  # the header line
        times["total"] += int(own) / 1000
        library = name.split(".", 1)[0]
        if library in LIBRARIES:
            times[library] = times.get(library, 0.0) + int(own) / 1000
    # an import refused on purpose (``sys.modules[name] = None``: rich hidden from structlog)
    # is listed too, at a few microseconds
    return {name: ms for name, ms in times.items() if ms > 0.05}


def measure(args: tuple[str, ...], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    command = [sys.executable, "-X", "importtime", "-m", "reconciler", *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return import_times(done.stderr)


def bench_imports(repeats: int) -> str:
    seed = yaml.safe_load((REPO / "reconciler/sandbox/seeds/example.yaml").read_text())
    compile_bytecode()
    rows = []
    with sandbox_site(seed, "imports", latency_ms=0) as site:
        shutil.copy(REPO / "examples" / "site.yaml", site.workdir / "site.yaml")
        for name, args in COMMANDS.items():
            runs = [measure(args, site.workdir, site.env) for _ in range(repeats)]
            loaded = [lib for lib in LIBRARIES if lib in runs[0]]
            rows.append(
                {
                    "command": name,
                    "imports": f"{statistics.median(r['total'] for r in runs):.0f} ms",
                    "libraries loaded (ms)": ", ".join(
                        f"{lib} {statistics.median(r.get(lib, 0.0) for r in runs):.0f}"
                        for lib in loaded
                    ),
                }
            )
    columns = ("command", "imports", "libraries loaded (ms)")
    return render_table(columns, rows, right=("imports",))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(bench_imports(args.repeats))


if __name__ == "__main__":
    main()
