"""Write an exported site (``manifest.export.Export``) as manifest YAML, one file or a directory.

Every value goes through ``yaml.safe_dump`` (quoted only where YAML needs it); a value that is
not a fact the site reported carries its note as a comment at that place. The result is
checked by ``load_manifest`` before the CLI writes it (``cli/onboard.py``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import yaml

from reconciler.manifest.export import Export, ExportedGroup, ExportedUser, ExportedWorkspace, Noted
from reconciler.model import Overrides

HEADER = (
    "# Exported by site-reconciler from {site}.\n"
    "# Review it, then adopt it: reconciler adopt PATH\n"
)
SITE_FILE = "site.yaml"
GROUPS_FILE = "groups.yaml"
USERS_FILE = "users.yaml"


def scalar(value: Any) -> str:
    """A YAML scalar or flow collection on one line (quoted only when YAML needs it)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def _line(indent: str, key: str, noted: Noted[Any], text: str | None = None) -> str:
    comment = f"    # {noted.note}" if noted.note else ""
    return f"{indent}{key}: {scalar(noted.value) if text is None else text}{comment}"


def _flags(flags: Overrides) -> str:
    return "{" + ", ".join(f"{flag}: true" for flag in sorted(flags or ())) + "}"


def _workspace_item(ws: ExportedWorkspace) -> str:
    lines = [f"  - name: {scalar(ws.name)}"]
    lines += [_line("    ", key, noted) for key, noted in ws.settings.items()]
    lines.append(_line("    ", "users", Noted(list(ws.users.value), ws.users.note)))
    if ws.overrides is None:
        lines.append(
            "    # permissions and notifications overrides could not be read from this site"
        )
        return "\n".join(lines) + "\n"
    for key, override in ws.overrides.items():
        if override.value is not None:  # an override that is off is not written
            lines.append(_line("    ", key, override, _flags(override.value)))
        elif override.note:
            lines.append(f"    # {key}: {override.note}")
    return "\n".join(lines) + "\n"


def _group_item(group: ExportedGroup) -> str:
    members = Noted(list(group.members.value), group.members.note)
    return f"  - name: {scalar(group.name)}\n" + _line("    ", "members", members) + "\n"


def _user_item(user: ExportedUser) -> str:
    lines = [f"  - username: {scalar(user.username)}"]
    lines += [f"    {key}: {scalar(value)}" for key, value in user.fields.items()]
    return "\n".join(lines) + "\n"


def _skipped(export: Export, kind: str) -> str:
    return "".join(
        f"  # not exported: {scalar(s.name)} (id {s.id}): {s.problem}\n"
        for s in export.skipped
        if s.kind == kind
    )


def _section(key: str, items: list[str], skipped: str, note: str | None = None) -> str:
    comment = f"    # {note}" if note else ""
    if not items:
        return f"{key}: []{comment}\n{skipped}"
    return f"{key}:{comment}\n" + "".join(items) + skipped


def _head(export: Export) -> str:
    return HEADER.format(site=export.site) + f"version: 1\nsite:\n  url: {scalar(export.site)}\n"


def _groups(export: Export) -> str:
    items = [_group_item(g) for g in export.groups]
    return _section("groups", items, _skipped(export, "group"), export.groups_note)


def _users(export: Export) -> str:
    if export.users is None:
        return ""
    return _section("users", [_user_item(u) for u in export.users], _skipped(export, "user"))


def render_manifest(export: Export) -> str:
    """The whole site as one manifest file."""
    workspaces = [_workspace_item(ws) for ws in export.workspaces]
    return (
        _head(export)
        + _section("workspaces", workspaces, _skipped(export, "workspace"))
        + _groups(export)
        + _users(export)
    )


def render_manifest_files(export: Export) -> dict[str, str]:
    """One file per workspace, one for groups (and users), one for the site: for large sites."""
    files = {SITE_FILE: _head(export)}
    skipped = _skipped(export, "workspace")
    if skipped:
        files[SITE_FILE] += "workspaces: []\n" + skipped
    used: Counter[str] = Counter()
    for ws in export.workspaces:
        slug = re.sub(r"[^a-z0-9]+", "-", ws.name.casefold()).strip("-") or "workspace"
        used[slug] += 1
        name = (
            f"workspace-{slug}.yaml" if used[slug] == 1 else f"workspace-{slug}-{used[slug]}.yaml"
        )
        files[name] = "version: 1\nworkspaces:\n" + _workspace_item(ws)
    files[GROUPS_FILE] = "version: 1\n" + _groups(export)
    if export.users is not None:
        files[USERS_FILE] = "version: 1\n" + _users(export)
    return files
