"""What ``reconciler validate`` prints: findings, the expanded model, a one-line summary.

``desired_data`` is the one plain-data view of a ``DesiredSite``; the YAML of ``--show`` and
the ``desired`` object of JSON output both come from it, so the two never disagree. It is
written for people reading what their defaults and teams expanded into: user references as
the text written, overrides as sorted flag lists (or null for no override), the team a
workspace or group came from, every declared user with its defaults filled in, the whole
policy, and where each was declared.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import yaml

from reconciler.findings import count, plural, render_text, tally
from reconciler.manifest import ManifestResult
from reconciler.model import DesiredGroup, DesiredSite, DesiredUser, DesiredWorkspace, Overrides

OutputFormat = Literal["text", "json"]


class _Inline(list[Any]):
    """A list shown on one line: ``users: [alice, bob]``."""


class _ShowDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a reader wants values, not &id001 anchors


_ShowDumper.add_representer(
    _Inline, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, True)
)


def _flags(overrides: Overrides) -> list[str] | None:
    return None if overrides is None else _Inline(sorted(overrides))


def _workspace_data(workspace: DesiredWorkspace) -> dict[str, Any]:
    data: dict[str, Any] = {"name": workspace.name}
    if workspace.team is not None:
        data["team"] = workspace.team
    data.update(
        root_access=workspace.root_access,
        users=_Inline(ref.text for ref in workspace.users),
        permissions=_flags(workspace.permissions),
        notifications=_flags(workspace.notifications),
        declared_at=str(workspace.source),
    )
    return data


def _group_data(group: DesiredGroup) -> dict[str, Any]:
    data: dict[str, Any] = {"name": group.name}
    if group.team is not None:
        data["team"] = group.team
    data.update(members=_Inline(ref.text for ref in group.members), declared_at=str(group.source))
    return data


def _user_data(user: DesiredUser) -> dict[str, Any]:
    return {
        "username": user.username,
        "email": user.email,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "organization": user.organization,
        "phone": user.phone,
        "phone_ext": user.phone_ext,
        "admin": user.admin,
        "active": user.active,
        "declared_at": str(user.source),
    }


def desired_data(desired: DesiredSite) -> dict[str, Any]:
    """The desired site as plain data (JSON- and YAML-ready)."""
    policy = desired.policy
    return {
        "files": _Inline(desired.files),
        "site_url": desired.site_url,
        "state": desired.state,
        "users": [_user_data(user) for user in desired.users],
        "workspaces": [_workspace_data(workspace) for workspace in desired.workspaces],
        "groups": [_group_data(group) for group in desired.groups],
        "policy": {
            "prune": policy.prune,
            "max_delete_fraction": policy.max_delete_fraction,
            "max_member_removal_fraction": policy.max_member_removal_fraction,
            "max_deletes": policy.max_deletes,
            "protect": _Inline(policy.protect),
            "prune_users": policy.prune_users,
            "protect_users": _Inline(policy.protect_users),
            "min_admins": policy.min_admins,
            "max_user_removal_fraction": policy.max_user_removal_fraction,
        },
    }


def show_yaml(desired: DesiredSite) -> str:
    return yaml.dump(
        desired_data(desired),
        Dumper=_ShowDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def summary(result: ManifestResult, label: str) -> str:
    """``site.yaml: valid (8 workspaces, 6 groups) with 1 warning`` or ``...: invalid (...)``;
    users are counted only when the manifest declares some."""
    if result.desired is None:
        return f"{label}: invalid ({tally(result.findings)})"
    desired = result.desired
    counted = [plural(len(desired.workspaces), "workspace"), plural(len(desired.groups), "group")]
    if desired.users:
        counted.append(plural(len(desired.users), "user"))
    sizes = ", ".join(counted)
    warnings = count(result.findings, "warning")
    return f"{label}: valid ({sizes})" + (
        f" with {plural(warnings, 'warning')}" if warnings else ""
    )


def render_report(
    result: ManifestResult, *, output_format: OutputFormat, show: bool, label: str
) -> str:
    """The whole output of ``validate``."""
    if output_format == "json":
        findings = [finding.to_dict() for finding in result.findings]
        if not show:
            return json.dumps(findings, indent=2, ensure_ascii=False)
        desired = None if result.desired is None else desired_data(result.desired)
        return json.dumps({"findings": findings, "desired": desired}, indent=2, ensure_ascii=False)
    parts = [render_text(result.findings)] if result.findings else []
    if show and result.desired is not None:
        parts.append(show_yaml(result.desired).rstrip("\n"))
    parts.append(summary(result, label))
    return "\n".join(parts)
