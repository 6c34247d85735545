"""What the tool has recorded about a site: the facts the API will not report back.

The site API cannot list user groups or their members, and does not report a workspace's
``root_access`` or whether its overrides are switched on. The tool therefore records what it
created, adopted and applied, and every report says which facts were *observed* on the site
and which were *recorded* here. Only facts the tool created or read are ever recorded: a
setting it could not read is ``None`` (unknown), never a guess.

``Records`` is immutable. It changes in one way only: ``reduce(records, events)`` folds
events -- the journal's "this write was done", adoption, forgetting, a plan applied -- into a
new ``Records``. Reads never change records; a workflow saves explicitly, through the state
backend (``reconciler.state``), which stores ``to_data()`` and hands back ``from_data``'s
input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from reconciler.errors import StateError
from reconciler.model import Overrides

RECORDS_FORMAT = 2
"""Format 2 records each setting as known or unknown; format 1 (one flag for all) is read."""

MAX_APPLIED_PLANS = 200
"""Plan checksums kept to refuse a second application; older plans are stale anyway."""

Origin = Literal["created", "adopted"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Known(Generic[T]):
    """A fact the tool created or read. Where a field is ``None`` instead, it is unknown."""

    value: T


@dataclass(frozen=True, slots=True)
class RecordedWorkspace:
    """A workspace the tool created, adopted or changed the members of.

    ``managed`` objects (created or adopted) may be pruned once they leave the manifest.
    ``source`` is the manifest file that declared it when it was last applied or adopted, so
    a plan can tell "this file is gone" from "these workspaces were removed".
    """

    id: int
    managed: bool = False
    origin: Origin | None = None
    root_access: Known[bool] | None = None
    permissions: Known[Overrides] | None = None
    notifications: Known[Overrides] | None = None
    members: frozenset[int] = frozenset()
    source: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedGroup:
    """A user group the tool created, adopted or changed the members of.

    ``members`` are the memberships the tool applied: the site cannot report them. They are
    known only when ``members_known`` (the tool created the group, or applied every declared
    member since). ``uncertain`` marks a ``user_group_add`` whose outcome could not be checked.
    """

    id: int | None
    managed: bool = False
    origin: Origin | None = None
    members: frozenset[int] = frozenset()
    members_known: bool = False
    uncertain: bool = False
    source: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedUser:
    """A site user the tool created or adopted (``users:`` in the manifest)."""

    id: int
    managed: bool = True
    origin: Origin | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Records:
    """Everything recorded for one site, keyed by object name as the manifest names them."""

    site: str
    workspaces: Mapping[str, RecordedWorkspace] = field(default_factory=dict)
    groups: Mapping[str, RecordedGroup] = field(default_factory=dict)
    users: Mapping[str, RecordedUser] = field(default_factory=dict)
    applied_plans: tuple[str, ...] = ()
    pending: tuple[dict[str, Any], ...] = ()  # action data of writes of unknown outcome
    # What a change-scoped plan compares against: the desired form of each declared object
    # when the site last matched it ("workspace:Name" -> digest), the user references last
    # resolved (reference -> (user ID, username)), and when the whole site was last read.
    digests: Mapping[str, str] = field(default_factory=dict)
    references: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    last_full_read: str | None = None
    # The policy the last apply ran under (its manifest's, as data): a saved plan never runs
    # under a weaker one, whatever policy the plan file carries.
    policy: Mapping[str, Any] | None = None
    # Set by ``state migrate`` on the copy it left behind: where the records went, and when.
    moved_to: Mapping[str, str] | None = None

    @property
    def empty(self) -> bool:
        """True when nothing at all is recorded (a fresh runner, or a new backend)."""
        return not (self.workspaces or self.groups or self.users or self.pending)

    def managed_workspaces(self) -> dict[str, RecordedWorkspace]:
        return {name: ws for name, ws in self.workspaces.items() if ws.managed}

    def managed_groups(self) -> dict[str, RecordedGroup]:
        return {name: g for name, g in self.groups.items() if g.managed}

    def recorded_memberships(self) -> int:
        """How many user memberships the tool has recorded: the base of the removal guard."""
        return sum(len(w.members) for w in self.workspaces.values()) + sum(
            len(g.members) for g in self.groups.values()
        )

    def to_data(self) -> dict[str, Any]:
        return {
            "format": RECORDS_FORMAT,
            "site": self.site,
            "workspaces": {
                name: _workspace_data(ws) for name, ws in sorted(self.workspaces.items())
            },
            "groups": {name: _group_data(g) for name, g in sorted(self.groups.items())},
            "users": {name: _user_data(u) for name, u in sorted(self.users.items())},
            "applied_plans": list(self.applied_plans[-MAX_APPLIED_PLANS:]),
            "pending": list(self.pending),
            "digests": dict(sorted(self.digests.items())),
            "references": {ref: list(found) for ref, found in sorted(self.references.items())},
            "last_full_read": self.last_full_read,
            "policy": None if self.policy is None else dict(self.policy),
            **({"moved_to": dict(self.moved_to)} if self.moved_to else {}),
        }

    @classmethod
    def from_data(cls, data: object, *, site: str, where: str) -> Records:
        """Records as stored; a document that is damaged in any way is a ``StateError``."""
        if data is None:
            return cls(site)
        try:
            return _records_from(data, site)
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise StateError(
                f"The records of {site} in {where} are damaged: {_reason(exc)}.",
                hint="Restore an earlier version (`reconciler state history`, then "
                "`reconciler state show --version N`), or move the records away and run "
                "`reconciler adopt` to record the site's objects again.",
            ) from None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip("'\"") or type(exc).__name__
    return text[:200]


# --- the one way records change ----------------------------------------------------------


class Tables:
    """The mutable working copy that ``reduce`` lends to each event, and only to events."""

    def __init__(self, records: Records) -> None:
        self.site = records.site
        self.workspaces = dict(records.workspaces)
        self.groups = dict(records.groups)
        self.users = dict(records.users)
        self.applied_plans = list(records.applied_plans)
        self.pending = list(records.pending)
        self.digests = dict(records.digests)
        self.references = dict(records.references)
        self.last_full_read = records.last_full_read
        self.policy = records.policy
        self.moved_to = records.moved_to

    def frozen(self) -> Records:
        return Records(
            self.site,
            self.workspaces,
            self.groups,
            self.users,
            tuple(self.applied_plans[-MAX_APPLIED_PLANS:]),
            tuple(self.pending),
            self.digests,
            self.references,
            self.last_full_read,
            self.policy,
            self.moved_to,
        )


class Event:
    """Something that changes the records. Subclasses say what, in ``fold``."""

    def fold(self, tables: Tables) -> None:
        raise NotImplementedError


def reduce(records: Records, events: Iterable[Event]) -> Records:
    """``records`` with ``events`` folded in, in order. ``records`` itself is unchanged."""
    tables = Tables(records)
    for event in events:
        event.fold(tables)
    return tables.frozen()


@dataclass(frozen=True, slots=True)
class PlanApplied(Event):
    """A saved plan is being applied: it can never be applied again, on any runner."""

    checksum: str

    def fold(self, tables: Tables) -> None:
        if self.checksum not in tables.applied_plans:
            tables.applied_plans.append(self.checksum)


@dataclass(frozen=True, slots=True)
class PolicyApplied(Event):
    """An apply ran under this policy (as data): the floor for every later saved plan."""

    policy: Mapping[str, Any]

    def fold(self, tables: Tables) -> None:
        tables.policy = dict(self.policy)


@dataclass(frozen=True, slots=True)
class MembersGone(Event):
    """Recorded members of a workspace or group whose users no longer exist on the site."""

    kind: Literal["workspace", "group"]
    name: str
    user_ids: frozenset[int]

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = tables.workspaces if self.kind == "workspace" else tables.groups
        record = table.get(self.name)
        if record is not None:
            table[self.name] = replace(record, members=record.members - self.user_ids)


@dataclass(frozen=True, slots=True)
class Forgotten(Event):
    """A person ran ``state forget``: the record goes, the site is not changed."""

    kind: Literal["workspace", "group", "user"]
    name: str

    def fold(self, tables: Tables) -> None:
        table: dict[str, Any] = getattr(tables, f"{self.kind}s")
        table.pop(self.name, None)


@dataclass(frozen=True, slots=True)
class WorkspaceAdopted(Event):
    name: str
    record: RecordedWorkspace

    def fold(self, tables: Tables) -> None:
        tables.workspaces[self.name] = self.record


@dataclass(frozen=True, slots=True)
class GroupAdopted(Event):
    name: str
    record: RecordedGroup

    def fold(self, tables: Tables) -> None:
        tables.groups[self.name] = self.record


@dataclass(frozen=True, slots=True)
class UserAdopted(Event):
    username: str
    record: RecordedUser

    def fold(self, tables: Tables) -> None:
        tables.users[self.username] = self.record


@dataclass(frozen=True, slots=True)
class UserReferenceRenamed(Event):
    """The manifest now writes a recorded username in another case (``dave`` -> ``Dave``):
    the same person, so the record follows the manifest's spelling (usernames are compared
    without regard to case)."""

    old: str
    new: str

    def fold(self, tables: Tables) -> None:
        record = tables.users.pop(self.old, None)
        if record is not None and self.new not in tables.users:
            tables.users[self.new] = record


@dataclass(frozen=True, slots=True)
class SourceRecorded(Event):
    """The manifest file that declares a recorded object, as of the last apply or adoption."""

    kind: Literal["workspace", "group", "user"]
    name: str
    source: str

    def fold(self, tables: Tables) -> None:
        tables_by_kind: dict[str, dict[str, Any]] = {
            "workspace": tables.workspaces,
            "group": tables.groups,
            "user": tables.users,
        }
        table = tables_by_kind[self.kind]
        record = table.get(self.name)
        if record is not None:
            table[self.name] = replace(record, source=self.source)


@dataclass(frozen=True, slots=True)
class Reconciled(Event):
    """What an apply leaves for change-scoped plans to compare against.

    ``digests`` of the declared objects the site now matches replace theirs; ``dropped`` are
    keys of objects no longer declared; ``references`` join those resolved before; a full
    read sets ``full_read``.
    """

    digests: Mapping[str, str]
    dropped: tuple[str, ...] = ()
    references: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    full_read: str | None = None

    def fold(self, tables: Tables) -> None:
        for key in self.dropped:
            tables.digests.pop(key, None)
        tables.digests.update(self.digests)
        tables.references.update(self.references)
        if self.full_read is not None:
            tables.last_full_read = self.full_read


@dataclass(frozen=True, slots=True)
class PendingCleared(Event):
    """Writes of unknown outcome were settled against a fresh read of the site."""

    def fold(self, tables: Tables) -> None:
        tables.pending.clear()


# --- serialisation ------------------------------------------------------------------------


def _overrides_data(value: Overrides) -> list[str] | None:
    return None if value is None else sorted(value)


def _overrides_from(value: Any) -> Overrides:
    if value is None:
        return None
    if not isinstance(value, list):
        raise TypeError(f"an override must be a list of flags, not {type(value).__name__}")
    return frozenset(str(v) for v in value)


def _known_data(ws: RecordedWorkspace) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if ws.root_access is not None:
        settings["root_access"] = ws.root_access.value
    if ws.permissions is not None:
        settings["permissions"] = _overrides_data(ws.permissions.value)
    if ws.notifications is not None:
        settings["notifications"] = _overrides_data(ws.notifications.value)
    return settings


def _workspace_data(ws: RecordedWorkspace) -> dict[str, Any]:
    return {
        "id": ws.id,
        "managed": ws.managed,
        "origin": ws.origin,
        "settings": _known_data(ws),
        "members": sorted(ws.members),
        "source": ws.source,
    }


def _group_data(group: RecordedGroup) -> dict[str, Any]:
    return {
        "id": group.id,
        "managed": group.managed,
        "origin": group.origin,
        "members": sorted(group.members),
        "members_known": group.members_known,
        "uncertain": group.uncertain,
        "source": group.source,
    }


def _user_data(user: RecordedUser) -> dict[str, Any]:
    return {"id": user.id, "managed": user.managed, "origin": user.origin, "source": user.source}


def _integer(value: Any, what: str) -> int:
    """An ID as stored: a whole number (``1e999``, ``true`` or ``"7"`` are damage)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} is not a number ({value!r:.40})")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{what} is not a whole number ({value!r:.40})")
    return int(value)


