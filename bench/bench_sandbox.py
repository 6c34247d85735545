"""Benchmark: can the real sandbox server sustain a steady 200 signed reads a second?

Starts ``reconciler sandbox serve`` on loopback with a synthetic site, then sends a fixed
number of requests on a fixed schedule (request i leaves at start + i/rate, never earlier),
a mix of the read methods, each signed as the site's API requires. Prints the achieved rate,
the error count and latency percentiles. A bounded loop: it always ends after --duration.

    .venv/bin/python bench/bench_sandbox.py [--rate 200] [--duration 10]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reconciler.sandbox.server import running_sandbox
from reconciler.sandbox.synthetic import synthetic_seed
from reconciler.spec import workspace_path
from tests.support.signing import signed_get_url

API_KEY, API_SECRET = "sandbox-admin-key", "sandbox-admin-secret"
USERS, WORKSPACES, GROUPS = 2000, 400, 50
IN_FLIGHT = 32


def signed_url(base_url: str, method: str, params: dict[str, object]) -> str:
    return signed_get_url(base_url, method, params, api_key=API_KEY, api_secret=API_SECRET)


def next_read(rng: random.Random, base_url: str) -> str:
    """One read of the mix: mostly the calls a reconciler's refresh makes."""
    workspace = rng.randint(1, WORKSPACES)
    reads: list[tuple[str, dict[str, object]]] = [
        ("user_info", {"user_id": rng.randint(1, USERS)}),
        ("workspace_list", {}),
        ("workspace_info", {"workspace_id": workspace}),
        ("users_location_access", {"path": workspace_path(f"Bench Workspace {workspace:05}")}),
        ("user_permissions_location", {"path": "/"}),
        ("user_list", {"current_page": rng.randint(1, USERS // 50)}),
    ]
    method, params = rng.choice(reads)
    return signed_url(base_url, method, params)


async def drive(base_url: str, rate: float, duration: float) -> tuple[list[float], int, float]:
    rng = random.Random(1)
    total = int(rate * duration)
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(limits=limits, timeout=10) as client:
        # At most IN_FLIGHT requests at once: a server that falls behind shows as a lower
        # achieved rate, not as thousands of queued tasks that slow the client itself down.
        in_flight = asyncio.Semaphore(IN_FLIGHT)

        async def one(url: str) -> None:
            nonlocal errors
            sent = time.perf_counter()
            try:
                response = await client.get(url)
                if response.status_code != 200 or b'"error"' in response.content[:12]:
                    errors += 1
            except httpx.HTTPError:
                errors += 1
            finally:
                in_flight.release()
            latencies.append(time.perf_counter() - sent)

        start = time.perf_counter()
        tasks = []
        for i in range(total):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await in_flight.acquire()
            tasks.append(asyncio.create_task(one(next_read(rng, base_url))))
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    return latencies, errors, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200.0, help="requests a second")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load")
    args = parser.parse_args()
    seed = synthetic_seed(USERS, WORKSPACES, GROUPS)
    with running_sandbox(seed) as base_url:
        warm = httpx.get(signed_url(base_url, "workspace_list", {}))
        assert warm.status_code == 200, warm.text
        latencies, errors, elapsed = asyncio.run(drive(base_url, args.rate, args.duration))
        served = httpx.get(f"{base_url}/_sandbox/calls").json()["total"]
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"site: {USERS} users, {WORKSPACES} workspaces, {GROUPS} groups (synthetic)")
    print(f"target rate:   {args.rate:.0f} req/s for {args.duration:.0f} s")
    print(f"sent:          {len(latencies)} requests (server counted {served - 1})")
    print(f"achieved rate: {len(latencies) / elapsed:.1f} req/s over {elapsed:.2f} s")
    print(f"errors:        {errors}")
    print(
        f"latency:       p50 {statistics.median(ordered) * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
