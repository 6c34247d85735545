"""Benchmark: what one call costs the tool's process, against a bare httpx GET.

The plan's read is CPU-bound on the tool's one core long before it is latency-bound, so the
question is where a call's CPU goes. This sends the same ``workspace_info`` reads, 8 at a time,
through ``SiteClient`` (signing, retries, logging, decoding into records) on its network
transport (aiohttp, ``api/transport.py``), through ``SiteClient`` on httpx's own transport
(httpcore, as before issue 34), and through a bare ``httpx.AsyncClient`` that only signs and
parses the JSON, in one process, alternately, and reports the CPU per call of each. Issue 34:
the client on its transport at most half the CPU a call of the client on httpcore.

    .venv/bin/python bench/bench_http_stack.py [--calls 1000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import ADMIN_KEY, ADMIN_SECRET, NO_WAIT, QuietGate, sandbox_site
from bench.report import floor_s
from bench.sites import CONCURRENCY, LATENCY_MS, SIZES, site_seed
from bench.table import ratio, render_table, seconds
from reconciler import aio
from reconciler.api.client import SiteClient
from reconciler.api.config import ClientConfig, Secret
from reconciler.logs import configure_logging
from tests.support.signing import signed_get_url

Reader = Callable[[str, list[int]], Awaitable[None]]


async def bare_httpx(url: str, workspace_ids: list[int]) -> None:
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=30) as http:
        slots = asyncio.Semaphore(CONCURRENCY)

        async def one(workspace_id: int) -> None:
            async with slots:
                params = {"workspace_id": workspace_id}
                signed = signed_get_url(
                    url, "workspace_info", params, api_key=ADMIN_KEY, api_secret=ADMIN_SECRET
                )
                (await http.get(signed)).json()

        await asyncio.gather(*(one(workspace_id) for workspace_id in workspace_ids))


async def site_client(url: str, workspace_ids: list[int]) -> None:
    config = ClientConfig(url, ADMIN_KEY, Secret(ADMIN_SECRET), concurrency=CONCURRENCY)
    async with SiteClient(config) as client:
        await asyncio.gather(*(client.workspace_info(wid) for wid in workspace_ids))


async def site_client_on_httpcore(url: str, workspace_ids: list[int]) -> None:
    """``SiteClient`` on httpx's own transport (httpcore, h11), as it was before issue 34."""
    config = ClientConfig(url, ADMIN_KEY, Secret(ADMIN_SECRET), concurrency=CONCURRENCY)
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    transport = httpx.AsyncHTTPTransport(limits=limits, retries=0)
    async with SiteClient(config, transport=transport) as client:
        await asyncio.gather(*(client.workspace_info(wid) for wid in workspace_ids))


def measure(reader: Reader, url: str, workspace_ids: list[int]) -> tuple[float, float]:
    """Wall and CPU seconds of one batch (a warm-up batch of 2 x concurrency first), on the
    event loop the reader runs on: the commands' (``aio.run``, uvloop) for the client as the
    tool runs it, asyncio's own for the others, as they ran before."""

    async def go() -> tuple[float, float]:
        await reader(url, workspace_ids[: 2 * CONCURRENCY])
        wall, cpu = time.perf_counter(), time.process_time()
        await reader(url, workspace_ids)
        return time.perf_counter() - wall, time.process_time() - cpu

    return aio.run(go()) if reader is site_client else asyncio.run(go())


def bench_http_stack(calls: int = 1000, repeats: int = 2, gate: QuietGate = NO_WAIT) -> str:
    size = SIZES["large"]
    readers: dict[str, Reader] = {
        "bare httpx GET + json": bare_httpx,
        "SiteClient on httpcore (before)": site_client_on_httpcore,
        "SiteClient (aiohttp, uvloop)": site_client,
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in readers}
    workspace_ids = [1 + n % size.workspaces for n in range(calls)]
    with sandbox_site(site_seed(size), "http-stack", LATENCY_MS) as site:
        for _ in range(repeats):
            for name, reader in readers.items():
                gate.wait()
                samples[name].append(measure(reader, site.url, workspace_ids))
    floor = floor_s(calls)
    rows = []
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rows.append(
            {
                "client": name,
                "calls": str(calls),
                "wall": seconds(wall),
                "floor": seconds(floor),
                "wall / floor": ratio(wall / floor),
                "CPU": seconds(cpu),
                "CPU a call": f"{1000 * cpu / calls:.2f} ms",
            }
        )
    columns = ("client", "calls", "wall", "floor", "wall / floor", "CPU", "CPU a call")
    return render_table(columns, rows, right=columns[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    configure_logging("console", verbosity=0)
    print(bench_http_stack(args.calls, args.repeats))


if __name__ == "__main__":
    main()
