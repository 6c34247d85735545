"""Synthetic seeds of any size, for benchmarks and load tests.

The first two users carry the example seed's credentials (``sandbox-admin-key`` /
``sandbox-admin-secret`` and ``sandbox-viewer-key`` / ``sandbox-viewer-secret``), so scripts
written against the example site work against a big one unchanged. The layout is
deterministic for a given ``seed``, so two runs of a benchmark see the same site.
"""

from __future__ import annotations

import random
from typing import Any


def synthetic_seed(
    users: int = 5000, workspaces: int = 1000, groups: int = 200, *, seed: int = 0
) -> dict[str, Any]:
    """A seed mapping with ``users`` users, ``workspaces`` workspaces of 5-20 members each and
    ``groups`` groups of 0-30 members each."""
    if users < 2:
        raise ValueError("a synthetic site needs at least 2 users (the administrator and a viewer)")
    rng = random.Random(seed)
    user_entries: list[dict[str, Any]] = [
        {"id": 1, "username": "admin", "email": "admin@bench.example", "first_name": "Site",
         "last_name": "Admin", "admin": True, "api_key": "sandbox-admin-key",
         "api_secret": "sandbox-admin-secret"},
        {"id": 2, "username": "viewer", "email": "viewer@bench.example", "first_name": "Vera",
         "last_name": "Viewer", "api_key": "sandbox-viewer-key",
         "api_secret": "sandbox-viewer-secret"},
    ]  # fmt: skip
    user_entries += [
        {"id": n, "username": f"user{n:05}", "email": f"user{n:05}@bench.example",
         "first_name": f"First{n % 97}", "last_name": f"Last{n:05}"}
        for n in range(3, users + 1)
    ]  # fmt: skip
    user_ids = [entry["id"] for entry in user_entries]
    workspace_entries = [
        {"name": f"Bench Workspace {n:05}",
         "users": rng.sample(user_ids, min(len(user_ids), rng.randint(5, 20)))}
        for n in range(1, workspaces + 1)
    ]  # fmt: skip
    group_entries = [
        {"name": f"bench-group-{n:04}",
         "members": rng.sample(user_ids, min(len(user_ids), rng.randint(0, 30)))}
        for n in range(1, groups + 1)
    ]  # fmt: skip
    return {"users": user_entries, "workspaces": workspace_entries, "groups": group_entries}