def _origin(value: Any) -> Origin | None:
    if value in (None, "created", "adopted"):
        return value  # type: ignore[no-any-return]
    raise ValueError(f"unknown origin {value!r:.40}")


def _source(value: Any) -> str | None:
    return None if value is None else str(value)


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} is not a mapping")
    return value


def _members(item: Mapping[str, Any], what: str) -> frozenset[int]:
    values = item.get("members", [])
    if not isinstance(values, list):
        raise TypeError(f"the members of {what} are not a list")
    return frozenset(_integer(m, f"a member of {what}") for m in values)


def _workspace_from(name: str, item: Mapping[str, Any], version: int) -> RecordedWorkspace:
    what = f'workspace "{name}"'
    item = _mapping(item, what)
    if version == 1:  # one flag said whether all three settings were known
        known = bool(item.get("settings_known", False))
        settings: Mapping[str, Any] = (
            {k: item.get(k) for k in ("root_access", "permissions", "notifications")}
            if known
            else {}
        )
    else:
        settings = _mapping(item.get("settings", {}), f"the settings of {what}")
    return RecordedWorkspace(
        id=_integer(item["id"], f"the ID of {what}"),
        managed=bool(item.get("managed", False)),
        origin=_origin(item.get("origin")),
        root_access=Known(bool(settings["root_access"])) if "root_access" in settings else None,
        permissions=Known(_overrides_from(settings["permissions"]))
        if "permissions" in settings
        else None,
        notifications=Known(_overrides_from(settings["notifications"]))
        if "notifications" in settings
        else None,
        members=_members(item, what),
        source=_source(item.get("source")),
    )


