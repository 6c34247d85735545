"""The machine a benchmark ran on, how idle it was, and the commit it measured."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

from bench.measure import REPO, QuietGate
from bench.sites import CONCURRENCY, LATENCY_MS


def describe_load(gate: QuietGate, load: float | None) -> str:
    if load is None:
        return "unknown (no /proc/stat)"
    quiet = "idle" if load <= gate.QUIET_CORES else f"busy after waiting {gate.waited_s:.0f} s"
    return f"{load:.2f} cores busy before the run ({quiet})"


def machine_description(idle: str) -> list[str]:
    cpu = "unknown"
    memory = "unknown"
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
        kib = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        memory = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return [
        f"- date: {time.strftime('%Y-%m-%d %H:%M %Z')}",
        f"- CPU: {cpu}, {os.cpu_count()} cores (`nproc`); memory {memory}",
        f"- OS: {platform.system()} {platform.release()}; Python {platform.python_version()}",
        f"- revision: {_revision()}",
        f"- load: {idle}; the tool, the sandbox server and anything else share these cores",
        f"- settings: latency {LATENCY_MS} ms a call (added by the sandbox), "
        f"concurrency {CONCURRENCY} (the tool's default), no rate limit",
        "- the tool's bytecode is compiled before the runs, as `pip install` leaves an installed "
        "tool (PYTHONDONTWRITEBYTECODE is "
        f"{'set' if os.environ.get('PYTHONDONTWRITEBYTECODE') else 'not set'} here)",
    ]


def _revision() -> str:
    """The commit measured, and whether the work tree had changes (read-only git calls)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head or 'unknown'}{' with uncommitted changes' if dirty else ''}"
