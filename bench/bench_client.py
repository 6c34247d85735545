"""Benchmark: how close does the client come to ``calls * latency / concurrency``?

Starts the real sandbox server over loopback with a fixed added latency and enough users,
reads ``user_info`` for each of them through ``SiteClient``, and prints the wall time next to
the ideal. The ratio is what the client costs beyond the site's own latency: signing,
decoding, logging, the semaphore and connection handling. Target: at most 1.3.

    .venv/bin/python bench/bench_client.py [--calls 2000] [--concurrency 8] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.logs import configure_logging
from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.settings import SandboxSettings

API_KEY, API_SECRET = "bench-admin-key", "bench-admin-secret"
ADMIN = {
    "id": 1,
    "username": "admin",
    "email": "admin@bench.example",
    "admin": True,
    "api_key": API_KEY,
    "api_secret": API_SECRET,
}
FIRST_USER_ID = 10_000


def bench_seed(users: int) -> dict[str, Any]:
    """An administrator and ``users`` ordinary users."""
    people = [
        {
            "id": FIRST_USER_ID + n,
            "username": f"user{n:05d}",
            "email": f"user{n:05d}@bench.example",
            "first_name": "Bench",
            "last_name": f"User{n:05d}",
        }
        for n in range(users)
    ]
    return {"users": [ADMIN, *people]}


async def read_users(url: str, calls: int, concurrency: int) -> tuple[float, dict[str, Any]]:
    """Wall time of ``calls`` concurrent ``user_info`` reads (after a warm-up round), and the
    client's stats with its CPU seconds: on a shared machine the ratio depends on free CPU."""
    config = ClientConfig(url, API_KEY, Secret(API_SECRET), concurrency=concurrency)
    async with SiteClient(config) as client:
        await asyncio.gather(*(client.user_info(FIRST_USER_ID + n) for n in range(concurrency)))
        started, cpu = time.perf_counter(), time.process_time()
        users = await asyncio.gather(*(client.user_info(FIRST_USER_ID + n) for n in range(calls)))
        wall = time.perf_counter() - started
        assert len({user.id for user in users}) == calls
        return wall, {**client.stats.as_dict(), "cpu": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency-ms", type=int, default=20)
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    settings = SandboxSettings(latency_ms=args.latency_ms)
    load = os.getloadavg()
    with running_sandbox(bench_seed(args.calls), settings) as url:
        wall, stats = asyncio.run(read_users(url, args.calls, args.concurrency))
    ideal = args.calls * args.latency_ms / 1000 / args.concurrency
    print(f"{'calls':>6} {'concurrency':>11} {'latency':>8} {'wall':>8} {'ideal':>8} {'ratio':>6}")
    print(
        f"{args.calls:>6} {args.concurrency:>11} {args.latency_ms:>6}ms {wall:>7.2f}s "
        f"{ideal:>7.2f}s {wall / ideal:>6.2f}"
    )
    print(
        f"requests sent (warm-up included): {stats['total']}, retries: {stats['retries']}, "
        f"client CPU: {stats['cpu'] * 1000 / args.calls:.2f} ms a call, "
        f"load average before/after: {load[0]:.2f}/{os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs (server and client share them)"
    )


if __name__ == "__main__":
    main()
