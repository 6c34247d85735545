"""Turn a valid, joined manifest into the ``DesiredSite`` the planner consumes.

All the manifest's shorthands end here: defaults are merged into every workspace (whose
settings the workspace kind reads, ``kinds.workspace.from_manifest``), each team becomes a
workspace and a group, users become the user kind's spec (``kinds.user.from_manifest``), and
policy gaps get their defaults. Runs only when no error was found, so it may trust
the shape of every value.
"""

from __future__ import annotations

from typing import Any

from reconciler.clock import parse_day
from reconciler.kinds import user as kinds_user
from reconciler.kinds import workspace
from reconciler.kinds.change import values
from reconciler.manifest.merge import Entry, GroupDecl, MergedManifest, WorkspaceDecl, deep_merge
from reconciler.manifest.ownership import read_ownership
from reconciler.manifest.references import UserReferences
from reconciler.model import (
    DesiredGroup,
    DesiredSite,
    DesiredUser,
    DesiredWorkspace,
    Policy,
    ReviewPolicy,
)


def normalise(manifest: MergedManifest, references: UserReferences) -> DesiredSite:
    """The desired site of a manifest that passed every check; ``references`` are its user
    references, read once for the rules and for this (``references.py``)."""
    defaults = manifest.defaults.value if manifest.defaults else {}
    site = manifest.sections.get("site")
    return DesiredSite(
        workspaces=tuple(
            _workspace(decl, defaults, references) for decl in manifest.workspace_decls()
        ),
        groups=tuple(_group(decl, references) for decl in manifest.group_decls()),
        policy=_policy(manifest.sections.get("policy")),
        site_url=site.value.get("url") if site else None,
        files=manifest.files,
        users=tuple(_user(entry) for entry in manifest.users),
        state=site.value.get("state") if site else None,
        ownership=read_ownership(manifest),
    )


def _workspace(
    decl: WorkspaceDecl, defaults: dict[str, Any], references: UserReferences
) -> DesiredWorkspace:
    return DesiredWorkspace(
        name=decl.entry.value["name"],
        settings=workspace.from_manifest(deep_merge(defaults, decl.settings_value())),
        users=references.of(decl.setter(decl.users_key), decl.users_key),
        source=decl.entry.source(),
        team=decl.team,
        previously=_previously(decl.setter("previously")) if decl.team is None else (),
    )


def _previously(entry: Entry) -> tuple[str, ...]:
    names = entry.value.get("previously")
    return tuple(str(name) for name in names) if names else ()


def _group(decl: GroupDecl, references: UserReferences) -> DesiredGroup:
    return DesiredGroup(
        name=decl.entry.value["name"],
        members=references.of(decl.setter("members"), "members"),
        source=decl.entry.source(),
        team=decl.team,
        previously=_previously(decl.setter("previously")) if decl.team is None else (),
    )


def _user(entry: Entry) -> DesiredUser:
    expires = entry.value.get("expires")
    return DesiredUser(
        username=entry.value["username"],
        source=entry.source(),
        previously=_previously(entry),
        expires=parse_day(expires) if expires is not None else None,
        **values(kinds_user.from_manifest(entry.value)),
    )


def _policy(entry: Entry | None) -> Policy:
    if entry is None:
        return Policy()
    given = entry.value
    fallback = Policy()
    return Policy(
        prune=given.get("prune", fallback.prune),
        max_delete_fraction=float(given.get("max_delete_fraction", fallback.max_delete_fraction)),
        max_member_removal_fraction=float(
            given.get("max_member_removal_fraction", fallback.max_member_removal_fraction)
        ),
        protect=tuple(given.get("protect", fallback.protect)),
        max_deletes=int(given.get("max_deletes", fallback.max_deletes)),
        prune_users=given.get("prune_users", fallback.prune_users),
        protect_users=tuple(given.get("protect_users", fallback.protect_users)),
        min_admins=int(given.get("min_admins", fallback.min_admins)),
        max_user_removal_fraction=float(
            given.get("max_user_removal_fraction", fallback.max_user_removal_fraction)
        ),
        reviewers=tuple(str(reviewer) for reviewer in given.get("reviewers", ())),
        review=ReviewPolicy(strict=(given.get("review") or {}).get("strict", False)),
        expiry_notice_days=int(given.get("expiry_notice_days", fallback.expiry_notice_days)),
    )