def _group_from(name: str, item: Mapping[str, Any], version: int) -> RecordedGroup:
    what = f'user group "{name}"'
    item = _mapping(item, what)
    raw_id = item.get("id")
    origin = _origin(item.get("origin"))
    # Format 1 recorded members for every group it knew; they were facts only for groups
    # the tool created (adoption recorded the manifest's word for them).
    known = item.get("members_known", version == 1 and origin == "created")
    return RecordedGroup(
        id=None if raw_id is None else _integer(raw_id, f"the ID of {what}"),
        managed=bool(item.get("managed", False)),
        origin=origin,
        members=_members(item, what),
        members_known=bool(known),
        uncertain=bool(item.get("uncertain", False)),
        source=_source(item.get("source")),
    )


def _user_from(name: str, item: Mapping[str, Any]) -> RecordedUser:
    what = f'user "{name}"'
    item = _mapping(item, what)
    return RecordedUser(
        id=_integer(item["id"], f"the ID of {what}"),
        managed=bool(item.get("managed", True)),
        origin=_origin(item.get("origin")),
        source=_source(item.get("source")),
    )


def _texts(mapping: Mapping[str, Any]) -> dict[str, str]:
    return {str(key): str(value) for key, value in mapping.items()}


def _records_from(data: object, site: str) -> Records:
    document = _mapping(data, "the document")
    version = document.get("format")
    if version not in (1, RECORDS_FORMAT):
        raise ValueError(f"unknown records format {version!r:.40}")
    stored_site = document.get("site")
    if stored_site != site:
        raise ValueError(f"they are the records of {stored_site!r:.200}, not of this site")
    workspaces = _mapping(document.get("workspaces", {}), "workspaces")
    groups = _mapping(document.get("groups", {}), "groups")
    users = _mapping(document.get("users", {}), "users")
    applied = document.get("applied_plans", [])
    pending = document.get("pending", [])
    if not isinstance(applied, list) or not isinstance(pending, list):
        raise TypeError("applied_plans and pending must be lists")
    digests = _mapping(document.get("digests", {}), "digests")
    references = _mapping(document.get("references", {}), "references")
    last_full_read = document.get("last_full_read")
    policy = document.get("policy")
    moved = document.get("moved_to")
    return Records(
        site=site,
        workspaces={str(n): _workspace_from(str(n), i, version) for n, i in workspaces.items()},
        groups={str(n): _group_from(str(n), i, version) for n, i in groups.items()},
        users={str(n): _user_from(str(n), i) for n, i in users.items()},
        applied_plans=tuple(str(c) for c in applied),
        pending=tuple(_mapping(p, "a pending write") for p in pending),  # type: ignore[misc]
        digests={str(key): str(value) for key, value in digests.items()},
        references={str(ref): _reference(found) for ref, found in references.items()},
        last_full_read=None if last_full_read is None else str(last_full_read),
        policy=None if policy is None else dict(_mapping(policy, "policy")),
        moved_to=None
        if moved is None
        else {str(k): str(v) for k, v in _mapping(moved, "moved_to").items()},
    )


def _reference(value: Any) -> tuple[int, str]:
    if not isinstance(value, list) or len(value) != 2:
        raise TypeError("a resolved reference must be [user ID, username]")
    return _integer(value[0], "a resolved user ID"), str(value[1])
