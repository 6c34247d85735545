"""Build model objects from the compact dicts the table-driven cases are written in."""

from __future__ import annotations

from typing import Any

from reconciler.core.records import RecordedGroup, RecordedWorkspace, Records
from reconciler.engine.records import document as records_document
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredUser,
    DesiredWorkspace,
    LiveGroup,
    LiveSite,
    LiveUser,
    LiveWorkspace,
    Policy,
    Source,
    UserRef,
)

DEFAULT_USERS = [
    {"id": 1001, "username": "alice"},
    {"id": 1002, "username": "bob"},
    {"id": 1003, "username": "carol"},
    {"id": 1004, "username": "dave"},
    {"id": 1005, "username": "erin"},
]


def _flags(value: Any) -> frozenset[str] | None:
    return None if value is None else frozenset(value)


def _refs(values: list[Any], path: str) -> tuple[UserRef, ...]:
    return tuple(
        UserRef(str(v), Source("case.yaml", 1, 1, f"{path}[{i}]")) for i, v in enumerate(values)
    )


def desired_site(data: dict[str, Any]) -> DesiredSite:
    workspaces = tuple(
        DesiredWorkspace(
            name=ws["name"],
            root_access=ws.get("root_access", True),
            users=_refs(ws.get("users", []), f"workspaces[{i}].users"),
            permissions=_flags(ws.get("permissions")),
            notifications=_flags(ws.get("notifications")),
            source=Source(ws.get("file", "case.yaml"), 1, 1, f"workspaces[{i}]"),
            previously=tuple(ws.get("previously", [])),
        )
        for i, ws in enumerate(data.get("workspaces", []))
    )
    groups = tuple(
        DesiredGroup(
            g["name"],
            _refs(g.get("members", []), f"groups[{i}].members"),
            Source(g.get("file", "case.yaml")),
            previously=tuple(g.get("previously", [])),
        )
        for i, g in enumerate(data.get("groups", []))
    )
    users = tuple(
        DesiredUser(
            u["username"],
            u.get("email", f"{u['username']}@acme.example"),
            Source(u.get("file", "case.yaml")),
            first_name=u.get("first_name", ""),
            last_name=u.get("last_name", ""),
            admin=u.get("admin", False),
            previously=tuple(u.get("previously", [])),
        )
        for u in data.get("users", [])
    )
    policy = data.get("policy", {})
    return DesiredSite(
        workspaces,
        groups,
        Policy(
            **{
                key: tuple(value) if isinstance(value, list) else value
                for key, value in policy.items()
            }
        ),
        users=users,
    )


def live_site(data: dict[str, Any]) -> LiveSite:
    users = tuple(
        LiveUser(
            u["id"],
            u["username"],
            u.get("email", f"{u['username']}@acme.example"),
            u.get("admin", False),
            u.get("first_name"),
            u.get("last_name"),
            u.get("active", True),
        )
        for u in data.get("users", DEFAULT_USERS)
    )
    workspaces = tuple(
        LiveWorkspace(
            id=ws["id"],
            name=ws["name"],
            path="/" + ws["name"].replace(" ", "_") + "_workspace/",
            users=(
                frozenset(ws.get("users", []))
                if "users" in ws or ws.get("observed", True)
                else None  # not read: a case says so with observed: false and no users
            ),
            permissions=frozenset(ws.get("permissions", [])),
            notifications=frozenset(ws.get("notifications", [])),
            details_observed=ws.get("observed", True),
        )
        for ws in data.get("workspaces", [])
    )
    groups = tuple(LiveGroup(g["id"], g["name"]) for g in data.get("groups", []))
    return LiveSite(
        users,
        workspaces,
        groups,
        groups_listed=data.get("groups_listed", bool(groups)),
        caller_id=data.get("caller"),
        users_complete=data.get("users_complete", False),
        memberships={
            int(user): frozenset(ids) for user, ids in data.get("memberships", {}).items()
        },
    )


def site_state(data: dict[str, Any]) -> Records:
    """Records as the cases write them: in the first records format, as a user upgrading has."""
    return records_document.from_data(
        {
            "format": 1,
            "site": "https://acme.example.net",
            "workspaces": {
                name: {"managed": True, "origin": "created", **item}
                for name, item in data.get("workspaces", {}).items()
            },
            "groups": {
                name: {"managed": True, "origin": "created", **item}
                for name, item in data.get("groups", {}).items()
            },
            "users": {
                name: {"managed": True, "origin": "created", **item}
                for name, item in data.get("users", {}).items()
            },
        },
        site="https://acme.example.net",
        where="the case file",
    )


__all__ = ["RecordedGroup", "RecordedWorkspace", "desired_site", "live_site", "site_state"]
