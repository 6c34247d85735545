"""The manifest as a saved plan carries it, so that apply can derive the plan again.

A saved plan is a proposal, not an order: at apply time the plan is made again from this
snapshot against the live site and the records, and only actions that the fresh plan contains
with the same parameters are carried out. The snapshot is the normalised ``DesiredSite``
(defaults merged, teams expanded), with each object's place in the manifest so that messages
still point at the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredUser,
    DesiredWorkspace,
    Overrides,
    Policy,
    Source,
    UserRef,
)

SNAPSHOT_VERSION = 1


def _source(source: Source) -> list[Any]:
    return [source.file, source.line, source.column, source.path]


def _source_from(value: Any) -> Source:
    file, line, column, path = value
    return Source(str(file), line, column, str(path))


def _refs(refs: tuple[UserRef, ...]) -> list[Any]:
    return [[ref.text, _source(ref.source)] for ref in refs]


def _refs_from(value: Any) -> tuple[UserRef, ...]:
    return tuple(UserRef(str(text), _source_from(source)) for text, source in value)


def _flags(value: Overrides) -> list[str] | None:
    return None if value is None else sorted(value)


def _flags_from(value: Any) -> Overrides:
    return None if value is None else frozenset(str(v) for v in value)


def desired_to_data(desired: DesiredSite) -> dict[str, Any]:
    policy = desired.policy
    return {
        "version": SNAPSHOT_VERSION,
        "site_url": desired.site_url,
        "state": desired.state,
        "files": list(desired.files),
        "workspaces": [
            {
                "name": ws.name,
                "root_access": ws.root_access,
                "users": _refs(ws.users),
                "permissions": _flags(ws.permissions),
                "notifications": _flags(ws.notifications),
                "source": _source(ws.source),
                "team": ws.team,
            }
            for ws in desired.workspaces
        ],
        "groups": [
            {
                "name": g.name,
                "members": _refs(g.members),
                "source": _source(g.source),
                "team": g.team,
            }
            for g in desired.groups
        ],
        "users": [
            {
                "username": u.username,
                "email": u.email,
                "first_name": u.first_name,
                "last_name": u.last_name,
                "organization": u.organization,
                "phone": u.phone,
                "phone_ext": u.phone_ext,
                "admin": u.admin,
                "active": u.active,
                "source": _source(u.source),
            }
            for u in desired.users
        ],
        "policy": policy_to_data(policy),
    }


def policy_to_data(policy: Policy) -> dict[str, Any]:
    return {
        "prune": policy.prune,
        "max_delete_fraction": policy.max_delete_fraction,
        "max_member_removal_fraction": policy.max_member_removal_fraction,
        "max_deletes": policy.max_deletes,
        "protect": list(policy.protect),
        "prune_users": policy.prune_users,
        "protect_users": list(policy.protect_users),
        "min_admins": policy.min_admins,
        "max_user_removal_fraction": policy.max_user_removal_fraction,
    }


def policy_from_data(policy: Mapping[str, Any]) -> Policy:
    """Raises ``KeyError``/``TypeError``/``ValueError`` for data that is not a policy."""
    return Policy(
        prune=bool(policy["prune"]),
        max_delete_fraction=float(policy["max_delete_fraction"]),
        max_member_removal_fraction=float(policy["max_member_removal_fraction"]),
        max_deletes=int(policy["max_deletes"]),
        protect=tuple(str(p) for p in policy["protect"]),
        prune_users=bool(policy["prune_users"]),
        protect_users=tuple(str(p) for p in policy["protect_users"]),
        min_admins=int(policy["min_admins"]),
        max_user_removal_fraction=float(policy["max_user_removal_fraction"]),
    )


def desired_from_data(data: Mapping[str, Any]) -> DesiredSite:
    """The snapshot's ``DesiredSite``; raises ``KeyError``/``TypeError``/``ValueError``."""
    if data.get("version") != SNAPSHOT_VERSION:
        raise ValueError(f"unknown manifest snapshot version {data.get('version')!r:.20}")
    policy = data["policy"]
    return DesiredSite(
        workspaces=tuple(
            DesiredWorkspace(
                name=str(ws["name"]),
                root_access=bool(ws["root_access"]),
                users=_refs_from(ws["users"]),
                permissions=_flags_from(ws["permissions"]),
                notifications=_flags_from(ws["notifications"]),
                source=_source_from(ws["source"]),
                team=ws.get("team"),
            )
            for ws in data["workspaces"]
        ),
        groups=tuple(
            DesiredGroup(
                name=str(g["name"]),
                members=_refs_from(g["members"]),
                source=_source_from(g["source"]),
                team=g.get("team"),
            )
            for g in data["groups"]
        ),
        users=tuple(
            DesiredUser(
                username=str(u["username"]),
                email=str(u["email"]),
                source=_source_from(u["source"]),
                first_name=str(u.get("first_name", "")),
                last_name=str(u.get("last_name", "")),
                organization=u.get("organization"),
                phone=u.get("phone"),
                phone_ext=u.get("phone_ext"),
                admin=bool(u.get("admin", False)),
                active=bool(u.get("active", True)),
            )
            for u in data.get("users", [])
        ),
        policy=policy_from_data(policy),
        site_url=data.get("site_url"),
        files=tuple(str(f) for f in data.get("files", ())),
        state=data.get("state"),
    )
