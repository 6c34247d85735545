"""Hypothesis strategies for sites and manifests, and what a manifest asks of the site.

Names come from small pools on purpose: manifests of a sequence reuse each other's names and
the hand-made objects' names, so creations, member changes, replacements, prunes, protected
names and name clashes with objects the tool never managed all happen often.

Manifests are generated as YAML documents and read with ``load_manifest``, so defaults and
teams go through the real normaliser; ``Expectation`` then states, with user IDs resolved
independently of the engine, what the site must hold once the manifest is applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from reconciler.manifest import load_manifest
from reconciler.model import DesiredSite, Policy, UserRef
from tests.support.sandbox_site import example_seed

POOL_USERS: tuple[tuple[int, str, str], ...] = tuple(
    (user["id"], user["username"], user["email"])
    for user in example_seed()["users"]
    if 1001 <= user["id"] <= 1010
)
"""Ten of the example seed's users: the members of every generated object."""

WORKSPACE_NAMES = ("Finance", "Legal", "Ops", "Team A", "Sales", "Archive 2023", "Archive Old")
GROUP_NAMES = ("finance-team", "ops", "auditors", "Archive-crew", "all-staff")
TEAM_NAMES = ("Payments", "Data Platform", "Ops")
HAND_MADE_WORKSPACES = (*WORKSPACE_NAMES, "Legacy Scans", "Team_A", "Archive Legacy")
HAND_MADE_GROUPS = (*GROUP_NAMES, "old-contractors", "Payments")
PROTECT_PATTERNS = ("Archive*", "Legacy*", "*-team")

PERMISSION_BLOCKS: tuple[dict[str, bool], ...] = (
    {"upload_files": True, "download_files": True},
    {"download_files": True, "batch_download_files": True},
    {"create_folders": True},
    {"send_files": True, "send_files_non_user": True, "rename_files": True},
    {"delete_files": True, "batch_delete_files": True, "move_copy_files": True},
)
NOTIFICATION_BLOCKS: tuple[dict[str, bool], ...] = (
    {},
    {"upload_notifications": True},
    {"download_notifications": True},
    {"upload_notifications": True, "download_notifications": True},
)


def user_refs(min_size: int = 0, max_size: int = 5) -> st.SearchStrategy[list[str | int]]:
    """References to pool users in every form the manifest allows (name, e-mail, ID, case)."""

    def forms(user: tuple[int, str, str]) -> st.SearchStrategy[str | int]:
        number, name, email = user
        return st.sampled_from([name, email, str(number), number, name.capitalize(), email.upper()])

    ref = st.sampled_from(POOL_USERS).flatmap(forms)
    return st.lists(ref, min_size=min_size, max_size=max_size)


def _settings_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "root_access": st.booleans(),
            "permissions": st.none() | st.sampled_from(PERMISSION_BLOCKS),
            "notifications": st.none() | st.sampled_from(NOTIFICATION_BLOCKS),
        },
    )


def _unique_names(pool: Iterable[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(tuple(pool)), unique_by=str.casefold, max_size=5)


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    """A valid manifest document: workspaces, groups, teams, defaults and a policy."""
    document: dict[str, Any] = {"version": 1}
    defaults = draw(st.none() | _settings_block())
    if defaults:
        document["defaults"] = defaults
    ws_names = draw(_unique_names(WORKSPACE_NAMES))
    group_names = draw(_unique_names(GROUP_NAMES))
    taken = {name.casefold() for name in (*ws_names, *group_names)}
    team_names = [n for n in draw(_unique_names(TEAM_NAMES)) if n.casefold() not in taken]
    document["workspaces"] = [
        {"name": name, "users": draw(user_refs()), **draw(_settings_block())} for name in ws_names
    ]
    document["groups"] = [{"name": name, "members": draw(user_refs())} for name in group_names]
    document["teams"] = [
        {"name": name, "members": draw(user_refs(min_size=1)), "workspace": draw(_settings_block())}
        for name in team_names
    ]
    document["policy"] = {
        "prune": draw(st.booleans()),
        "protect": draw(st.lists(st.sampled_from(PROTECT_PATTERNS), unique=True, max_size=2)),
    }
    return document


@st.composite
def starting_seeds(draw: st.DrawFn) -> dict[str, Any]:
    """The example seed's users with hand-made workspaces and groups (groups may repeat a name)."""
    ids = [user[0] for user in POOL_USERS]
    members = st.lists(st.sampled_from(ids), unique=True, max_size=4)
    workspaces = [
        {
            "name": name,
            "users": draw(members),
            "root_access": draw(st.booleans()),
            "permissions": draw(st.none() | st.sampled_from(PERMISSION_BLOCKS)),
            "notifications": draw(st.none() | st.sampled_from(NOTIFICATION_BLOCKS)),
        }
        for name in draw(
            st.lists(
                st.sampled_from(HAND_MADE_WORKSPACES),
                unique_by=lambda n: n.replace(" ", "_"),
                max_size=4,
            )
        )
    ]
    groups = [
        {"name": name, "members": draw(members)}
        for name in draw(st.lists(st.sampled_from(HAND_MADE_GROUPS), max_size=4))
    ]
    return {"users": example_seed()["users"], "workspaces": workspaces, "groups": groups}


def load_desired(document: Mapping[str, Any], path: Path) -> DesiredSite:
    """The desired site of a generated document, through the real manifest loader."""
    path.write_text(yaml.safe_dump(dict(document), sort_keys=False), encoding="utf-8")
    return desired_from_file(path)


def desired_from_file(path: Path) -> DesiredSite:
    """The desired site of a manifest file that must be valid."""
    result = load_manifest([path])
    errors = [f.render() for f in result.findings if f.severity == "error"]
    assert result.desired is not None, errors
    return result.desired


# --- what a manifest asks of the site -----------------------------------------------------


def resolve_user(text: str, users: Iterable[Mapping[str, Any]]) -> int:
    """The ID a reference names (ID, or username / e-mail without regard to case)."""
    if text.isdigit():
        return int(text)
    folded = text.casefold()
    for user in users:
        if folded in (str(user["username"]).casefold(), str(user["email"]).casefold()):
            return int(user["id"])
    raise AssertionError(f"the generated reference {text!r} names no user")


@dataclass(frozen=True, slots=True)
class WantedWorkspace:
    users: frozenset[int]
    root_access: bool
    permissions: frozenset[str] | None
    notifications: frozenset[str] | None


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the site must hold for one manifest, by name, with user IDs."""

    workspaces: dict[str, WantedWorkspace]
    groups: dict[str, frozenset[int]]
    policy: Policy

    @classmethod
    def of(cls, desired: DesiredSite, users: Iterable[Mapping[str, Any]]) -> Expectation:
        users = list(users)

        def ids(refs: Iterable[UserRef]) -> frozenset[int]:
            return frozenset(resolve_user(ref.text, users) for ref in refs)

        return cls(
            workspaces={
                ws.name: WantedWorkspace(
                    ids(ws.users), ws.root_access, ws.permissions, ws.notifications
                )
                for ws in desired.workspaces
            },
            groups={group.name: ids(group.members) for group in desired.groups},
            policy=desired.policy,
        )
