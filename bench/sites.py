"""The synthetic sites the benchmarks measure, and the manifests that describe them.

The sandbox is seeded with ``synthetic_seed`` (deterministic for a given size), a share of
its workspaces is given overrides and ``root_access: false`` so the read has settings to
compare, and a manifest is written from the same seed. Adopting that manifest makes the
whole site managed, so a plan says "No changes." without first building a 5,000-user site
through the tool, which would take longer than the benchmark itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reconciler.sandbox.synthetic import synthetic_seed
from reconciler.spec import USER_LIST_PAGE_SIZE

LATENCY_MS = 20
CONCURRENCY = 8
DRIFT_SHARE = 0.05
ONBOARDED_TEAMS = 200

PERMISSION_OVERRIDE = {"upload_files": True, "download_files": True, "create_folders": True}
NOTIFICATION_OVERRIDE = {"upload_notifications": True}


@dataclass(frozen=True, slots=True)
class Size:
    name: str
    users: int
    workspaces: int
    groups: int

    def __str__(self) -> str:
        return f"{self.name} ({self.users:,} users, {self.workspaces:,} ws, {self.groups} groups)"


SIZES = {
    size.name: size
    for size in (
        Size("small", 100, 20, 10),
        Size("medium", 1_000, 200, 50),
        Size("large", 5_000, 1_000, 200),
    )
}


GROWTH_SIZES = {
    size.name: size
    for size in (
        SIZES["large"],
        Size("xl", 30_000, 6_000, 1_200),
        Size("xxl", 50_000, 10_000, 2_000),
    )
}
"""Issue 47's growth: the large site, then 6 and 10 times it (the groups in proportion)."""

SPLIT_FROM_WORKSPACES = 10_000
"""A site of this many workspaces is written as a manifest directory of several files."""
WORKSPACES_PER_FILE = 2_500


def site_seed(size: Size) -> dict[str, Any]:
    """The sandbox seed of ``size``: synthetic users, workspaces (5-20 members) and groups,
    with a permission override on every 4th workspace, a notification override on every 7th
    and ``root_access: false`` on every 10th."""
    seed = synthetic_seed(size.users, size.workspaces, size.groups)
    for number, workspace in enumerate(seed["workspaces"]):
        if number % 4 == 0:
            workspace["permissions"] = dict(PERMISSION_OVERRIDE)
        if number % 7 == 0:
            workspace["notifications"] = dict(NOTIFICATION_OVERRIDE)
        if number % 10 == 0:
            workspace["root_access"] = False
    return seed


def manifest_for(seed: dict[str, Any]) -> dict[str, Any]:
    """A version-1 manifest that declares exactly the seeded workspaces and groups.

    Users are named by username, as a person would write them; ``root_access`` and the
    overrides are written as seeded (the API cannot report ``root_access``: adopt records it).
    """
    names = {user["id"]: user["username"] for user in seed["users"]}
    workspaces = []
    for entry in seed["workspaces"]:
        workspace: dict[str, Any] = {"name": entry["name"]}
        if not entry.get("root_access", True):
            workspace["root_access"] = False
        workspace["users"] = sorted(names[uid] for uid in entry["users"])
        for key in ("permissions", "notifications"):
            if key in entry:
                workspace[key] = dict(entry[key])
        workspaces.append(workspace)
    groups = [
        {"name": group["name"], "members": sorted(names[uid] for uid in group["members"])}
        for group in seed["groups"]
    ]
    return {"version": 1, "workspaces": workspaces, "groups": groups}


def with_teams(
    manifest: dict[str, Any], seed: dict[str, Any], count: int, *, rng_seed: int = 7
) -> dict[str, Any]:
    """``manifest`` plus ``count`` new teams (a workspace and a group each) of 3-6 existing
    users: the onboarding of a batch of teams."""
    rng = random.Random(rng_seed)
    usernames = [user["username"] for user in seed["users"][2:]]  # not the admin or viewer
    teams = [
        {
            "name": f"Onboarded Team {n:04}",
            "members": sorted(rng.sample(usernames, rng.randint(3, 6))),
        }
        for n in range(1, count + 1)
    ]
    return {**manifest, "teams": teams}


@dataclass(frozen=True, slots=True)
class MembershipDrift:
    """A change made behind the tool's back: one user leaves a workspace, another joins."""

    workspace: str
    removed_user: int
    added_user: int


def membership_drift(seed: dict[str, Any], share: float = DRIFT_SHARE) -> list[MembershipDrift]:
    """Drift for ``share`` of the workspaces (evenly spread), deterministic for a seed."""
    rng = random.Random(11)
    user_ids = [user["id"] for user in seed["users"][2:]]
    workspaces = seed["workspaces"]
    step = max(1, round(1 / share))
    drift = []
    for entry in workspaces[::step]:
        outsider = rng.choice([uid for uid in user_ids[:200] if uid not in entry["users"]])
        drift.append(MembershipDrift(entry["name"], entry["users"][0], outsider))
    return drift


def write_manifest(path: Path, manifest: dict[str, Any]) -> Path:
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump(manifest, Dumper=dumper, sort_keys=False), encoding="utf-8")
    return path


def write_manifest_dir(directory: Path, manifest: dict[str, Any]) -> Path:
    """``manifest`` as a directory of files: ``site.yaml`` (the version and the groups) and
    the workspaces ``WORKSPACES_PER_FILE`` a file, as a big site splits its manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    write_manifest(directory / "site.yaml", {"version": 1, "groups": manifest["groups"]})
    workspaces = manifest["workspaces"]
    for number, start in enumerate(range(0, len(workspaces), WORKSPACES_PER_FILE), 1):
        part = {"workspaces": workspaces[start : start + WORKSPACES_PER_FILE]}
        write_manifest(directory / f"workspaces-{number:02}.yaml", part)
    return directory


@dataclass(frozen=True, slots=True)
class ReadFormula:
    """The fewest read calls the API allows for a plan, by method (the issue's formula)."""

    workspace_list: int
    user_list: int
    workspace_info: int
    users_location_access: int

    @classmethod
    def for_site(cls, users: int, declared_existing_workspaces: int) -> ReadFormula:
        return cls(1, users // USER_LIST_PAGE_SIZE + 1, declared_existing_workspaces, 1)

    @property
    def total(self) -> int:
        return (
            self.workspace_list + self.user_list + self.workspace_info + self.users_location_access
        )

    def __str__(self) -> str:
        return f"1+{self.user_list}+{self.workspace_info}+1 = {self.total}"
