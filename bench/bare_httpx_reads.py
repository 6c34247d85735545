"""The bare loop the tool's CPU is held to: the plan's reads, with nothing but httpx.

Reads exactly what ``reconciler plan`` reads on the bench's sites -- ``workspace_list`` then
``workspace_info`` of every workspace, ``users_location_access`` at ``/`` then every
``user_list`` page at once -- through a bare ``httpx.AsyncClient``, 8 calls at a time, each
signed and its JSON parsed, and nothing more: no records, no comparison, no plan. Run as its
own process (``SandboxSite.measure``), so its CPU, like the tool's, counts the interpreter
and its imports. Issue 34's target: the whole plan process spends no more CPU than this.

    RECONCILER_SITE_URL=... RECONCILER_API_KEY=... RECONCILER_API_SECRET=... \\
        .venv/bin/python bench/bare_httpx_reads.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.signing import signed_get_url

CONCURRENCY = 8  # the tool's default (bench.sites.CONCURRENCY, not imported: keep this bare)
PAGE_SIZE = 50  # users per user_list page


async def read(url: str, key: str, secret: str) -> Counter[str]:
    calls: Counter[str] = Counter()
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=60) as http:
        slots = asyncio.Semaphore(CONCURRENCY)

        async def get(method: str, **params: object) -> Any:
            async with slots:
                calls[method] += 1
                signed = signed_get_url(url, method, params, api_key=key, api_secret=secret)
                response = await http.get(signed)
                response.raise_for_status()
                return response.json()

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
    calls = asyncio.run(
        read(env["RECONCILER_SITE_URL"], env["RECONCILER_API_KEY"], env["RECONCILER_API_SECRET"])
    )
    print(json.dumps(dict(sorted(calls.items()))))


if __name__ == "__main__":
    main()
