"""Baseline: the script a user would write by hand to read what a plan needs, one call at a time.

It reads the same facts as ``reconciler plan`` -- ``workspace_list``, ``users_location_access``
at ``/``, ``user_list`` pages until a short page, and ``workspace_info`` of every declared
workspace on the site -- with a plain synchronous httpx client and a small signing helper,
and compares nothing. The tool's plan is measured against it: same facts, same site, same
latency, so the ratio is what concurrency (and the tool's whole pipeline) buys.

    .venv/bin/python bench/baseline_sequential.py [--size small|medium|large]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import ADMIN_KEY, ADMIN_SECRET, sandbox_site
from bench.sites import LATENCY_MS, SIZES, site_seed
from tests.support.signing import signed_get_url

PAGE_SIZE = 50  # the API's users per user_list page (site-api-notes.md)


@dataclass(frozen=True, slots=True)
class BaselineRun:
    wall_s: float
    calls: dict[str, int]
    users: int
    workspaces_read: int

    @property
    def total(self) -> int:
        return sum(self.calls.values())


def read_site(base_url: str, declared: Iterable[str]) -> BaselineRun:
    """Read the site's users, groups, workspaces and the details of the declared workspaces."""
    wanted = set(declared)
    calls: Counter[str] = Counter()
    started = time.perf_counter()
    with httpx.Client(trust_env=False, timeout=30) as http:

        def get(method: str, **params: object) -> Any:
            calls[method] += 1
            url = signed_get_url(
                base_url, method, params, api_key=ADMIN_KEY, api_secret=ADMIN_SECRET
            )
            response = http.get(url)
            response.raise_for_status()
            return response.json()

        workspaces = get("workspace_list")["workspaceList"]["workspaces"]
        get("users_location_access", path="/")
        users: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = get("user_list", current_page=page)["userList"]["users"]
            users += batch
            if len(batch) < PAGE_SIZE:
                break
            page += 1
        details = [
            get("workspace_info", workspace_id=entry["id"])["workspaceInfo"]
            for entry in workspaces
            if entry["workspaceName"] in wanted
        ]
    return BaselineRun(time.perf_counter() - started, dict(calls), len(users), len(details))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    args = parser.parse_args()
    size = SIZES[args.size]
    seed = site_seed(size)
    with sandbox_site(seed, f"baseline-{size.name}", LATENCY_MS) as site:
        run = read_site(site.url, (ws["name"] for ws in seed["workspaces"]))
    print(
        f"{size}: {run.total} calls {dict(sorted(run.calls.items()))} in {run.wall_s:.2f} s "
        f"({run.users} users, {run.workspaces_read} workspaces read)"
    )


if __name__ == "__main__":
    main()
