"""The onboarding apply's peer: its calls with bare aiohttp, in the same order of dependence.

What ``reconciler apply`` sends to onboard the teams of ``TEAMS.json`` (a list of
``{"name": ..., "members": [username, ...]}``), made by hand as the fastest client there is
here would make them: the plan's reads (``workspace_list`` then every ``workspace_info``,
``users_location_access`` at ``/`` then every ``user_list`` page at once, which also give the
members' IDs), then the groups' phase -- a ``user_group_add`` a team -- and once it has
ended the workspaces' phase -- a ``workspace_add`` a team, with its members, root access and
no overrides -- each phase 8 calls at a time, each call signed and its JSON parsed, and
nothing more: no plan, no journal, no records. Run as its own process, measured like the
tool (``bench_onboard.py``).

    RECONCILER_SITE_URL=... RECONCILER_API_KEY=... RECONCILER_API_SECRET=... \\
        .venv/bin/python bench/bare_aiohttp_onboard.py TEAMS.json
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

from tests.support.signing import signed_get_url, signed_post

CONCURRENCY = 8  # the tool's default
PAGE_SIZE = 50  # users per user_list page
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


async def onboard(url: str, key: str, secret: str, teams: list[dict[str, Any]]) -> Counter[str]:
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

        async def post(method: str, **params: object) -> Any:
            async with slots:
                calls[method] += 1
                where, body = signed_post(url, method, params, api_key=key, api_secret=secret)
                async with http.post(where, data=body.encode(), headers=FORM) as response:
                    response.raise_for_status()
                    answer = json.loads(await response.read())
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer

        async def workspaces() -> None:
            listed = (await get("workspace_list"))["workspaceList"]["workspaces"]
            await asyncio.gather(*(get("workspace_info", workspace_id=e["id"]) for e in listed))

        async def users() -> dict[str, int]:
            located = (await get("users_location_access", path="/"))["usersLocationAccess"]
            pages = sum(1 for entry in located if entry.get("uType") == 1) // PAGE_SIZE + 1
            read = await asyncio.gather(
                *(get("user_list", current_page=n) for n in range(1, pages + 1))
            )
            return {u["username"]: u["id"] for page in read for u in page["userList"]["users"]}

        _, ids = await asyncio.gather(workspaces(), users())
        members = {team["name"]: sorted(ids[name] for name in team["members"]) for team in teams}
        await asyncio.gather(
            *(
                post("user_group_add", name=name, group_users=",".join(map(str, users)))
                for name, users in members.items()
            )
        )
        await asyncio.gather(
            *(
                post(
                    "workspace_add",
                    name=name,
                    root_access=1,
                    workspace_users=",".join(map(str, users)),
                    workspace_override_permissions=0,
                    workspace_override_notifications=0,
                )
                for name, users in members.items()
            )
        )
    return calls


def main() -> None:
    env = os.environ
    teams = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    calls = uvloop.run(
        onboard(
            env["RECONCILER_SITE_URL"],
            env["RECONCILER_API_KEY"],
            env["RECONCILER_API_SECRET"],
            teams,
        )
    )
    print(json.dumps(dict(sorted(calls.items()))))


if __name__ == "__main__":
    main()
