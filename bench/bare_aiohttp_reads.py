"""The fastest client there is here, as the plan's peer: the plan's reads with bare aiohttp.

Reads exactly what ``reconciler plan`` reads on the bench's sites -- ``workspace_list`` then
``workspace_info`` of every workspace, ``users_location_access`` at ``/`` then every
``user_list`` page at once -- through one bare ``aiohttp.ClientSession`` on uvloop's event
loop (the loop the tool runs on), 8 calls at a time, each signed and its JSON parsed, and
nothing more: no checks, no records, no comparison, no plan, no output. Run as its own
process (``SandboxSite.measure``), so its CPU and wall time, like the tool's, count the
interpreter and its imports. Issue 47 holds the whole plan to this loop's wall and CPU,
measured in the same run (``bench_peers.py``).

    RECONCILER_SITE_URL=... RECONCILER_API_KEY=... RECONCILER_API_SECRET=... \\
        .venv/bin/python bench/bare_aiohttp_reads.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import uvloop
import yarl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.signing import signed_get_url  # the bare httpx loop's signer too

CONCURRENCY = 8  # the tool's default (bench.sites.CONCURRENCY, not imported: keep this bare)
PAGE_SIZE = 50  # users per user_list page


async def read(url: str, key: str, secret: str) -> Counter[str]:
    calls: Counter[str] = Counter()
    connector = aiohttp.TCPConnector(limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector) as http:
        slots = asyncio.Semaphore(CONCURRENCY)

        async def get(method: str, **params: object) -> Any:
            async with slots:
                calls[method] += 1
                signed = signed_get_url(url, method, params, api_key=key, api_secret=secret)
                async with http.get(yarl.URL(signed, encoded=True)) as response:
                    response.raise_for_status()
                    return json.loads(await response.read())

        async def workspaces() -> None:
            listed = (await get("workspace_list"))["workspaceList"]["workspaces"]
            await asyncio.gather(*(get("workspace_info", workspace_id=e["id"]) for e in listed))

        async def users() -> None:
            located = (await get("users_location_access", path="/"))["usersLocationAccess"]
            pages = sum(1 for entry in located if entry.get("uType") == 1) // PAGE_SIZE + 1
            await asyncio.gather(*(get("user_list", current_page=n) for n in range(1, pages + 1)))

        await asyncio.gather(workspaces(), users())
    return calls


def main() -> None:
    env = os.environ
    calls = uvloop.run(
        read(env["RECONCILER_SITE_URL"], env["RECONCILER_API_KEY"], env["RECONCILER_API_SECRET"])
    )
    print(json.dumps(dict(sorted(calls.items()))))


if __name__ == "__main__":
    main()
