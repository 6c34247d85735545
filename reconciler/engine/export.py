"""Export: write a manifest that describes the live site, so an existing site can be adopted.

Every workspace is written with its users (by username), ``root_access`` and overrides as
far as the API lets them be observed, and every group that can be discovered. Where a fact
could not be read, a YAML comment says so at that place. Names that cannot round-trip
through the API (a comma, more than 40 characters, two workspaces with one name or one
path) are reported and written only as comments, never silently changed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import yaml

from reconciler.api.spec import MAX_WORKSPACE_NAME_LENGTH, NAME_LIST_SEPARATOR
from reconciler.engine.records import Records
from reconciler.model import LiveSite, LiveUser, LiveWorkspace

HEADER = (
    "# Exported by site-reconciler from {site}.\n"
    "# Review it, then adopt it: reconciler adopt PATH\n"
)


def scalar(value: Any) -> str:
    """A YAML scalar in flow style (quoted only when YAML needs it)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


@dataclass
class Export:
    """The exported manifest as YAML fragments, and the problems found on the way."""

    site: str
    workspaces: list[tuple[str, str]] = field(default_factory=list)  # (name, YAML list item)
    groups: str = ""
    problems: list[str] = field(default_factory=list)

    def single_file(self) -> str:
        body = "".join(item for _, item in self.workspaces) or "  []\n"
        return f"{self._head()}workspaces:\n{body}{self.groups}"

    def _head(self) -> str:
        return HEADER.format(site=self.site) + f"version: 1\nsite:\n  url: {scalar(self.site)}\n"

    def files(self) -> dict[str, str]:
        """One file per workspace, one for groups, one for the site: for large sites."""
        out = {"site.yaml": self._head()}
        used: Counter[str] = Counter()
        for name, item in self.workspaces:
            slug = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-") or "workspace"
            used[slug] += 1
            file = (
                f"workspace-{slug}.yaml"
                if used[slug] == 1
                else f"workspace-{slug}-{used[slug]}.yaml"
            )
            out[file] = f"version: 1\nworkspaces:\n{item}"
        out["groups.yaml"] = "version: 1\n" + (self.groups or "groups: []\n")
        return out


def _name_problem(ws: LiveWorkspace, names: Counter[str], paths: Counter[str]) -> str | None:
    if NAME_LIST_SEPARATOR in ws.name:
        return "its name has a comma, which the API would split"
    if not 1 <= len(ws.name) <= MAX_WORKSPACE_NAME_LENGTH:
        return f"its name is not 1-{MAX_WORKSPACE_NAME_LENGTH} characters long"
    if names[ws.name.casefold()] > 1:
        return "another workspace has the same name"
    if paths[ws.path] > 1:
        return f"another workspace has the same path {ws.path}"
    return None


def export_site(live: LiveSite, state: Records, site: str) -> Export:
    result = Export(site)
    users = {user.id: user for user in live.users}
    names = Counter(ws.name.casefold() for ws in live.workspaces)
    paths = Counter(ws.path for ws in live.workspaces)
    for ws in sorted(live.workspaces, key=lambda w: (w.name.casefold(), w.id)):
        problem = _name_problem(ws, names, paths)
        if problem is not None:
            result.problems.append(
                f'workspace "{ws.name}" (id {ws.id}) was not exported: {problem}'
            )
            result.workspaces.append(
                (ws.name, f"  # not exported: {scalar(ws.name)} (id {ws.id}): {problem}\n")
            )
            continue
        result.workspaces.append((ws.name, _workspace_item(ws, state, users, result.problems)))
    result.groups = _groups(live, state, users, result.problems)
    return result


def _user_refs(
    ids: frozenset[int], users: dict[int, LiveUser], problems: list[str], where: str
) -> list[Any]:
    refs: list[Any] = []
    for user_id in sorted(ids, key=lambda i: (users[i].username if i in users else "", i)):
        user = users.get(user_id)
        if user is not None and user.username:
            refs.append(user.username)
        else:
            refs.append(user_id)
            problems.append(f"user {user_id} in {where} has no username: written as its numeric ID")
    return refs


def _flags(flags: frozenset[str] | None) -> str:
    return "{" + ", ".join(f"{flag}: true" for flag in sorted(flags or ())) + "}"


def _workspace_item(
    ws: LiveWorkspace, state: Records, users: dict[int, LiveUser], problems: list[str]
) -> str:
    record = state.workspaces.get(ws.name)
    known = record is not None and record.id == ws.id
    lines = [f"  - name: {scalar(ws.name)}"]
    if known and record is not None and record.root_access is not None:
        lines.append(
            f"    root_access: {scalar(record.root_access.value)}    # recorded by site-reconciler"
        )
    else:
        lines.append("    root_access: true    # not reported by the site: check it in the web app")
    if ws.users is None:
        lines.append("    users: []    # could not be read")
    else:
        refs = _user_refs(ws.users, users, problems, f'workspace "{ws.name}"')
        lines.append(f"    users: {scalar(refs)}")
    if not ws.details_observed:
        lines.append(
            "    # permissions and notifications overrides could not be read from this site"
        )
        return "\n".join(lines) + "\n"
    if ws.permissions:
        lines.append(f"    permissions: {_flags(ws.permissions)}")
    recorded = record.notifications if known and record is not None else None
    notifications = recorded.value if recorded is not None else None
    if ws.notifications:
        lines.append(f"    notifications: {_flags(ws.notifications)}")
    elif notifications is not None:
        lines.append("    notifications: {}    # recorded: override on, both off")
    else:
        lines.append(
            "    # notifications: none reported on; an override with both off cannot be seen"
        )
    return "\n".join(lines) + "\n"


def _groups(live: LiveSite, state: Records, users: dict[int, LiveUser], problems: list[str]) -> str:
    found: dict[str, int] = {}
    seen: Counter[str] = Counter(g.name for g in live.groups)
    for group in live.groups:
        if seen[group.name] > 1:
            problems.append(
                f'user group "{group.name}" (id {group.id}) was not exported: '
                "another group has the same name"
            )
            continue
        found[group.name] = group.id
    for name, recorded in state.groups.items():
        if recorded.id is not None and name not in found and not live.groups_listed:
            found[name] = recorded.id
    if not found:
        return (
            "groups: []\n"
            if live.groups_listed
            else "groups: []    # this site does not list user groups\n"
        )
    lines = ["groups:"]
    for name in sorted(found, key=str.casefold):
        record = state.groups.get(name)
        lines.append(f"  - name: {scalar(name)}")
        if record is not None and record.id == found[name]:
            refs = _user_refs(record.members, users, problems, f'group "{name}"')
            lines.append(f"    members: {scalar(refs)}    # recorded by site-reconciler")
        else:
            lines.append(
                "    members: []    # the site cannot report group members: list them here"
            )
    return "\n".join(lines) + "\n"
