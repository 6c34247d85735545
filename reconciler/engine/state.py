"""What the tool has recorded about a site: the facts the API will not report back.

The site API cannot list user groups or their members, and does not report a workspace's
``root_access`` or whether its overrides are switched on. The tool therefore records what it
created, adopted and applied, and every report says which facts were *observed* on the site
and which were *recorded* here.

One ``SiteState`` per site lives in ``<state dir>/sites/<site slug>/state.json``, written
atomically (temporary file, fsync, rename) with mode 600. It holds no secrets.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from reconciler.errors import StateError
from reconciler.model import Overrides

STATE_FORMAT = 1
Origin = Literal["created", "adopted"]


@dataclass(frozen=True, slots=True)
class RecordedWorkspace:
    """A workspace the tool created, adopted or changed the members of.

    ``managed`` objects (created or adopted) may be pruned once they leave the manifest.
    Settings are ``None`` where the tool never learnt them (it did not create the workspace).
    """

    id: int
    managed: bool = False
    origin: Origin | None = None
    root_access: bool | None = None
    permissions: Overrides = None
    notifications: Overrides = None
    settings_known: bool = False  # True when root_access and overrides above are facts
    members: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class RecordedGroup:
    """A user group the tool created, adopted or changed the members of.

    ``members`` are the memberships the tool applied: the site cannot report them.
    ``uncertain`` marks a ``user_group_add`` whose outcome could not be checked.
    """

    id: int | None
    managed: bool = False
    origin: Origin | None = None
    members: frozenset[int] = frozenset()
    uncertain: bool = False


@dataclass(slots=True)
class SiteState:
    """Everything recorded for one site, keyed by object name as the manifest names them."""

    site: str
    workspaces: dict[str, RecordedWorkspace] = field(default_factory=dict)
    groups: dict[str, RecordedGroup] = field(default_factory=dict)
    applied_plans: list[str] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)  # writes of unknown outcome
    serial: int = 0

    def recorded_memberships(self) -> int:
        """How many user memberships the tool has recorded: the base of the removal guard."""
        return sum(len(w.members) for w in self.workspaces.values()) + sum(
            len(g.members) for g in self.groups.values()
        )

    def managed_workspaces(self) -> dict[str, RecordedWorkspace]:
        return {name: ws for name, ws in self.workspaces.items() if ws.managed}

    def to_data(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "site": self.site,
            "serial": self.serial,
            "workspaces": {
                name: _workspace_data(ws) for name, ws in sorted(self.workspaces.items())
            },
            "groups": {name: _group_data(g) for name, g in sorted(self.groups.items())},
            "applied_plans": self.applied_plans[-100:],
            "pending": self.pending,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> SiteState:
        if data.get("format") != STATE_FORMAT:
            raise ValueError(f"unknown state format {data.get('format')!r}")
        return cls(
            site=str(data["site"]),
            serial=int(data.get("serial", 0)),
            workspaces={
                name: _workspace_from(item) for name, item in data.get("workspaces", {}).items()
            },
            groups={name: _group_from(item) for name, item in data.get("groups", {}).items()},
            applied_plans=[str(c) for c in data.get("applied_plans", [])],
            pending=list(data.get("pending", [])),
        )


def _overrides_data(value: Overrides) -> list[str] | None:
    return None if value is None else sorted(value)


def _overrides_from(value: Any) -> Overrides:
    return None if value is None else frozenset(str(v) for v in value)


def _workspace_data(ws: RecordedWorkspace) -> dict[str, Any]:
    return {
        "id": ws.id,
        "managed": ws.managed,
        "origin": ws.origin,
        "settings_known": ws.settings_known,
        "root_access": ws.root_access,
        "permissions": _overrides_data(ws.permissions),
        "notifications": _overrides_data(ws.notifications),
        "members": sorted(ws.members),
    }


def _workspace_from(item: dict[str, Any]) -> RecordedWorkspace:
    return RecordedWorkspace(
        id=int(item["id"]),
        managed=bool(item.get("managed", False)),
        origin=item.get("origin"),
        settings_known=bool(item.get("settings_known", False)),
        root_access=item.get("root_access"),
        permissions=_overrides_from(item.get("permissions")),
        notifications=_overrides_from(item.get("notifications")),
        members=frozenset(int(m) for m in item.get("members", [])),
    )


def _group_data(group: RecordedGroup) -> dict[str, Any]:
    return {
        "id": group.id,
        "managed": group.managed,
        "origin": group.origin,
        "members": sorted(group.members),
        "uncertain": group.uncertain,
    }


def _group_from(item: dict[str, Any]) -> RecordedGroup:
    return RecordedGroup(
        id=None if item.get("id") is None else int(item["id"]),
        managed=bool(item.get("managed", False)),
        origin=item.get("origin"),
        members=frozenset(int(m) for m in item.get("members", [])),
        uncertain=bool(item.get("uncertain", False)),
    )


def site_slug(site_url: str) -> str:
    """A directory name for a site: its host (and port), safe on every filesystem."""
    parts = urlsplit(site_url)
    label = parts.netloc or parts.path or "site"
    return re.sub(r"[^A-Za-z0-9.-]+", "_", label).strip("._") or "site"


def private_directory(path: Path) -> None:
    """Create ``path`` and any missing parent with mode 700 (``mkdir`` gives parents 755)."""
    if path.is_dir():
        return
    private_directory(path.parent)
    path.mkdir(mode=0o700, exist_ok=True)


def write_private_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by the owner only (mode 600)."""
    private_directory(path.parent)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


@dataclass(frozen=True, slots=True)
class StateStore:
    """The files of one site inside the state directory."""

    directory: Path
    site: str

    @classmethod
    def for_site(cls, state_dir: Path, site_url: str) -> StateStore:
        return cls(state_dir / "sites" / site_slug(site_url), site_url)

    @property
    def state_file(self) -> Path:
        return self.directory / "state.json"

    @property
    def journal_file(self) -> Path:
        return self.directory / "journal.jsonl"

    @property
    def lock_file(self) -> Path:
        return self.directory / "apply.lock"

    def load(self) -> SiteState:
        """The recorded state, or an empty one for a site the tool has not touched yet."""
        try:
            text = self.state_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return SiteState(site=self.site)
        except OSError as exc:
            raise StateError(
                f"Cannot read the state file {self.state_file}: {exc.strerror}.",
                hint="Check the permissions of the state directory (--state-dir).",
            ) from exc
        try:
            state = SiteState.from_data(json.loads(text))
        except (ValueError, KeyError, TypeError) as exc:
            raise StateError(
                f"The state file {self.state_file} is damaged ({exc}).",
                hint="Restore it from a backup, or move it away and run `reconciler adopt` "
                "to record the site's objects again.",
            ) from exc
        return state

    def save(self, state: SiteState) -> None:
        state.serial += 1
        try:
            write_private_file(self.state_file, json.dumps(state.to_data(), indent=1) + "\n")
        except OSError as exc:
            raise StateError(
                f"Cannot write the state file {self.state_file}: {exc.strerror}.",
                hint="Check that the state directory (--state-dir) is writable.",
            ) from exc
