"""Benchmark: how long one call takes against the sandbox, for the leanest client there is.

The floor of a plan counts each call as the sandbox's added latency (20 ms) plus the
sandbox's CPU shared by the calls in flight. What a call really takes also holds the
client's CPU, the loopback and the wait for one event loop on each side while other answers
are handled. This measures it without the tool: a bare ``aiohttp`` loop (about 0.2 ms of CPU
a call, the least any Python client spends) reading ``workspace_info`` from the large site,
1 and 8 calls in flight, and how precise the added latency itself is (``asyncio.sleep`` of
20 ms on asyncio's loop and on uvloop, which the sandbox serves on).

    .venv/bin/python bench/bench_latency.py [--calls 800]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import uvloop
import yarl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import ADMIN_KEY, ADMIN_SECRET, NO_WAIT, sandbox_site
from bench.sites import LATENCY_MS, SIZES, site_seed
from tests.support.signing import signed_get_url


async def _bare_reads(base_url: str, in_flight: int, calls: int) -> list[float]:
    """Milliseconds each ``workspace_info`` read took, ``in_flight`` at a time."""
    slots = asyncio.Semaphore(in_flight)
    took: list[float] = []
    connector = aiohttp.TCPConnector(limit=in_flight)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(number: int) -> None:
            async with slots:
                url = signed_get_url(
                    base_url,
                    "workspace_info",
                    {"workspace_id": number % 1000 + 1},
                    api_key=ADMIN_KEY,
                    api_secret=ADMIN_SECRET,
                )
                started = time.perf_counter()
                async with session.get(yarl.URL(url, encoded=True)) as answer:
                    await answer.read()
                took.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(one(number) for number in range(calls)))
    return took


async def _sleeps(seconds: float, times: int = 100) -> list[float]:
    took = []
    for _ in range(times):
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        took.append((time.perf_counter() - started) * 1000)
    return took


def _line(label: str, took: list[float]) -> str:
    return (
        f"  {label:<44} mean {statistics.mean(took):6.2f} ms"
        f"   median {statistics.median(took):6.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=800, help="reads at 8 in flight")
    args = parser.parse_args()
    runners: dict[str, Callable[[Coroutine[Any, Any, list[float]]], list[float]]] = {
        "asyncio": asyncio.run,
        "uvloop": uvloop.run,
    }
    print(f"asyncio.sleep({LATENCY_MS} ms), 100 times")
    for name, run in runners.items():
        print(_line(f"on {name}'s loop", run(_sleeps(LATENCY_MS / 1000))))
    with sandbox_site(site_seed(SIZES["large"]), "latency", LATENCY_MS, False, NO_WAIT) as site:
        print(f"bare aiohttp workspace_info reads, sandbox latency {LATENCY_MS} ms, large site")
        for in_flight, calls in ((1, 100), (8, args.calls)):
            took = uvloop.run(_bare_reads(site.url, in_flight, calls))
            print(_line(f"{calls} calls, {in_flight} in flight", took))


if __name__ == "__main__":
    main()
